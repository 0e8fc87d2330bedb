//go:build unix

package config

import (
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
	"time"
)

// A named pipe in the policy cache's place (os.ReadFile waited for its
// writer forever, so every hook hung until its host's timeout let the call
// through) or a symlink to a device is ignored: the policy is parsed, and
// the cache written again in its place.
func TestLoadCachedIgnoresASpecialFileForCache(t *testing.T) {
	path := writeFile(t, DefaultFile())
	for name, mk := range map[string]func(string) error{
		"named pipe":          func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"symlink to a device": func(p string) error { return os.Symlink("/dev/zero", p) },
	} {
		t.Run(name, func(t *testing.T) {
			cache := filepath.Join(t.TempDir(), "policy.json")
			if err := mk(cache); err != nil {
				t.Skipf("cannot make a %s here: %v", name, err)
			}
			done := make(chan error, 1)
			var p *Policy
			go func() {
				var err error
				p, _, err = LoadCached(path, cache)
				done <- err
			}()
			select {
			case err := <-done:
				if err != nil || !reflect.DeepEqual(p, Default()) {
					t.Fatalf("LoadCached with a %s for cache = %v; want the default policy", name, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("LoadCached with a %s for cache did not return in 10 s", name)
			}
			if fi, err := os.Lstat(cache); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("the cache after LoadCached: %v, %v; want a regular file written in its place", fi, err)
			}
		})
	}
}
