package undo

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkTake is the snapshot warden exec takes before a discard, with
// git run on the host (in warden exec it runs in the sandbox, which adds
// one sandbox exec per git command): a repository of 1,000 committed
// files with 10 changed and 10 untracked.
func BenchmarkTake(b *testing.B) {
	files := map[string]string{}
	for i := range 1000 {
		files[fmt.Sprintf("src/pkg%02d/f%04d.go", i%40, i)] = fmt.Sprintf("package p\n\n// file %d\nvar X%d = %d\n", i, i, i)
	}
	dir := newRepo(b, files)
	for i := range 10 {
		write(b, dir, fmt.Sprintf("src/pkg%02d/f%04d.go", i, i), fmt.Sprintf("package p\n// changed %d\n", i))
		write(b, dir, fmt.Sprintf("new/n%02d.txt", i), fmt.Sprintf("untracked %d\n", i))
	}
	ctx := context.Background()
	repo, err := Open(ctx, Host{}, filepath.Join(dir, "src"))
	if err != nil {
		b.Fatal(err)
	}
	at := time.Now()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, _, err := Take(ctx, Host{}, repo, fmt.Sprintf("b%d", i), at, Meta{Command: "git reset --hard"}, false); err != nil {
			b.Fatal(err)
		}
	}
}
