package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
)

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), FileName))
	we := wantCode(t, err, warden.ENotFound, "no policy file")
	if !strings.Contains(we.Hint, "warden init") {
		t.Errorf("hint = %q, want it to mention warden init", we.Hint)
	}
}

func TestLoadSetsPath(t *testing.T) {
	p := writeFile(t, DefaultFile())
	l, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if l.Path != p || len(l.Problems) != 0 {
		t.Errorf("Load(%s) = path %q, problems %v", p, l.Path, l.Problems)
	}
}

// A file that is unusable as a whole is an error, never a policy.
func TestParseUnusableFile(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"empty", "", "version is missing; supported versions: 1"},
		{"comments only", "# nothing\n", "version is missing"},
		{"no version", "safety: {}\n", "version is missing"},
		{"version 2", "version: 2\n", "version 2 is not supported; supported versions: 1"},
		{"version 0", "version: 0\nsafety: {}\n", "version 0 is not supported"},
		{"version string", "version: \"1\"\n", `version "1" (a string) is not supported`},
		{"version float", "version: 1.0\n", "version 1.0 (a number) is not supported"},
		{"version list", "version: [1]\n", "version a list is not supported"},
		{"version twice", "version: 1\nversion: 1\n", "version is defined twice, on lines 1 and 2"},
		{"syntax", "version: 1\nsafety: [\n", "is not valid YAML"},
		{"tab indent", "version: 1\nsafety:\n\tdailySpendCap: 1\n", "is not valid YAML"},
		{"list", "- version: 1\n", "must be a mapping of sections, not a list"},
		{"scalar", "hello\n", "must be a mapping of sections"},
		{"two documents", "version: 1\n---\nversion: 1\n", "warden.yaml:2: a second YAML document starts here"},
		{"undefined alias", "version: 1\nsafety: *nope\n", "is not valid YAML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Parse([]byte(tt.src))
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want an error", tt.src, l)
			}
			if l != nil {
				t.Errorf("Parse(%q) returned a policy with its error", tt.src)
			}
			we := wantCode(t, err, warden.EInvalid, tt.want)
			if we.Hint == "" {
				t.Errorf("Parse(%q) error has no hint", tt.src)
			}
		})
	}
}

func TestParseMinimalFileIsDefault(t *testing.T) {
	for _, src := range []string{"version: 1\n", "version: 1\nsafety:\ntools: ~\n", "version: 1\nsafety: {}\ntools: {}\n"} {
		l := mustParse(t, src)
		if len(l.Problems) != 0 {
			t.Errorf("Parse(%q) problems: %v", src, l.Problems)
		}
		checkPolicy(t, l.Policy)
		if l.Policy.Safety.DailySpendCap != Default().Safety.DailySpendCap || len(l.Policy.Tools.Tiers) != len(Default().Tools.Tiers) {
			t.Errorf("Parse(%q) = %+v, want the defaults", src, l.Policy)
		}
	}
}

func TestValidate(t *testing.T) {
	p := writeFile(t, []byte("version: 1\nsafety:\n  dailySpendCap: -1\nbogus: 2\n"))
	l, err := Validate(p)
	wantCode(t, err, warden.EInvalid, "warden.yaml has 3 problems")
	if l == nil || len(l.Problems) != 3 {
		t.Fatalf("Validate problems = %v, want 3", l)
	}
	if _, err := Validate(writeFile(t, DefaultFile())); err != nil {
		t.Errorf("Validate(default file) = %v", err)
	}
	if _, err := Validate(filepath.Join(t.TempDir(), "nope.yaml")); err == nil {
		t.Error("Validate(missing file) = nil error")
	}
}

func TestProblemError(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{Key: "safety.dailySpendCap", Line: 7, Message: "-5 is negative"}, "warden.yaml:7: safety.dailySpendCap: -5 is negative"},
		{Problem{Key: "tools", Message: "x"}, "warden.yaml: tools: x"},
		{Problem{Line: 2, Message: "x"}, "warden.yaml:2: x"},
	}
	for _, tt := range tests {
		if got := tt.p.Error(); got != tt.want {
			t.Errorf("Problem.Error() = %q, want %q", got, tt.want)
		}
	}
}

// testdata/load/*.yaml are data-driven cases. Header lines say what to expect:
//
//	# error: SUBSTRING            Parse fails with this in the message
//	# problem: KEY LINE SUBSTRING a problem at KEY on LINE containing SUBSTRING
//	# kill: true|false            the effective kill switch
//	# clean                       no problems at all
func TestLoadTestdata(t *testing.T) {
	files, _ := filepath.Glob("testdata/load/*.yaml")
	if len(files) == 0 {
		t.Fatal("no testdata/load files")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			l, perr := Parse(data)
			for line := range strings.Lines(string(data)) {
				directive, ok := strings.CutPrefix(strings.TrimSpace(line), "# ")
				if !ok {
					continue
				}
				name, arg, _ := strings.Cut(directive, ": ")
				switch name {
				case "error":
					if perr == nil || !strings.Contains(perr.Error(), arg) {
						t.Errorf("Parse error = %v, want one containing %q", perr, arg)
					}
				case "problem":
					if perr != nil {
						t.Fatalf("Parse error: %v", perr)
					}
					fields := strings.SplitN(arg, " ", 3)
					p := problemAt(t, l, fields[0])
					if itoa(p.Line) != fields[1] || !strings.Contains(p.Message, fields[2]) {
						t.Errorf("problem = %v, want line %s and %q", p, fields[1], fields[2])
					}
				case "kill":
					if perr != nil {
						t.Fatalf("Parse error: %v", perr)
					}
					if got := l.Policy.Safety.KillSwitch; itoaBool(got) != arg {
						t.Errorf("KillSwitch = %v, want %s", got, arg)
					}
				case "clean":
					if perr != nil || len(l.Problems) != 0 {
						t.Errorf("Parse = %v, %v; want no problems", perr, l.Problems)
					}
				}
			}
			if perr == nil {
				checkPolicy(t, l.Policy)
			}
		})
	}
}

func itoaBool(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
