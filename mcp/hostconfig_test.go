package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const hostFile = `{
  "theme": "dark",
  "mcpServers": {
    "fs": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/project"],
      "env": {"DEBUG": "1"}
    },
    "remote": {"type": "http", "url": "https://mcp.example.com/mcp"},
    "authed": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer x"}},
    "old": {"type": "sse", "url": "https://mcp.example.com/sse"},
    "bad__name": {"command": "x"}
  },
  "zzz": [1, 2, 3]
}
`

func servers(t *testing.T, path string) map[string]map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s is not valid JSON after the rewrite: %v\n%s", path, err, b)
	}
	return f.MCPServers
}

func TestWrapHostConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".mcp.json")
	if err := os.WriteFile(path, []byte(hostFile), 0o644); err != nil {
		t.Fatal(err)
	}
	before := servers(t, path)
	prefix := []string{"/usr/local/bin/warden", "--home", "/h"}
	res, err := WrapHostConfig(path, prefix, "url", false)
	if err != nil || !res.Changed || res.Backup == "" {
		t.Fatalf("WrapHostConfig = %+v, %v; want a change with a backup", res, err)
	}
	got := servers(t, path)
	wantFS := []any{"--home", "/h", "mcp", "--name", "fs", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/me/project"}
	if got["fs"]["command"] != "/usr/local/bin/warden" || !reflect.DeepEqual(got["fs"]["args"], wantFS) || got["fs"]["env"] == nil {
		t.Errorf("fs = %v; want warden mcp in front of the server, its env kept", got["fs"])
	}
	if !reflect.DeepEqual(got["remote"]["args"], []any{"--home", "/h", "mcp", "--name", "remote", "--upstream", "https://mcp.example.com/mcp"}) || got["remote"]["url"] != nil {
		t.Errorf("remote = %v; want warden mcp --upstream URL", got["remote"])
	}
	for _, name := range []string{"authed", "old", "bad__name"} {
		if !reflect.DeepEqual(got[name], before[name]) {
			t.Errorf("%s = %v; want it left as it was (skipped)", name, got[name])
		}
	}
	actions := map[string]string{}
	for _, s := range res.Servers {
		actions[s.Name] = s.Action
	}
	if want := map[string]string{"fs": "wrapped", "remote": "wrapped", "authed": "skipped", "old": "skipped", "bad__name": "skipped"}; !reflect.DeepEqual(actions, want) {
		t.Errorf("actions = %v, want %v", actions, want)
	}
	data, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(data), "{\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"fs\": {") || !strings.HasSuffix(string(data), "  },\n  \"zzz\": [1, 2, 3]\n}\n") {
		t.Errorf("the rest of the file changed:\n%s", data)
	}

	// Again: nothing to change.
	if res, err := WrapHostConfig(path, prefix, "url", false); err != nil || res.Changed {
		t.Errorf("a second wrap = %+v, %v; want no change", res, err)
	}
	// Undone: the servers as they were.
	if res, err := WrapHostConfig(path, prefix, "url", true); err != nil || !res.Changed {
		t.Fatalf("unwrap = %+v, %v", res, err)
	}
	if got := servers(t, path); !reflect.DeepEqual(got, before) {
		t.Errorf("after unwrap the servers are %v, want %v", got, before)
	}
}

func TestWrapHostConfigRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"not json":   `{"mcpServers": {`,
		"not object": `{"mcpServers": [1]}`,
		"twice":      `{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`,
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		os.WriteFile(path, []byte(content), 0o644)
		if _, err := WrapHostConfig(path, []string{"warden"}, "url", false); err == nil {
			t.Errorf("%s: no error", name)
		}
		if b, _ := os.ReadFile(path); string(b) != content {
			t.Errorf("%s: the file was changed", name)
		}
	}
	if res, err := WrapHostConfig(filepath.Join(dir, "missing.json"), []string{"warden"}, "url", false); err != nil || res.Changed {
		t.Errorf("a missing file = %+v, %v; want nothing to change", res, err)
	}
}

// FuzzWrapHostConfig: any file is refused unchanged or rewritten to valid
// JSON, and wrapping then unwrapping gives back the servers.
func FuzzWrapHostConfig(f *testing.F) {
	f.Add([]byte(hostFile))
	f.Add([]byte(`{"mcpServers":{"a":{"command":"warden","args":["mcp","--name","a","--"]}}}`))
	f.Add([]byte(`{"mcpServers":{}} `))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "c.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := WrapHostConfig(path, []string{"warden"}, "url", false)
		after, _ := os.ReadFile(path)
		if err != nil || !res.Changed {
			if string(after) != string(data) {
				t.Fatalf("unchanged result %+v, %v but the file changed", res, err)
			}
			return
		}
		if !json.Valid(after) {
			t.Fatalf("wrapped file is not valid JSON:\n%s", after)
		}
		var before, back struct {
			S map[string]json.RawMessage `json:"mcpServers"`
		}
		_ = json.Unmarshal(data, &before)
		if _, err := WrapHostConfig(path, []string{"warden"}, "url", true); err != nil {
			t.Fatalf("unwrap: %v", err)
		}
		restored, _ := os.ReadFile(path)
		if err := json.Unmarshal(restored, &back); err != nil {
			t.Fatalf("unwrapped file: %v", err)
		}
		for _, s := range res.Servers {
			if s.Action != "wrapped" {
				continue
			}
			var a, b any
			json.Unmarshal(before.S[s.Name], &a)
			json.Unmarshal(back.S[s.Name], &b)
			if am, ok := a.(map[string]any); ok {
				if am["type"] == nil && am["url"] != nil {
					am["type"] = "http" // an http server comes back typed
				}
				if l, ok := am["args"].([]any); ok && len(l) == 0 {
					delete(am, "args") // no arguments come back as none
				}
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("server %s: %v wrapped and unwrapped is %v", s.Name, a, b)
			}
		}
	})
}

// TestWrapHostConfigThroughASymlink: a config file that is a symlink (a
// dotfiles checkout) is rewritten where it points, the link kept: the
// rename used to put a plain file in the link's place, leaving the user's
// own file untouched and the link gone.
func TestWrapHostConfigThroughASymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "claude.json")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte(hostFile), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, ".claude.json")
	if err := os.Symlink(filepath.Join("dotfiles", "claude.json"), link); err != nil {
		t.Fatal(err)
	}
	res, err := WrapHostConfig(link, []string{"/usr/local/bin/warden"}, "url", false)
	if err != nil || !res.Changed {
		t.Fatalf("WrapHostConfig = %+v, %v; want a change", res, err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symlink (%v)", link, err)
	}
	if got := servers(t, real); got["fs"]["command"] != "/usr/local/bin/warden" {
		t.Errorf("the file the link points to has fs = %v; want it wrapped", got["fs"])
	}
	if fi, err := os.Stat(real); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the file's mode = %v (%v); want 0600 kept", fi.Mode(), err)
	}
	if _, err := os.Stat(res.Backup); err != nil {
		t.Errorf("backup %s: %v", res.Backup, err)
	}
}
