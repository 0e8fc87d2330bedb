package session

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// A world's home is new, so Go's build cache in it starts empty, and every
// session's first go command would compile the standard library again:
// about 20 s of CPU for each of the 26 sessions with Go steps, on the
// 2 cores the whole suite shares. A user's agent works with a warm cache.
// So the harness warms one cache once, from the Go project's own build,
// vet and tests, and each ordinary session's home starts with a copy of it
// made of hard links (Go's cache entries are never rewritten in place: a
// new result is a new file, renamed in). What a session adds stays its own.

var (
	goSeedOnce sync.Once
	goSeed     string // the warm cache; "" when it could not be made
)

// warmGoCache returns the seed cache, making it on first use.
func (h *harness) warmGoCache(t *testing.T) string {
	goSeedOnce.Do(func() {
		if !h.has("go") {
			return
		}
		dir := filepath.Join(h.base, "go-seed")
		src := filepath.Join(dir, "src")
		if err := os.CopyFS(src, os.DirFS(filepath.Join("testdata", "projects", "go"))); err != nil {
			t.Logf("no warm Go cache: copy the Go project: %v", err)
			return
		}
		cache := filepath.Join(dir, "home", ".cache", "go-build")
		env := []string{"PATH=" + h.path, "HOME=" + filepath.Join(dir, "home"), "GOCACHE=" + cache, "LANG=C.UTF-8"}
		for _, step := range []struct{ env, args []string }{
			{nil, []string{"build", "./..."}},
			{nil, []string{"vet", "./..."}},
			{nil, []string{"test", "-count=1", "./..."}},
			// What several sessions build again and again, each in its own
			// world: the race detector's standard library (about 17 s of
			// CPU, in 13 steps) and the cross builds (about 9 s each).
			{nil, []string{"test", "-race", "-count=1", "./..."}},
			{[]string{"GOOS=windows", "GOARCH=amd64"}, []string{"build", "./..."}},
			{[]string{"GOOS=darwin", "GOARCH=arm64"}, []string{"build", "./..."}},
		} {
			args := step.args
			cmd := exec.Command("go", args...)
			cmd.Dir, cmd.Env = src, append(append([]string(nil), env...), step.env...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Logf("no warm Go cache: go %v: %v\n%s", args, err, out)
				return
			}
		}
		goSeed = cache
	})
	return goSeed
}

// seedGoCache gives the world's home a copy of the warm Go cache.
func (w *world) seedGoCache(t *testing.T) {
	t.Helper()
	seed := w.h.warmGoCache(t)
	if seed == "" {
		return
	}
	dst := filepath.Join(w.home, ".cache", "go-build")
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-al", seed, dst).CombinedOutput(); err != nil {
		t.Fatalf("copy the warm Go cache into the world: %v\n%s", err, out)
	}
}
