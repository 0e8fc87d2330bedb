//go:build amd64 || arm64

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func hardLink(t testing.TB, oldname, newname string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(newname), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(oldname, newname); err != nil {
		t.Skipf("cannot hard-link here: %v", err)
	}
}

// TestHideLinks checks what hideLinks adds to the masks and when it warns,
// without building a sandbox.
func TestHideLinks(t *testing.T) {
	type layout struct {
		secrets, project, elsewhere string
	}
	cases := []struct {
		name string
		// setup lays files out and returns the hidden paths, the granted
		// directories, and the names hideLinks must add.
		setup    func(t *testing.T, l layout) (hidden, granted, want []string)
		mode     Mode
		wantWarn bool
		wantErr  bool
	}{
		{name: "no linked secret", setup: func(t *testing.T, l layout) ([]string, []string, []string) {
			writeFile(t, filepath.Join(l.secrets, "key"), "s")
			return []string{l.secrets}, []string{l.project, "/var"}, nil
		}},
		{name: "link in the project", setup: func(t *testing.T, l layout) ([]string, []string, []string) {
			writeFile(t, filepath.Join(l.secrets, "key"), "s")
			hardLink(t, filepath.Join(l.secrets, "key"), filepath.Join(l.project, "a", "b", "leak"))
			return []string{l.secrets}, []string{l.project}, []string{filepath.Join(l.project, "a", "b", "leak")}
		}},
		{name: "hidden file itself, link in the project", setup: func(t *testing.T, l layout) ([]string, []string, []string) {
			writeFile(t, filepath.Join(l.secrets, "key"), "s")
			hardLink(t, filepath.Join(l.secrets, "key"), filepath.Join(l.project, "leak"))
			return []string{filepath.Join(l.secrets, "key")}, []string{l.project}, []string{filepath.Join(l.project, "leak")}
		}},
		{name: "both names under denied paths", mode: ModeStandard, setup: func(t *testing.T, l layout) ([]string, []string, []string) {
			writeFile(t, filepath.Join(l.secrets, "key"), "s")
			hardLink(t, filepath.Join(l.secrets, "key"), filepath.Join(l.secrets, "backup", "key"))
			return []string{l.secrets}, []string{l.project, "/var"}, nil
		}},
		{name: "link in a hidden part of the project", setup: func(t *testing.T, l layout) ([]string, []string, []string) {
			writeFile(t, filepath.Join(l.secrets, "key"), "s")
			hardLink(t, filepath.Join(l.secrets, "key"), filepath.Join(l.project, ".env"))
			return []string{l.secrets, filepath.Join(l.project, ".env")}, []string{l.project}, nil
		}},
		{name: "link where the command cannot read", setup: func(t *testing.T, l layout) ([]string, []string, []string) {
			writeFile(t, filepath.Join(l.secrets, "key"), "s")
			hardLink(t, filepath.Join(l.secrets, "key"), filepath.Join(l.elsewhere, "key"))
			return []string{l.secrets}, []string{l.project}, nil
		}},
		{name: "link in a broader readable directory, searched after the project", setup: func(t *testing.T, l layout) ([]string, []string, []string) {
			writeFile(t, filepath.Join(l.secrets, "key"), "s")
			hardLink(t, filepath.Join(l.secrets, "key"), filepath.Join(l.elsewhere, "key"))
			hardLink(t, filepath.Join(l.secrets, "key"), filepath.Join(l.project, "key"))
			broader := filepath.Dir(l.project)
			return []string{l.secrets}, []string{broader, l.project}, []string{filepath.Join(l.project, "key"), filepath.Join(l.elsewhere, "key")}
		}},
		{name: "link in node_modules, which is not searched", wantWarn: true, setup: func(t *testing.T, l layout) ([]string, []string, []string) {
			writeFile(t, filepath.Join(l.secrets, "key"), "s")
			hardLink(t, filepath.Join(l.secrets, "key"), filepath.Join(l.project, "node_modules", "x", "key"))
			return []string{l.secrets}, []string{l.project}, nil
		}},
		{name: "light mode cannot hide a link", mode: ModeLight, wantErr: true, setup: func(t *testing.T, l layout) ([]string, []string, []string) {
			writeFile(t, filepath.Join(l.secrets, "key"), "s")
			hardLink(t, filepath.Join(l.secrets, "key"), filepath.Join(l.project, "leak"))
			return []string{l.secrets}, []string{l.project}, nil
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			l := layout{filepath.Join(root, "secrets"), filepath.Join(root, "project"), filepath.Join(root, "elsewhere")}
			for _, d := range []string{l.secrets, l.project, l.elsewhere} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			hidden, granted, want := c.setup(t, l)
			mode := c.mode
			if mode == "" {
				mode = ModeStandard
			}
			before := []string{"/etc/shadow"}
			masks, warn, err := hideLinks(hidden, granted, mode, slices.Clone(before), nil, nil)
			if c.wantErr {
				if err == nil || !strings.Contains(err.Error(), "hard link") {
					t.Fatalf("hideLinks = %v, %v; want an error about the hard link", masks, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := masks[len(before):]; !slices.Equal(got, want) {
				t.Errorf("hideLinks added masks %q, want %q", got, want)
			}
			if (len(warn) > 0) != c.wantWarn {
				t.Errorf("hideLinks warned %q; want a warning: %v", warn, c.wantWarn)
			}
			for _, w := range warn {
				if !strings.Contains(w, filepath.Join(l.secrets, "key")) {
					t.Errorf("warning %q does not name the secret file", w)
				}
			}
		})
	}
	t.Run("an error passes through", func(t *testing.T) {
		want := fmt.Errorf("from masksFor")
		if _, _, err := hideLinks(nil, nil, ModeStandard, nil, nil, want); err != want {
			t.Fatalf("hideLinks dropped masksFor's error: %v", err)
		}
	})
}

// TestFindNamesBudget checks that a search that runs out of its budget says
// so, so that an unfound link is warned about.
func TestFindNamesBudget(t *testing.T) {
	root := t.TempDir()
	secret := filepath.Join(root, "secrets", "key")
	writeFile(t, secret, "s")
	project := filepath.Join(root, "project")
	for i := range 50 {
		writeFile(t, filepath.Join(project, fmt.Sprintf("f%02d", i)), "x")
	}
	hardLink(t, secret, filepath.Join(project, "zz-leak"))
	secrets := linkedFiles([]string{filepath.Dir(secret)}, linkTreeBudget, linkSecretBudget)
	if len(secrets) != 1 {
		t.Fatalf("linkedFiles found %d linked files, want 1", len(secrets))
	}
	names, exhausted := findNames([]string{project}, []string{filepath.Dir(secret)}, secrets, ModeStandard, 10)
	if !exhausted || len(names) != 0 {
		t.Fatalf("a search of 51 entries with a budget of 10: names %v, exhausted %v; want none found and exhausted", names, exhausted)
	}
	secrets = linkedFiles([]string{filepath.Dir(secret)}, linkTreeBudget, linkSecretBudget)
	names, exhausted = findNames([]string{project}, []string{filepath.Dir(secret)}, secrets, ModeStandard, linkSearchBudget)
	if exhausted || len(names) != 1 || names[0].name != filepath.Join(project, "zz-leak") {
		t.Fatalf("a full search: names %v, exhausted %v; want the leak found", names, exhausted)
	}
}

// BenchmarkHideLinks measures what the search costs every run when no
// denied file has a second name (the common case): a walk of the system
// secrets alone (the guard profile), and of ten denied trees of 20 files.
func BenchmarkHideLinks(b *testing.B) {
	root := b.TempDir()
	var hidden []string
	for i := range 10 {
		dir := filepath.Join(root, fmt.Sprintf("secret%d", i))
		for j := range 20 {
			writeFile(b, filepath.Join(dir, fmt.Sprintf("f%d", j)), "s")
		}
		hidden = append(hidden, dir)
	}
	project := filepath.Join(root, "project")
	writeFile(b, filepath.Join(project, "main.go"), "package main")
	for _, c := range []struct {
		name   string
		hidden []string
	}{{"system secrets", nil}, {"200 denied files", hidden}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, _, err := hideLinks(c.hidden, []string{project}, ModeStandard, nil, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestLinkSearchRoots(t *testing.T) {
	granted := []string{"/usr", "/proc", "/tmp", "/home", "/home/u/proj", "/work", "/", "/etc/ssl", "/dev/shm", "/home/u/.ssh/x", "/work"}
	denied := []string{"/home/u/.ssh"}
	cases := []struct {
		mode Mode
		want []string
	}{
		{ModeStandard, []string{"/home/u/proj", "/home", "/work", "/"}},
		{ModeLight, []string{"/home/u/proj", "/tmp", "/home", "/work", "/"}},
	}
	for _, c := range cases {
		if got := linkSearchRoots(granted, denied, c.mode); !slices.Equal(got, c.want) {
			t.Errorf("linkSearchRoots(%q, %q, %s) = %q, want %q", granted, denied, c.mode, got, c.want)
		}
	}
}
