package hook

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

const wardenBin = "/usr/local/bin/warden"

// freshWant is the file a fresh install writes, per host.
var freshWant = map[string]string{
	"claude": `{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/warden hook claude",
            "onFailure": "block"
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/warden hook claude"
          }
        ]
      }
    ],
    "PostToolUseFailure": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/warden hook claude"
          }
        ]
      }
    ],
    "SessionEnd": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/warden hook claude"
          }
        ]
      }
    ]
  }
}
`,
	"codex": `{
  "hooks": {
    "PreToolUse": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/warden hook codex"
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/warden hook codex"
          }
        ]
      }
    ]
  }
}
`,
	"gemini": `{
  "hooks": {
    "BeforeTool": [
      {
        "matcher": ".*",
        "hooks": [
          {
            "name": "warden",
            "type": "command",
            "command": "/usr/local/bin/warden hook gemini",
            "timeout": 60000
          }
        ]
      }
    ],
    "AfterTool": [
      {
        "matcher": ".*",
        "hooks": [
          {
            "name": "warden",
            "type": "command",
            "command": "/usr/local/bin/warden hook gemini",
            "timeout": 60000
          }
        ]
      }
    ]
  }
}
`,
	"cursor": `{
  "hooks": {
    "beforeShellExecution": [
      {
        "command": "/usr/local/bin/warden hook cursor"
      }
    ],
    "beforeMCPExecution": [
      {
        "command": "/usr/local/bin/warden hook cursor"
      }
    ],
    "beforeReadFile": [
      {
        "command": "/usr/local/bin/warden hook cursor"
      }
    ]
  },
  "version": 1
}
`,
}

// existing is a settings file with unknown keys and another tool's hooks,
// per host.
var existing = map[string]string{
	"claude": `{
  "model": "opus",
  "permissions": {"allow": ["Bash(git status)"], "deny": ["Read(./.env)"]},
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint-hook pre", "timeout": 30}]}],
    "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "audit-log post"}]}]
  },
  "zzz_unknown": {"nested": [1, 2.50, "x<y"]}
}
`,
	"codex": `{"hooks": {"PreToolUse": [{"matcher": "apply_patch", "hooks": [{"type": "command", "command": "fmt-check"}]}], "Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}, "other": true}
`,
	"gemini": `{
  "theme": "GitHub",
  "general": {"vimMode": true},
  "hooks": {"enabled": true, "BeforeTool": [{"matcher": "write_file", "hooks": [{"name": "fmt", "type": "command", "command": "fmt-gate", "timeout": 5000}]}]}
}
`,
	"cursor": `{"version": 1, "hooks": {"beforeShellExecution": [{"command": "./hooks/gate.sh"}], "afterFileEdit": [{"command": "./hooks/audit.sh"}]}}
`,
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// decoded parses JSON for a comparison that ignores layout.
func decoded(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return v
}

func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestInstallFresh(t *testing.T) {
	for _, host := range HostNames() {
		t.Run(host, func(t *testing.T) {
			project := t.TempDir()
			res, err := Install(host, Project, project, "", wardenBin, "")
			if err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(project, settings[host].dir, settings[host].file)
			if res.Path != want || !res.Changed || res.Backup != "" || res.Command != wardenBin+" hook "+host {
				t.Errorf("Install(%s) = %+v, want a fresh write of %s", host, res, want)
			}
			if got := string(readFile(t, want)); got != freshWant[host] {
				t.Errorf("Install(%s) wrote\n%s\nwant\n%s", host, got, freshWant[host])
			}

			again, err := Install(host, Project, project, "", wardenBin, "")
			if err != nil || again.Changed || again.Backup != "" {
				t.Errorf("second Install(%s) = %+v, %v; want unchanged", host, again, err)
			}
			if got := string(readFile(t, want)); got != freshWant[host] {
				t.Errorf("second Install(%s) changed the file:\n%s", host, got)
			}
		})
	}
}

func TestInstallUserScope(t *testing.T) {
	home := t.TempDir()
	res, err := Install("claude", User, "", home, wardenBin, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(home, ".claude", "settings.json"); res.Path != want {
		t.Errorf("Install(claude, User) path = %s, want %s", res.Path, want)
	}
	info, err := os.Stat(filepath.Dir(res.Path))
	if err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("user settings directory mode = %v, %v; want 0700", info.Mode().Perm(), err)
	}
}

func TestInstallKeepsEverythingElse(t *testing.T) {
	for _, host := range HostNames() {
		t.Run(host, func(t *testing.T) {
			now = func() time.Time { return time.Date(2026, 11, 21, 20, 0, 0, 0, time.UTC) }
			t.Cleanup(func() { now = time.Now })
			project := t.TempDir()
			path := filepath.Join(project, settings[host].dir, settings[host].file)
			writeFile(t, path, existing[host])

			res, err := Install(host, Project, project, "", wardenBin, "")
			if err != nil {
				t.Fatal(err)
			}
			if !res.Changed || res.Backup != path+".warden-backup-20261121T200000Z" {
				t.Errorf("Install(%s) = %+v, want a change with a timestamped backup", host, res)
			}
			if got := string(readFile(t, res.Backup)); got != existing[host] {
				t.Errorf("backup = %q, want the previous file", got)
			}
			after := readFile(t, path)
			t.Logf("after Install:\n%s", after)
			if !strings.Contains(string(after), "x<y") && host == "claude" {
				t.Errorf("Install escaped or lost a value:\n%s", after)
			}
			checkKept(t, host, decoded(t, []byte(existing[host])), decoded(t, after))

			again, err := Install(host, Project, project, "", wardenBin, "")
			if err != nil || again.Changed {
				t.Errorf("second Install(%s) = %+v, %v; want unchanged", host, again, err)
			}

			un, err := Uninstall(host, Project, project, "")
			if err != nil {
				t.Fatal(err)
			}
			if !un.Changed || un.Command != wardenBin+" hook "+host || un.Backup == "" || un.Backup == res.Backup {
				t.Errorf("Uninstall(%s) = %+v, want a change with its own backup", host, un)
			}
			if got, want := decoded(t, readFile(t, path)), decoded(t, []byte(existing[host])); !reflect.DeepEqual(got, want) {
				t.Errorf("Uninstall(%s) left\n%v\nwant the original\n%v", host, got, want)
			}
			if un2, err := Uninstall(host, Project, project, ""); err != nil || un2.Changed {
				t.Errorf("second Uninstall(%s) = %+v, %v; want unchanged", host, un2, err)
			}
		})
	}
}

// checkKept asserts every top-level key of before is in after with the same
// value, except hooks, where every event's previous entries come first.
func checkKept(t *testing.T, host string, before, after any) {
	t.Helper()
	b, a := before.(map[string]any), after.(map[string]any)
	for k, v := range b {
		if k == "hooks" {
			continue
		}
		if !reflect.DeepEqual(a[k], v) {
			t.Errorf("Install(%s) changed %s: %v, want %v", host, k, a[k], v)
		}
	}
	bh, ah := b["hooks"].(map[string]any), a["hooks"].(map[string]any)
	for ev, list := range bh {
		want, isList := list.([]any)
		if !isList {
			if !reflect.DeepEqual(ah[ev], list) {
				t.Errorf("Install(%s) changed hooks.%s: %v, want %v", host, ev, ah[ev], list)
			}
			continue
		}
		got, _ := ah[ev].([]any)
		if len(got) < len(want) || !reflect.DeepEqual(got[:len(want)], want) {
			t.Errorf("Install(%s) changed the existing %s hooks: %v", host, ev, got)
		}
	}
	for _, ev := range settings[host].events {
		list, _ := ah[ev].([]any)
		if len(list) == 0 || !strings.Contains(mustString(list[len(list)-1]), "warden hook "+host) {
			t.Errorf("Install(%s) did not append warden to %s: %v", host, ev, list)
		}
	}
}

func mustString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestInstallReplacesAnOldCommand(t *testing.T) {
	project := t.TempDir()
	path := filepath.Join(project, ".claude", "settings.json")
	writeFile(t, path, `{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"/old/warden hook claude"},{"type":"command","command":"other"}]}]}}`)
	if _, err := Install("claude", Project, project, "", "/opt/my tools/warden", ""); err != nil {
		t.Fatal(err)
	}
	got := string(readFile(t, path))
	// One warden entry per event: PreToolUse, PostToolUse,
	// PostToolUseFailure and SessionEnd.
	if strings.Contains(got, "/old/warden") || strings.Count(got, "hook claude") != 4 || !strings.Contains(got, `"other"`) {
		t.Errorf("Install did not replace exactly the old warden entry:\n%s", got)
	}
	if !strings.Contains(got, `"'/opt/my tools/warden' hook claude"`) {
		t.Errorf("Install did not quote a path with a space:\n%s", got)
	}
	res, err := Uninstall("claude", Project, project, "")
	if err != nil || !res.Changed {
		t.Fatalf("Uninstall = %+v, %v", res, err)
	}
	if got := string(readFile(t, path)); strings.Contains(got, "warden") || !strings.Contains(got, `"other"`) {
		t.Errorf("Uninstall left\n%s", got)
	}
}

// TestInstallTellsClaudeToBlockOnFailure: Claude Code lets a tool call
// through when its PreToolUse hook fails (killed, timed out, any exit but 2)
// unless the entry says onFailure "block". A re-install upgrades an entry an
// older warden wrote without it.
func TestInstallTellsClaudeToBlockOnFailure(t *testing.T) {
	project := t.TempDir()
	path := filepath.Join(project, ".claude", "settings.json")
	old := `{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"/usr/local/bin/warden hook claude"}]}],` +
		`"PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"/usr/local/bin/warden hook claude"}]}],` +
		`"SessionEnd":[{"matcher":"*","hooks":[{"type":"command","command":"/usr/local/bin/warden hook claude"}]}]}}`
	writeFile(t, path, old)
	res, err := Install("claude", Project, project, "", wardenBin, "")
	if err != nil || !res.Changed {
		t.Fatalf("Install over an entry without onFailure = %+v, %v; want it changed", res, err)
	}
	var got struct {
		Hooks map[string][]struct {
			Hooks []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(readFile(t, path), &got); err != nil {
		t.Fatal(err)
	}
	for ev, want := range map[string]any{"PreToolUse": "block", "PostToolUse": nil, "PostToolUseFailure": nil, "SessionEnd": nil} {
		groups := got.Hooks[ev]
		if len(groups) != 1 || len(groups[0].Hooks) != 1 {
			t.Fatalf("%s: %+v; want one warden entry", ev, groups)
		}
		if v := groups[0].Hooks[0]["onFailure"]; v != want {
			t.Errorf("%s's onFailure = %v; want %v", ev, v, want)
		}
	}
}

// TestInstallNamesTheHome: a home other than the default is named in the
// hook command (quoted), and uninstall still finds the entries.
func TestInstallNamesTheHome(t *testing.T) {
	project := t.TempDir()
	path := filepath.Join(project, ".claude", "settings.json")
	if _, err := Install("claude", Project, project, "", wardenBin, "/srv/agent homes/w"); err != nil {
		t.Fatal(err)
	}
	want := `"` + wardenBin + ` hook claude --home '/srv/agent homes/w'"`
	if got := string(readFile(t, path)); strings.Count(got, want) != 4 {
		t.Fatalf("Install wrote\n%s\nwant the command %s for PreToolUse, PostToolUse, PostToolUseFailure and SessionEnd", got, want)
	}
	res, err := Uninstall("claude", Project, project, "")
	if err != nil || !res.Changed {
		t.Fatalf("Uninstall = %+v, %v", res, err)
	}
	if got := string(readFile(t, path)); strings.Contains(got, "warden") {
		t.Errorf("Uninstall left\n%s", got)
	}
}

// TestInstallWithTheFastClient: warden-exec starts the command when it is
// given; the entry is warden's all the same (replaced, found, removed).
func TestInstallWithTheFastClient(t *testing.T) {
	project := t.TempDir()
	path := filepath.Join(project, ".claude", "settings.json")
	if _, err := Install("claude", Project, project, "", wardenBin, ""); err != nil {
		t.Fatal(err)
	}
	client := filepath.Join(filepath.Dir(wardenBin), "warden-exec")
	res, err := InstallFast("claude", Project, project, "", client, wardenBin, "/srv/w")
	if err != nil || !res.Changed {
		t.Fatalf("InstallFast = %+v, %v", res, err)
	}
	want := `"` + client + ` ` + wardenBin + ` hook claude --home /srv/w"`
	got := string(readFile(t, path))
	if strings.Count(got, want) != 4 || strings.Count(got, "hook claude") != 4 {
		t.Fatalf("InstallFast wrote\n%s\nwant only the command %s, for PreToolUse, PostToolUse, PostToolUseFailure and SessionEnd", got, want)
	}
	if ok, _ := Installed("claude", Project, project, ""); !ok {
		t.Error("Installed does not find the entry")
	}
	if res, err := Uninstall("claude", Project, project, ""); err != nil || !res.Changed {
		t.Fatalf("Uninstall = %+v, %v", res, err)
	}
	if got := string(readFile(t, path)); strings.Contains(got, "warden") {
		t.Errorf("Uninstall left\n%s", got)
	}
}

func TestMalformedSettingsAreRefusedUntouched(t *testing.T) {
	cases := []struct{ name, host, data string }{
		{"not JSON", "claude", `{"hooks": {`},
		{"trailing data", "codex", `{} {}`},
		{"an array", "gemini", `[]`},
		{"duplicate key", "claude", `{"hooks": {}, "hooks": {}}`},
		{"hooks not an object", "cursor", `{"version": 1, "hooks": []}`},
		{"event not a list", "claude", `{"hooks": {"PreToolUse": {"matcher": "*"}}}`},
		{"cursor event not a list", "cursor", `{"hooks": {"beforeReadFile": "x"}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			project := t.TempDir()
			path := filepath.Join(project, settings[c.host].dir, settings[c.host].file)
			writeFile(t, path, c.data)
			for op, f := range map[string]func() (InstallResult, error){
				"Install":   func() (InstallResult, error) { return Install(c.host, Project, project, "", wardenBin, "") },
				"Uninstall": func() (InstallResult, error) { return Uninstall(c.host, Project, project, "") },
			} {
				res, err := f()
				var we *warden.Error
				if op == "Uninstall" && err == nil && !res.Changed {
					continue // nothing of warden's to remove is not an error
				}
				if !errors.As(err, &we) || we.Code != warden.EInvalid || res.Changed {
					t.Errorf("%s(%s, %q) = %+v, %v; want a *warden.Error", op, c.host, c.data, res, err)
				}
				if got := string(readFile(t, path)); got != c.data {
					t.Errorf("%s changed a malformed file to %q", op, got)
				}
				if names := dirEntries(t, filepath.Dir(path)); len(names) != 1 {
					t.Errorf("%s left files beside a malformed one: %v", op, names)
				}
			}
		})
	}
}

func TestInstallErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		f    func() (InstallResult, error)
	}{
		{"unknown host", func() (InstallResult, error) { return Install("vim", Project, dir, "", wardenBin, "") }},
		{"no project", func() (InstallResult, error) { return Install("claude", Project, "", dir, wardenBin, "") }},
		{"no home", func() (InstallResult, error) { return Install("claude", User, dir, "", wardenBin, "") }},
		{"bad scope", func() (InstallResult, error) { return Install("claude", Scope(7), dir, dir, wardenBin, "") }},
		{"no binary", func() (InstallResult, error) { return Install("claude", Project, dir, "", "", "") }},
		{"binary not named warden", func() (InstallResult, error) { return Install("claude", Project, dir, "", "/usr/bin/gate", "") }},
		{"newline in path", func() (InstallResult, error) { return Install("claude", Project, dir, "", "/x\n/warden", "") }},
		{"newline in home", func() (InstallResult, error) { return Install("claude", Project, dir, "", wardenBin, "/h\nx") }},
		{"uninstall unknown host", func() (InstallResult, error) { return Uninstall("vim", Project, dir, "") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := c.f()
			var we *warden.Error
			if !errors.As(err, &we) || res.Changed {
				t.Errorf("= %+v, %v; want a *warden.Error", res, err)
			}
		})
	}
	if names := dirEntries(t, dir); len(names) != 0 {
		t.Errorf("failed installs wrote %v", names)
	}
}

func TestUninstallMissingFile(t *testing.T) {
	project := t.TempDir()
	res, err := Uninstall("gemini", Project, project, "")
	if err != nil || res.Changed {
		t.Errorf("Uninstall with no file = %+v, %v; want nothing done", res, err)
	}
	if names := dirEntries(t, project); len(names) != 0 {
		t.Errorf("Uninstall created %v", names)
	}
}

func TestInstallFollowsASymlink(t *testing.T) {
	project := t.TempDir()
	real := filepath.Join(t.TempDir(), "dotfiles-settings.json")
	writeFile(t, real, `{"model":"opus"}`)
	link := filepath.Join(project, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	if _, err := Install("claude", Project, project, "", wardenBin, ""); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("Install replaced the link: %v", err)
	}
	if got := string(readFile(t, real)); !strings.Contains(got, "warden hook claude") || !strings.Contains(got, "opus") {
		t.Errorf("the link's target is\n%s", got)
	}
}

func TestHookCommand(t *testing.T) {
	cases := []struct {
		command, host string
		want          bool
	}{
		{"/usr/local/bin/warden hook claude", "claude", true},
		{"warden hook claude", "claude", true},
		{"'/opt/my tools/warden' hook codex", "codex", true},
		{`"C:\Program Files\warden.exe" hook cursor`, "cursor", true},
		{"warden hook claude --verbose", "claude", true},
		{"warden hook claudex", "claude", false},
		{"warden hook codex", "claude", false},
		{"lint-hook pre", "claude", false},
		{"", "claude", false},
	}
	for _, c := range cases {
		if got := hookCommand(c.command, c.host); got != c.want {
			t.Errorf("hookCommand(%q, %q) = %v, want %v", c.command, c.host, got, c.want)
		}
	}
}

func TestScopeZeroIsProject(t *testing.T) {
	var s Scope
	if s != Project || s.String() != "project" || User.String() != "user" {
		t.Errorf("Scope zero value = %v, want project", s)
	}
}
