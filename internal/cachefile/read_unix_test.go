//go:build unix

package cachefile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestReadTakesOnlyWhatWriteMakes: Read returns a file Write made, and
// refuses at once, without waiting or reading on, whatever else stands in
// its place: a named pipe (os.ReadFile waited for a writer forever), a
// symlink (to a device that never ends, or to another cache), a directory,
// a file past MaxSize.
func TestReadTakesOnlyWhatWriteMakes(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	Write(good, []byte("rules"))
	if b, ok := Read(good); !ok || string(b) != "rules" {
		t.Fatalf("Read(a file Write made) = %q, %v; want rules, true", b, ok)
	}
	cases := map[string]func(path string) error{
		"named pipe": func(path string) error { return syscall.Mkfifo(path, 0o600) },
		"symlink to a device": func(path string) error {
			if _, err := os.Stat("/dev/zero"); err != nil {
				t.Skipf("no /dev/zero: %v", err)
			}
			return os.Symlink("/dev/zero", path)
		},
		"symlink to a cache": func(path string) error { return os.Symlink(good, path) },
		"directory":          func(path string) error { return os.Mkdir(path, 0o700) },
		"too large": func(path string) error {
			f, err := os.Create(path)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(MaxSize + 1) // sparse
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cache")
			if err := mk(path); err != nil {
				t.Fatal(err)
			}
			done := make(chan bool, 1)
			go func() { _, ok := Read(path); done <- ok }()
			select {
			case ok := <-done:
				if ok {
					t.Errorf("Read(%s) = true; want it refused", name)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("Read(%s) did not return in 10 s", name)
			}
		})
	}
}
