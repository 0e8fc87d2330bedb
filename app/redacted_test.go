package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSettingsOnly: a credential file that is also a tool's settings reads,
// in the sandbox, as its settings alone: no line that names or holds a
// credential, no comment, the rest as it was.
func TestSettingsOnly(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"npmrc",
			"//registry.npmjs.org/:_authToken=npm_SECRET1\nfund=false\nregistry=https://npm.corp.example/\n@corp:registry=https://npm.corp.example/\n_auth=dXNlcjpwYXNz\n//npm.corp.example/:_password=cGFzcw==\nemail=me@example.com\nalways-auth=true\n# _authToken=npm_OLD\nproxy=http://user:pw@proxy.example:8080\nupdate-notifier=false\n",
			"fund=false\nregistry=https://npm.corp.example/\n@corp:registry=https://npm.corp.example/\nupdate-notifier=false\n"},
		{"pypirc",
			"[distutils]\nindex-servers = pypi\n\n[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmc\nrepository = https://upload.pypi.org/legacy/\n",
			"[distutils]\nindex-servers = pypi\n\n[pypi]\nrepository = https://upload.pypi.org/legacy/\n"},
		{"yarnrc", "npmRegistryServer: \"https://npm.corp.example\"\nnpmScopes:\n  corp:\n    npmAuthToken: npm_SECRET2\n    npmAlwaysAuth: true\n",
			"npmRegistryServer: \"https://npm.corp.example\"\nnpmScopes:\n  corp:\n"},
		{"a value the redactor knows", "github=ghp_0123456789abcdefghijABCDEFGHIJ012345\nx=1\n", "x=1\n"},
		// A value that goes on past its line goes with it (red-team-14):
		// a backslash continues a properties line, and the lines indented
		// below a setting are its value.
		{"gradle continuation",
			"org.gradle.jvmargs=-Xmx2g \\\n  -Dfile.encoding=UTF-8\nsigning.password=\\\nZm9vYmFyLXNlY3JldC12YWx1ZQ==\norg.gradle.parallel=true\n",
			"org.gradle.jvmargs=-Xmx2g \\\n  -Dfile.encoding=UTF-8\norg.gradle.parallel=true\n"},
		{"pypirc value on the next line",
			"[pypi]\npassword =\n    SECRET-pypirc-0123\n\trepository-like: x\nrepository = https://upload.pypi.org/legacy/\n",
			"[pypi]\nrepository = https://upload.pypi.org/legacy/\n"},
		{"yarnrc block scalars",
			"npmAuthToken: >-\n  SECRET-yarn-0123\nnpmScopes:\n  corp:\n    npmAuthToken: |\n      tok=SECRET-yarn-4567\n\n      more=SECRET\n    npmRegistryServer: \"https://npm.corp.example\"\nenableTelemetry: false\n",
			"npmScopes:\n  corp:\n    npmRegistryServer: \"https://npm.corp.example\"\nenableTelemetry: false\n"},
		{"npm key named left of the =", "//npm.corp.example/:always-auth=true\n//r.example/:_authToken=abc\nfund=false\n", "fund=false\n"},
	}
	for _, c := range cases {
		if got := string(settingsOnly([]byte(c.in))); got != c.want {
			t.Errorf("%s: settingsOnly =\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
}

// TestRedactedCopiesOnlyForHiddenSettingsFiles: only a hidden settings file
// gets a copy; one not hidden (the user took it out of secret_paths) is
// the sandbox's to read as it is, and a symlink is hidden whole.
func TestRedactedCopiesOnlyForHiddenSettingsFiles(t *testing.T) {
	home := t.TempDir()
	npmrc, pypirc := filepath.Join(home, ".npmrc"), filepath.Join(home, ".pypirc")
	for _, f := range []string{npmrc, pypirc} {
		if err := os.WriteFile(f, []byte("registry=https://r.example/\n_authToken=SECRET\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(home, ".gradle"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(npmrc, filepath.Join(home, ".gradle", "gradle.properties")); err != nil {
		t.Fatal(err)
	}
	got := redactedCopies([]string{npmrc, filepath.Join(home, ".gradle", "gradle.properties")}, home)
	if len(got) != 1 || string(got[npmrc]) != "registry=https://r.example/\n" {
		t.Fatalf("redactedCopies = %q; want only ~/.npmrc, its registry line", got)
	}
	for _, c := range got {
		if strings.Contains(string(c), "SECRET") {
			t.Fatal("a copy holds the secret")
		}
	}
}

// FuzzSettingsOnly: whatever the file, the copy is made of its own lines,
// none of which names a credential or holds one the redactor finds.
func FuzzSettingsOnly(f *testing.F) {
	f.Add([]byte("//r/:_authToken=x\nfund=false\n[s]\npassword = y\n"))
	f.Add([]byte("a: b\n  c: d\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		in := map[string]bool{}
		for _, l := range strings.Split(string(b), "\n") {
			in[l] = true
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(settingsOnly(b)), "\n"), "\n") {
			if l == "" {
				continue
			}
			if !in[l] {
				t.Fatalf("the copy has a line the file has not: %q", l)
			}
			tr := strings.TrimSpace(l)
			if i := strings.IndexAny(tr, "=:"); i > 0 && credentialKey().MatchString(tr[:i]) {
				t.Fatalf("the copy keeps a credential's line: %q", l)
			}
		}
	})
}
