package nestedgit

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestNestedFindsEveryRepositoryBelow: repositories at any depth, inside
// others, and (with files) work trees whose .git is a file; not the
// project itself, nothing inside a git directory or node_modules, and no
// symlink followed.
func TestNestedFindsEveryRepositoryBelow(t *testing.T) {
	p := t.TempDir()
	for _, d := range []string{".git/modules/m", "vendor/lib/.git", "vendor/lib/sub/.git", "a/b/c/d/e/f/deep/.git", "node_modules/pkg/.git", "wt"} {
		if err := os.MkdirAll(filepath.Join(p, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(p, "wt/.git"), []byte("gitdir: ../.git/modules/m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(p, "vendor"), filepath.Join(p, "link")); err != nil {
		t.Fatal(err)
	}
	rel := func(files bool) []string {
		var out []string
		for _, r := range Nested(p, files) {
			x, _ := filepath.Rel(p, r)
			out = append(out, x)
		}
		slices.Sort(out)
		return out
	}
	if got, want := rel(false), []string{"a/b/c/d/e/f/deep", "vendor/lib", "vendor/lib/sub"}; !slices.Equal(got, want) {
		t.Errorf("Nested(dirs) = %q; want %q", got, want)
	}
	if got, want := rel(true), []string{"a/b/c/d/e/f/deep", "vendor/lib", "vendor/lib/sub", "wt"}; !slices.Equal(got, want) {
		t.Errorf("Nested(with files) = %q; want %q", got, want)
	}
}

// TestNestedIsBounded: a project of more repositories than it lists gives
// the bound; one of more directories than it reads stops reading there.
func TestNestedIsBounded(t *testing.T) {
	p := t.TempDir()
	for i := range maxNestedRepos + 10 {
		if err := os.MkdirAll(filepath.Join(p, "r", string(rune('a'+i%26))+string(rune('a'+i/26)), ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(Nested(p, false)); got != maxNestedRepos {
		t.Errorf("%d repositories listed; want the bound %d", got, maxNestedRepos)
	}
	q := t.TempDir()
	for i := range maxNestedDirs + 10 {
		if err := os.MkdirAll(filepath.Join(q, "d", string(rune('a'+i%26))+string(rune('a'+(i/26)%26))+string(rune('a'+i/676))), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(q, "zzz-last", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	// WalkDir goes in lexical order: d/'s directories use up the bound
	// before zzz-last is read.
	if got := Nested(q, false); len(got) != 0 {
		t.Errorf("Nested read past its %d directories: %q", maxNestedDirs, got)
	}
}

// BenchmarkNested times the search of a project of 200 directories (ten
// packages of twenty) holding two nested repositories: what a sandbox's
// start and the sweeps off a command's path pay.
func BenchmarkNested(b *testing.B) {
	p := b.TempDir()
	for i := range 10 {
		for j := range 20 {
			if err := os.MkdirAll(filepath.Join(p, "pkg"+string(rune('a'+i)), "d"+string(rune('a'+j))), 0o755); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, r := range []string{"vendor/a/.git", "tools/b/.git"} {
		if err := os.MkdirAll(filepath.Join(p, r), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if n := len(Nested(p, true)); n != 2 {
			b.Fatalf("%d repositories; want 2", n)
		}
	}
}
