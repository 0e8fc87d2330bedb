package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentwarden/warden"
)

// A Set on the default file changes exactly the line it sets: comments, order
// and blank lines between sections are kept.
func TestSetKeepsCommentsAndOrder(t *testing.T) {
	p := writeFile(t, DefaultFile())
	if err := SetKillSwitch(p, true); err != nil {
		t.Fatal(err)
	}
	got := readBytes(t, p)
	want := bytes.Replace(DefaultFile(), []byte("  killSwitchActive: false\n"), []byte("  killSwitchActive: true\n"), 1)
	if !bytes.Equal(got, want) {
		t.Errorf("after SetKillSwitch(true):\n%s\nwant:\n%s", got, want)
	}
	l, err := Load(p)
	if err != nil || !l.Policy.Safety.KillSwitch || len(l.Problems) != 0 {
		t.Fatalf("Load after SetKillSwitch = %v, %v", l, err)
	}
	if err := SetKillSwitch(p, false); err != nil {
		t.Fatal(err)
	}
	if got := readBytes(t, p); !bytes.Equal(got, DefaultFile()) {
		t.Errorf("kill switch on then off did not restore the default file:\n%s", got)
	}
}

func TestSetKeepsLineComment(t *testing.T) {
	p := writeFile(t, []byte("# mine\nversion: 1\nsafety:\n  # cap\n  dailySpendCap: 2000 # my cap\n  maxTransactionAmount: 5\n"))
	if err := Set(p, "safety.dailySpendCap", "100"); err != nil {
		t.Fatal(err)
	}
	want := "# mine\nversion: 1\n\nsafety:\n  # cap\n  dailySpendCap: 100 # my cap\n  maxTransactionAmount: 5\n"
	if got := string(readBytes(t, p)); got != want {
		t.Errorf("after Set:\n%s\nwant:\n%s", got, want)
	}
}

// A refused Set says what is allowed and leaves the file byte for byte as it was.
func TestSetRefuses(t *testing.T) {
	tests := []struct {
		name, key, value, want string
	}{
		{"negative cap", "safety.dailySpendCap", "-5", "cannot set safety.dailySpendCap: -5 is negative; want a USD amount >= 0"},
		{"unknown key", "safety.dailySpendCapp", "5", "did you mean safety.dailySpendCap?"},
		{"unknown section", "shellz.mode", "max", "unknown key shellz.mode"},
		{"bad sandbox mode", "sandbox.mode", "maximum", "not a sandbox mode; want one of off, light, standard, max"},
		{"wrong type", "safety.killSwitchActive", "maybe", `got "maybe" (a string); want true or false`},
		{"yes is not true", "safety.autopilotEnabled", "yes", `got "yes" (a string); want true or false`},
		{"tier out of range", "tools.tiers.foo", "7", "7 is not a tier; want 1, 2, 3 or 4"},
		{"tier zero", "tools.tiers.foo", "0", "0 is not a tier"},
		{"unkill lowered", "tools.tiers.unkill", "3", "cannot be lowered; want 4"},
		{"map as word", "tools.tiers", "high", `got "high" (a string); want a mapping of tool names to tiers`},
		{"map entry out of range", "tools.tiers", `{"a": 9}`, "tools.tiers.a: 9 is not a tier"},
		{"list as scalar", "safety.blockedTokens", "SQUID", `got "SQUID" (a string); want a list of token symbols`},
		{"bool in token list", "safety.blockedTokens", "[true]", "got true (true/false); want a token symbol"},
		{"token with space", "safety.allowedTokens", `["US DC"]`, "contains whitespace"},
		{"empty recipients", "tools.overrides", `[{"tool":"transfer_token","recipients":[],"tier":3}]`, "tools.overrides[0].recipients: empty list"},
		{"override missing tier", "tools.overrides", `[{"tool":"a"}]`, "tier is missing"},
		{"empty value", "safety.dailySpendCap", "", "the value is empty; want a USD amount"},
		{"blank value", "safety.dailySpendCap", "  ", "the value is empty"},
		{"bad YAML", "safety.blockedTokens", `["SQUID"`, "is not a scalar, or a JSON or YAML list or map"},
		{"two documents", "safety.dailySpendCap", "1\n---\n2", "more than one YAML document"},
		{"alias", "safety.blockedTokens", "[&a X, *a]", "aliases (*a) are not supported"},
		{"version", "version", "2", "cannot set version"},
		{"into a list", "tools.overrides.0.tier", "2", "tools.overrides is a list"},
		{"under a scalar", "safety.dailySpendCap.x", "2", "is a single value"},
		{"nan", "safety.dailySpendCap", ".nan", "is not a finite number"},
		{"whole section", "safety", `{"killSwitchActive": false}`, "cannot set safety as a whole; set its keys one by one, e.g. safety.maxTransactionAmount"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, DefaultFile())
			err := Set(p, tt.key, tt.value)
			wantCode(t, err, warden.EInvalid, tt.want)
			if got := readBytes(t, p); !bytes.Equal(got, DefaultFile()) {
				t.Errorf("Set(%q, %q) refused but changed the file:\n%s", tt.key, tt.value, got)
			}
			assertNoTemp(t, filepath.Dir(p))
		})
	}
}

func TestSetCreatesMissingMappings(t *testing.T) {
	for _, src := range []string{"version: 1\n", "version: 1\ntools:\n", "version: 1\ntools:\n  tiers: ~\n", "version: 1\ntools: {overrides: []}\n"} {
		p := writeFile(t, []byte(src))
		if err := Set(p, "tools.tiers.my_tool", "2"); err != nil {
			t.Fatalf("Set on %q: %v", src, err)
		}
		l, err := Load(p)
		if err != nil || len(l.Problems) != 0 {
			t.Fatalf("Load after Set on %q = %v, %v\n%s", src, l, err, readBytes(t, p))
		}
		if got := l.Policy.Tools.Tiers["my_tool"]; got != warden.TierConfirmOnce {
			t.Errorf("Set on %q: my_tool tier = %v, want 2\n%s", src, got, readBytes(t, p))
		}
	}
	p := writeFile(t, []byte("version: 1\n"))
	if err := Set(p, "tools.tiers.my_tool", "2"); err != nil {
		t.Fatal(err)
	}
	if got, want := string(readBytes(t, p)), "version: 1\n\ntools:\n  tiers:\n    my_tool: 2\n"; got != want {
		t.Errorf("file = %q, want %q", got, want)
	}
}

func TestSetValues(t *testing.T) {
	tests := []struct {
		name, key, value string
		line             string // a line the file must then hold
		get              string // FormatValue(Get(key)) afterwards
	}{
		{"JSON list", "safety.blockedTokens", `["SQUID","FOO"]`, "  blockedTokens: [SQUID, FOO]\n", `["SQUID","FOO"]`},
		{"YAML list", "safety.allowedTokens", "[usdc, eth]", "  allowedTokens: [usdc, eth]\n", `["USDC","ETH"]`},
		{"empty list", "safety.blockedTokens", "[]", "  blockedTokens: []\n", `[]`},
		{"quoted string that reads as a bool", "safety.allowedTokens", `["true"]`, `  allowedTokens: ["true"]` + "\n", `["TRUE"]`},
		{"number", "safety.maxTransactionAmount", "12.50", "  maxTransactionAmount: 12.50\n", "12.5"},
		{"zero cap", "safety.dailySpendCap", "0", "  dailySpendCap: 0\n", "0"},
		{"bool", "safety.autopilotEnabled", "true", "  autopilotEnabled: true\n", "true"},
		{"map entry", "tools.tiers.my_tool", "2", "    my_tool: 2\n", "2"},
		{"map entry replaced", "tools.tiers.write_file", "4", "    write_file: 4 # default 3\n", "4"},
		{"dotted tool name", "tools.tiers.mcp.github.create_issue", "3", "    mcp.github.create_issue: 3\n", "3"},
		{"numeric tool name", "tools.tiers.123", "1", "    \"123\": 1\n", "1"},
		{"JSON map", "tools.tiers", `{"a":1}`, "  tiers:\n    a: 1\n", ""},
		{"JSON list of maps", "tools.overrides", `[{"tool":"transfer_token","recipients":["0xabc"],"tier":3}]`, "    - tool: transfer_token\n      recipients: [\"0xabc\"]\n      tier: 3\n", `[{"recipients":["0xabc"],"tier":3,"tool":"transfer_token"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, DefaultFile())
			if err := Set(p, tt.key, tt.value); err != nil {
				t.Fatalf("Set(%q, %q) = %v", tt.key, tt.value, err)
			}
			text := string(readBytes(t, p))
			if !strings.Contains(text, tt.line) {
				t.Errorf("file lacks %q:\n%s", tt.line, text)
			}
			l, err := Load(p)
			if err != nil || len(l.Problems) != 0 {
				t.Fatalf("Load after Set = %v, %v", l, err)
			}
			if tt.get != "" {
				v, err := l.Get(tt.key)
				if got := FormatValue(v); err != nil || got != tt.get {
					t.Errorf("Get(%q) = %s, %v; want %s", tt.key, got, err, tt.get)
				}
			}
			if !strings.Contains(text, "# Emergency stop: while true") {
				t.Errorf("comments lost:\n%s", text)
			}
		})
	}
}

func TestSetMapIsLaidOverDefaults(t *testing.T) {
	p := writeFile(t, DefaultFile())
	if err := Set(p, "tools.tiers", `{"a":1}`); err != nil {
		t.Fatal(err)
	}
	l, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if l.Policy.Tools.Tiers["a"] != 1 || l.Policy.Tools.Tiers["unkill"] != 4 || l.Policy.Tools.Tiers["get_price"] != 1 {
		t.Errorf("tiers = %v, want a=1 over the default tiers", l.Policy.Tools.Tiers)
	}
}

func TestSetWritesMode0600(t *testing.T) {
	p := writeFile(t, DefaultFile())
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Set(p, "safety.dailySpendCap", "10"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	assertNoTemp(t, filepath.Dir(p))
}

func TestSetMissingOrUnusableFile(t *testing.T) {
	err := Set(filepath.Join(t.TempDir(), FileName), "safety.dailySpendCap", "1")
	we := wantCode(t, err, warden.ENotFound, "no policy file")
	if !strings.Contains(we.Hint, "warden init") {
		t.Errorf("hint = %q", we.Hint)
	}
	for _, src := range []string{"version: 1\nsafety: [\n", "version: 2\n", "safety: {}\n"} {
		p := writeFile(t, []byte(src))
		err := Set(p, "safety.dailySpendCap", "1")
		wantCode(t, err, warden.EInvalid, "cannot set safety.dailySpendCap: ")
		if got := string(readBytes(t, p)); got != src {
			t.Errorf("unusable file changed to %q", got)
		}
	}
}

// When the section already has problems, Set refuses a value warden would
// ignore, but allows a change that fixes a problem, and always allows turning
// the kill switch on (an invalid safety section keeps it on).
func TestSetOnInvalidSection(t *testing.T) {
	const src = "version: 1\nsafety:\n  dailySpendCap: -5\n  maxTransactionAmount: -1\n"
	p := writeFile(t, []byte(src))

	err := Set(p, "safety.autopilotEnabled", "true")
	wantCode(t, err, warden.EInvalid, "the safety section has other problems")
	err = Set(p, "safety.blockedTokens", "[X]")
	we := wantCode(t, err, warden.EInvalid, "warden.yaml:3: safety.dailySpendCap: -5 is negative")
	if !strings.Contains(we.Hint, "was not changed") {
		t.Errorf("hint = %q", we.Hint)
	}
	if got := string(readBytes(t, p)); got != src {
		t.Fatalf("refused Set changed the file to %q", got)
	}

	if err := SetKillSwitch(p, true); err != nil {
		t.Fatalf("SetKillSwitch(true) on an invalid section = %v", err)
	}
	l, _ := Load(p)
	if !l.Policy.Safety.KillSwitch {
		t.Fatal("kill switch is off after SetKillSwitch(true)")
	}
	if err := SetKillSwitch(p, false); err != nil {
		t.Fatalf("SetKillSwitch(false) on an invalid section = %v", err)
	}
	// Setting a value equal to what warden uses anyway is harmless.
	if err := Set(p, "safety.autopilotEnabled", "false"); err != nil {
		t.Fatalf("Set of the effective value = %v", err)
	}

	if err := Set(p, "safety.dailySpendCap", "5"); err != nil {
		t.Fatalf("fixing one of two problems = %v", err)
	}
	if err := Set(p, "safety.maxTransactionAmount", "5"); err != nil {
		t.Fatalf("fixing the last problem = %v", err)
	}
	l, err = Load(p)
	if err != nil || len(l.Problems) != 0 || l.Policy.Safety.DailySpendCap != 5*warden.MicrosPerDollar {
		t.Fatalf("after fixes: %v, %v", l, err)
	}
}

func TestSetKillSwitchOffRefusedWhenFileStillTurnsItOn(t *testing.T) {
	const src = "version: 1\nsafety:\n  killSwitchActive: true\n  kill_switch_active: true\n"
	p := writeFile(t, []byte(src))
	err := SetKillSwitch(p, false)
	wantCode(t, err, warden.EInvalid, "safety.kill_switch_active: unknown key")
	if got := string(readBytes(t, p)); got != src {
		t.Errorf("file changed to %q", got)
	}
}

func TestSetSameValueLeavesFileAlone(t *testing.T) {
	p := writeFile(t, DefaultFile())
	before, _ := os.Stat(p)
	if err := Set(p, "safety.dailySpendCap", "2000"); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(p)
	if !os.SameFile(before, after) {
		t.Error("Set of the current value rewrote the file")
	}
}

// assertNoTemp fails if WriteAtomic left a temporary file in dir.
func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

// TestConcurrentSetsLoseNothing runs many Sets of different keys at once; with
// the file lock every one of them must be in the final file.
func TestConcurrentSetsLoseNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	if err := WriteAtomic(path, DefaultFile(), FileMode); err != nil {
		t.Fatal(err)
	}
	const n = 24
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- Set(path, fmt.Sprintf("tools.tiers.tool_%d", i), "2")
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	l, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if got := l.Policy.Tools.Tiers[fmt.Sprintf("tool_%d", i)]; got != 2 {
			t.Errorf("tools.tiers.tool_%d = %v after concurrent sets, want 2 (an update was lost)", i, got)
		}
	}
}
