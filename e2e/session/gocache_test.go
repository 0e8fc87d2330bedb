package session

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// A world's home is new, so Go's build cache in it starts empty, and every
// session's first go command would compile the standard library again:
// about 20 s of CPU for each of the 26 sessions with Go steps. A user's agent works with a warm cache.
// So the harness warms one cache once, from the Go project's own build,
// vet and tests, and each ordinary session's home starts with a copy of it
// made of hard links (Go's cache entries are never rewritten in place: a
// new result is a new file, renamed in). What a session adds stays its own.

var (
	goSeedOnce sync.Once
	goSeed     string // the warm cache; "" when it could not be made
)

// The builds the seed makes: each fills the cache with what several
// sessions' steps would otherwise compile again, each in its own world, on
// the 2 cores the whole suite shares (what a step costs cold, measured
// 2026-11-29). What is compiled from the standard library and Go's own
// tools is found again in every world (its action IDs do not name a
// directory); the project's and its modules' packages are not, as their
// directory differs, but they are small.
var goSeedSteps = []struct {
	env, args []string
	usage     bool // a tool run without arguments to build it: it exits non-zero with its usage
}{
	{args: []string{"build", "./..."}},
	{args: []string{"vet", "./..."}},
	{args: []string{"test", "-count=1", "./..."}},
	// The race detector's standard library (about 17 s of CPU, in 13
	// steps) and the cross builds (about 9 s each).
	{args: []string{"test", "-race", "-count=1", "./..."}},
	{env: []string{"GOOS=windows", "GOARCH=amd64"}, args: []string{"build", "./..."}},
	{env: []string{"GOOS=darwin", "GOARCH=arm64"}, args: []string{"build", "./..."}},
	{env: []string{"GOOS=darwin", "GOARCH=arm64"}, args: []string{"vet", "./..."}},
	{env: []string{"GOARCH=386"}, args: []string{"test", "-count=1", "./..."}},
	// The standard library instrumented for fuzzing (22-24 s a step) and
	// rebuilt without optimisation, without cgo, with trimmed paths.
	{args: []string{"test", "-run=^$", "-fuzz=^FuzzSeed$", "-fuzztime=1x", "."}},
	{args: []string{"build", "-gcflags=all=-N -l", "./..."}},
	{env: []string{"CGO_ENABLED=0"}, args: []string{"test", "-count=1", "./..."}},
	{args: []string{"build", "-trimpath", "./..."}},
	// Go's tools that are built on first use (go tool pprof: 25 s a step):
	// test2json for -json, covdata for coverage profiles, go doc's.
	{args: []string{"test", "-count=1", "-json", "./..."}},
	{args: []string{"test", "-count=1", "-coverprofile=cover.out", "./..."}},
	{args: []string{"doc", "fmt.Println"}},
	{args: []string{"tool", "pprof", "-h"}, usage: true},
	{args: []string{"tool", "nm"}, usage: true},
	{args: []string{"tool", "objdump"}, usage: true},
}

// seedFuzz is the fuzz target the seed's -fuzz build runs once.
const seedFuzz = "package calc\n\nimport \"testing\"\n\nfunc FuzzSeed(f *testing.F) { f.Fuzz(func(t *testing.T, s string) {}) }\n"

// warmGoCache returns the seed cache, making it on first use.
func (h *harness) warmGoCache(t *testing.T) string {
	goSeedOnce.Do(func() {
		if !h.has("go") {
			return
		}
		start := time.Now()
		dir := filepath.Join(h.base, "go-seed")
		src := filepath.Join(dir, "src")
		if err := os.CopyFS(src, os.DirFS(filepath.Join("testdata", "projects", "go"))); err != nil {
			t.Logf("no warm Go cache: copy the Go project: %v", err)
			return
		}
		if err := os.WriteFile(filepath.Join(src, "seed_fuzz_test.go"), []byte(seedFuzz), 0o644); err != nil {
			t.Logf("no warm Go cache: %v", err)
			return
		}
		cache := filepath.Join(dir, "home", ".cache", "go-build")
		env := []string{"PATH=" + h.path, "HOME=" + filepath.Join(dir, "home"), "GOCACHE=" + cache, "LANG=C.UTF-8"}
		for _, step := range goSeedSteps {
			cmd := exec.Command("go", step.args...)
			cmd.Dir, cmd.Env = src, append(append([]string(nil), env...), step.env...)
			out, err := cmd.CombinedOutput()
			if _, exited := err.(*exec.ExitError); err != nil && !(step.usage && exited) {
				t.Logf("no warm Go cache: go %v: %v\n%s", step.args, err, out)
				return
			}
		}
		goSeed = cache
		t.Logf("warm Go cache made in %s", time.Since(start).Round(100*time.Millisecond))
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
