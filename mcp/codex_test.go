package mcp

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

var codexPrefix = []string{"/usr/local/bin/warden", "--home", "/h"}

// codexServers decodes the mcp_servers table of a config.toml.
func codexServers(t *testing.T, data []byte) map[string]map[string]any {
	t.Helper()
	var f struct {
		S map[string]map[string]any `toml:"mcp_servers"`
	}
	if err := toml.Unmarshal(data, &f); err != nil {
		t.Fatalf("not valid TOML: %v\n%s", err, data)
	}
	return f.S
}

func TestRewriteCodexConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		want    string // the wrapped file, exactly
		actions map[string]string
	}{
		{
			name: "table with comments",
			in: `# my codex config
model = "o3" # the model

[mcp_servers.fs]
# the files server
command = "npx"   # run with npx
args = ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/p"]

[mcp_servers.fs.env]
DEBUG = "1" # keep me

[profiles.x]
model = "gpt"
`,
			want: `# my codex config
model = "o3" # the model

[mcp_servers.fs]
# the files server
command = "/usr/local/bin/warden"   # run with npx
args = ["--home", "/h", "mcp", "--name", "fs", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/me/p"]

[mcp_servers.fs.env]
DEBUG = "1" # keep me

[profiles.x]
model = "gpt"
`,
			actions: map[string]string{"fs": "wrapped"},
		},
		{
			name: "multi-line array with comments",
			in: `[mcp_servers.fs]
args = [
  # first the flag
  "-y",
  '@modelcontextprotocol/server-filesystem', # literal string
]
command = 'npx'
env = { DEBUG = "1" }
`,
			want: `[mcp_servers.fs]
args = ["--home", "/h", "mcp", "--name", "fs", "--", 'npx', 
  # first the flag
  "-y",
  '@modelcontextprotocol/server-filesystem', # literal string
]
command = "/usr/local/bin/warden"
env = { DEBUG = "1" }
`,
			actions: map[string]string{"fs": "wrapped"},
		},
		{
			name:    "no args, indented",
			in:      "[mcp_servers.tiny]\n  command = \"my-server\" # alone\n  startup_timeout_sec = 20\n",
			want:    "[mcp_servers.tiny]\n  command = \"/usr/local/bin/warden\"\n  args = [\"--home\", \"/h\", \"mcp\", \"--name\", \"tiny\", \"--\", \"my-server\"] # alone\n  startup_timeout_sec = 20\n",
			actions: map[string]string{"tiny": "wrapped"},
		},
		{
			name:    "empty args",
			in:      "[mcp_servers.e]\ncommand = \"srv\"\nargs = []\n",
			want:    "[mcp_servers.e]\ncommand = \"/usr/local/bin/warden\"\nargs = [\"--home\", \"/h\", \"mcp\", \"--name\", \"e\", \"--\", \"srv\", ]\n",
			actions: map[string]string{"e": "wrapped"},
		},
		{
			name: "inline tables",
			in: `[mcp_servers]
fs = { command = "npx", args = ["-y", "srv"], env = { A = "b" } }
bare = {command="x"}
web = { url = "https://mcp.example.com/mcp", enabled = true }
`,
			want: `[mcp_servers]
fs = { command = "/usr/local/bin/warden", args = ["--home", "/h", "mcp", "--name", "fs", "--", "npx", "-y", "srv"], env = { A = "b" } }
bare = {command="/usr/local/bin/warden", args=["--home", "/h", "mcp", "--name", "bare", "--", "x"]}
web = { command = "/usr/local/bin/warden", args = ["--home", "/h", "mcp", "--name", "web", "--upstream", "https://mcp.example.com/mcp"], enabled = true }
`,
			actions: map[string]string{"fs": "wrapped", "bare": "wrapped", "web": "wrapped"},
		},
		{
			name:    "dotted keys",
			in:      "mcp_servers.d.command = \"srv\"\nmcp_servers.d.env.X = \"1\"\n",
			want:    "mcp_servers.d.command = \"/usr/local/bin/warden\"\nmcp_servers.d.args = [\"--home\", \"/h\", \"mcp\", \"--name\", \"d\", \"--\", \"srv\"]\nmcp_servers.d.env.X = \"1\"\n",
			actions: map[string]string{"d": "wrapped"},
		},
		{
			name:    "dotted keys in the table",
			in:      "[mcp_servers]\nu.url = 'http://127.0.0.1:9/mcp'\n",
			want:    "[mcp_servers]\nu.command = \"/usr/local/bin/warden\"\nu.args = [\"--home\", \"/h\", \"mcp\", \"--name\", \"u\", \"--upstream\", 'http://127.0.0.1:9/mcp']\n",
			actions: map[string]string{"u": "wrapped"},
		},
		{
			name:    "url server in its table",
			in:      "[mcp_servers.remote]\nurl = \"https://mcp.example.com/mcp\" # hosted\ntool_timeout_sec = 60\n",
			want:    "[mcp_servers.remote]\ncommand = \"/usr/local/bin/warden\"\nargs = [\"--home\", \"/h\", \"mcp\", \"--name\", \"remote\", \"--upstream\", \"https://mcp.example.com/mcp\"] # hosted\ntool_timeout_sec = 60\n",
			actions: map[string]string{"remote": "wrapped"},
		},
		{
			name:    "crlf",
			in:      "[mcp_servers.w]\r\ncommand = \"srv\"\r\n",
			want:    "[mcp_servers.w]\r\ncommand = \"/usr/local/bin/warden\"\r\nargs = [\"--home\", \"/h\", \"mcp\", \"--name\", \"w\", \"--\", \"srv\"]\r\n",
			actions: map[string]string{"w": "wrapped"},
		},
		{
			name: "skipped and already wrapped",
			in: `[mcp_servers.authed]
url = "https://mcp.example.com/mcp"
bearer_token_env_var = "TOKEN"

[mcp_servers.hdr]
url = "https://mcp.example.com/mcp"
http_headers = { X = "y" }

[mcp_servers.bad__name]
command = "x"

[mcp_servers.none]
enabled = false

[mcp_servers.done]
command = "warden"
args = ["mcp", "--name", "done", "--", "npx", "srv"]
`,
			actions: map[string]string{"authed": "skipped", "hdr": "skipped", "bad__name": "skipped", "none": "skipped", "done": "already wrapped"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, servers, err := RewriteCodexConfig([]byte(tc.in), codexPrefix, false)
			if err != nil {
				t.Fatalf("RewriteCodexConfig = %v", err)
			}
			actions := map[string]string{}
			for _, s := range servers {
				actions[s.Name] = s.Action
				if s.Action == "skipped" && s.Why == "" {
					t.Errorf("server %s skipped with no reason", s.Name)
				}
			}
			if !reflect.DeepEqual(actions, tc.actions) {
				t.Errorf("actions = %v, want %v", actions, tc.actions)
			}
			if tc.want == "" {
				if out != nil {
					t.Errorf("RewriteCodexConfig changed a file it should have left alone:\n%s", out)
				}
				return
			}
			if string(out) != tc.want {
				t.Errorf("wrapped file:\n%s\nwant:\n%s", out, tc.want)
			}
			codexServers(t, out) // decodes
			again, _, err := RewriteCodexConfig(out, codexPrefix, false)
			if err != nil || again != nil {
				t.Errorf("wrapping twice = %q, %v; want no change", again, err)
			}
			back, servers, err := RewriteCodexConfig(out, []string{"warden"}, true)
			if err != nil {
				t.Fatalf("unwrap: %v", err)
			}
			for _, s := range servers {
				if want := tc.actions[s.Name]; want == "wrapped" && s.Action != "unwrapped" {
					t.Errorf("unwrap left %s %s (%s)", s.Name, s.Action, s.Why)
				}
			}
			if string(back) != tc.in {
				t.Errorf("unwrapped file:\n%q\nwant the original byte for byte:\n%q", back, tc.in)
			}
		})
	}
}

func TestRewriteCodexConfigUnwrapLeavesHandEdits(t *testing.T) {
	// Wrapped by hand in another layout: reported, not rewritten.
	in := "[mcp_servers.fs]\ncommand = \"warden\"\nargs = [\"mcp\",\"--name\",\"fs\",\"--\",\"npx\",\"srv\"]\n"
	out, servers, err := RewriteCodexConfig([]byte(in), []string{"warden"}, true)
	if err != nil || out != nil || len(servers) != 1 || servers[0].Action != "skipped" || !strings.Contains(servers[0].Why, "by hand") {
		t.Errorf("unwrap of a hand-written wrap = %q, %+v, %v; want it skipped, saying to put it back by hand", out, servers, err)
	}
	// Not wrapped: nothing to undo.
	in = "[mcp_servers.fs]\ncommand = \"npx\"\n"
	if out, servers, err := RewriteCodexConfig([]byte(in), []string{"warden"}, true); err != nil || out != nil || servers[0].Action != "skipped" {
		t.Errorf("unwrap of an unwrapped server = %q, %+v, %v; want no change", out, servers, err)
	}
}

func TestWrapCodexConfigFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	in := "# keep\n[mcp_servers.fs]\ncommand = \"npx\"\nargs = [\"srv\"]\n"
	if err := os.WriteFile(path, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := WrapCodexConfig(path, codexPrefix, false)
	if err != nil || !res.Changed || res.Backup == "" {
		t.Fatalf("WrapCodexConfig = %+v, %v; want a change with a backup", res, err)
	}
	if b, _ := os.ReadFile(res.Backup); string(b) != in {
		t.Errorf("backup = %q, want the previous file %q", b, in)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("the rewritten file's mode is %v, want the file's 0600 kept", st.Mode().Perm())
	}
	if got := codexServers(t, mustRead(t, path))["fs"]["command"]; got != "/usr/local/bin/warden" {
		t.Errorf("command = %v after wrapping", got)
	}
	if res, err := WrapCodexConfig(path, codexPrefix, true); err != nil || !res.Changed {
		t.Fatalf("unwrap = %+v, %v", res, err)
	}
	if b := mustRead(t, path); string(b) != in {
		t.Errorf("after unwrap the file is %q, want %q", b, in)
	}
	if res, err := WrapCodexConfig(filepath.Join(dir, "missing.toml"), codexPrefix, false); err != nil || res.Changed {
		t.Errorf("a missing file = %+v, %v; want nothing to change", res, err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWrapCodexConfigRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"not toml":          "[mcp_servers.fs\ncommand = \"x\"\n",
		"duplicate key":     "[mcp_servers.fs]\ncommand = \"x\"\ncommand = \"y\"\n",
		"table twice":       "[mcp_servers.fs]\ncommand = \"x\"\n[mcp_servers.fs]\nargs = []\n",
		"servers not table": "mcp_servers = [1]\n",
		"array of tables":   "[[mcp_servers]]\ncommand = \"x\"\n",
		"args not a list":   "[mcp_servers.fs]\ncommand = \"x\"\nargs = \"-y\"\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".toml")
			os.WriteFile(path, []byte(content), 0o644)
			res, err := WrapCodexConfig(path, codexPrefix, false)
			if b := mustRead(t, path); string(b) != content {
				t.Errorf("the file was changed to %q", b)
			}
			if res.Changed {
				t.Errorf("WrapCodexConfig says it changed the file")
			}
			if err == nil && name != "args not a list" {
				t.Errorf("WrapCodexConfig(%s) = %+v, no error", name, res)
			}
			if name == "args not a list" && (len(res.Servers) != 1 || res.Servers[0].Action != "skipped") {
				t.Errorf("args not a list: %+v, %v; want the server skipped", res, err)
			}
		})
	}
}

// FuzzWrapCodexConfig: any config.toml is left alone or rewritten to valid
// TOML in which the wrapped servers run warden mcp, and unwrapping gives back
// the original file byte for byte; unwrapping any file gives valid TOML.
func FuzzWrapCodexConfig(f *testing.F) {
	f.Add([]byte("# c\n[mcp_servers.fs]\ncommand = \"npx\" # x\nargs = [\n \"-y\", # y\n 'srv',\n]\n[mcp_servers.fs.env]\nA = \"1\"\n"))
	f.Add([]byte("[mcp_servers]\nfs = { command = 'npx' }\nweb = { url = \"http://x/mcp\" }\n"))
	f.Add([]byte("mcp_servers.d.url = \"http://x\"\nmcp_servers.e.command = \"\"\"srv\"\"\"\n"))
	f.Add([]byte("[mcp_servers.done]\ncommand = \"warden\"\nargs = [\"mcp\", \"--name\", \"done\", \"--\", \"x\"]\n"))
	f.Add([]byte("[mcp_servers.w]\r\ncommand = \"a\\tb\"\r\nargs = []\r\n"))
	f.Add([]byte("[mcp_servers.\"q\"]\n\"command\" = \"x\"\n\"url\" = \"http://x\"\n[mcp_servers.r]\n'url'='http://y' # c\n"))
	f.Add([]byte("mcp_servers = { a = { command = \"x\", args = [ ] }, b = {\n  url = \"http://z\", # multi-line\n  enabled = true,\n} }\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		prefix := []string{"/opt/warden bin/warden", "--home", "/h \"q\""}
		if out, _, err := RewriteCodexConfig(data, prefix, true); err == nil && out != nil {
			codexServers(t, out) // an unwrap of any input decodes too
		}
		out, servers, err := RewriteCodexConfig(data, prefix, false)
		if err != nil || out == nil {
			return
		}
		got := codexServers(t, out)
		for _, s := range servers {
			if s.Action != "wrapped" {
				continue
			}
			args, _ := stringList(got[s.Name]["args"])
			if got[s.Name]["command"] != prefix[0] || !wrapped(prefix[0], args, s.Name) {
				t.Fatalf("server %s wrapped to %v", s.Name, got[s.Name])
			}
		}
		back, _, err := RewriteCodexConfig(out, prefix, true)
		if err != nil {
			t.Fatalf("unwrap of\n%q: %v", out, err)
		}
		if string(back) != string(data) {
			t.Fatalf("wrap then unwrap of\n%q\nis\n%q", data, back)
		}
	})
}
