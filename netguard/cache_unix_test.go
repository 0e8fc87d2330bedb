//go:build unix

package netguard

import (
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
	"time"
)

// A named pipe in the rule cache's place is ignored, not waited on (every
// network decision hung on it): the rules are compiled as New does.
func TestNewCachedIgnoresANamedPipe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "netguard")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("cannot make a named pipe here: %v", err)
	}
	want, err := New(rulePolicy)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		g   *Guard
		hit bool
		err error
	}
	done := make(chan result, 1)
	go func() {
		g, hit, err := newCached(rulePolicy, path, "v1")
		done <- result{g, hit, err}
	}()
	select {
	case r := <-done:
		if r.err != nil || r.hit || !reflect.DeepEqual(r.g, want) {
			t.Fatalf("newCached with a named pipe for cache: hit %v, %v; want New's guard, compiled", r.hit, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("newCached with a named pipe for cache did not return in 10 s")
	}
}
