package nestedgit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// benchProject is a committed project of files files (an index of that many
// entries) and, with nested, a gitlinked repository with inert config.
func benchProject(b *testing.B, files int, nested bool) string {
	needGit(b)
	home := b.TempDir()
	project := filepath.Join(home, "p")
	for i := range files {
		p := filepath.Join(project, fmt.Sprintf("src/pkg%02d/f%04d.go", i%40, i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("package p\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	gitIn(b, home, project, "init", "-q", ".")
	gitIn(b, home, project, "add", ".")
	if nested {
		script := "git init -q sub && git -C sub commit -q --allow-empty -m x && git add sub"
		for _, step := range strings.Split(script, " && ") {
			args := strings.Fields(step)[1:]
			gitIn(b, home, project, args...)
		}
	}
	return project
}

// BenchmarkGuard is what every contained command pays: the baseline before
// it and the sweep after, in a project of 1,000 indexed files, with no
// nested repository and with one gitlinked scratch repository (unchanged).
func BenchmarkGuard(b *testing.B) {
	for _, nested := range []bool{false, true} {
		b.Run(fmt.Sprintf("nested=%v", nested), func(b *testing.B) {
			project := benchProject(b, 1000, nested)
			q := filepath.Join(b.TempDir(), "q")
			b.ResetTimer()
			for b.Loop() {
				g := New(project, nil, q)
				if fs := g.Sweep(time.Now()); len(fs) != 0 {
					b.Fatalf("Sweep = %v", fs)
				}
			}
		})
	}
}

// BenchmarkGitlinks reads a real index of 1,000 entries: what a one-shot
// run (a fresh process, no cache) pays to read the project's index.
func BenchmarkGitlinks(b *testing.B) {
	project := benchProject(b, 1000, true)
	data, err := os.ReadFile(filepath.Join(project, ".git", "index"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if links, err := gitlinks(data, sha1Size); err != nil || len(links) != 1 {
			b.Fatalf("gitlinks = %v, %v", links, err)
		}
	}
}
