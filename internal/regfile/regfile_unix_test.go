//go:build unix

package regfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOpenTakesOnlyARegularFile: whatever stands at the path, Open returns
// at once, and returns a file only for a regular file (through a symlink
// only with follow); a named pipe, for reading or for writing, with or
// without O_EXCL, a device, a directory and (without follow) a symlink are
// a *NotRegularError naming what they are.
func TestOpenTakesOnlyARegularFile(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "regular")
	if err := os.WriteFile(regular, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	pipe := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Skipf("cannot make a named pipe here: %v", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(regular, link); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path   string
		flag   int
		follow bool
		kind   string // "" when a file is returned
	}{
		{regular, os.O_RDONLY, false, ""},
		{link, os.O_RDONLY, true, ""},
		{link, os.O_RDONLY, false, "a symlink"},
		{pipe, os.O_RDONLY, false, "a named pipe"},
		{pipe, os.O_WRONLY | os.O_APPEND, false, "a named pipe"},
		{pipe, os.O_WRONLY | os.O_CREATE | os.O_EXCL, false, "a named pipe"},
		{pipe, os.O_RDWR, true, "a named pipe"},
		{zero, os.O_RDONLY, true, "a device"},
		{dir, os.O_RDONLY, false, "a directory"},
	}
	for _, c := range cases {
		done := make(chan error, 1)
		go func() {
			f, _, err := Open(c.path, c.flag, 0o600, c.follow)
			if err == nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if c.kind == "" {
				if err != nil {
					t.Errorf("Open(%s, follow %v) = %v; want the file", c.path, c.follow, err)
				}
				continue
			}
			var ne *NotRegularError
			if !errors.As(err, &ne) || !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), c.kind) {
				t.Errorf("Open(%s, %#x, follow %v) = %v; want a *NotRegularError saying it is %s", c.path, c.flag, c.follow, err, c.kind)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Open(%s, %#x) did not return in 10 s", c.path, c.flag)
		}
	}
	if _, _, err := Open(filepath.Join(dir, "missing"), os.O_RDONLY, 0, false); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a missing file = %v; want fs.ErrNotExist", err)
	}
	if _, _, err := Open(regular, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600, false); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Open with O_EXCL of a regular file = %v; want fs.ErrExist", err)
	}
}

// TestReadAllStopsAtItsBound: ReadAll returns what fits and refuses one
// byte more, without reading on (a file that grows, /dev/zero).
func TestReadAllStopsAtItsBound(t *testing.T) {
	if b, err := ReadAll(strings.NewReader("abcd"), 4); err != nil || string(b) != "abcd" {
		t.Fatalf("ReadAll of 4 bytes, bound 4 = %q, %v", b, err)
	}
	f, err := os.Open("/dev/zero")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	if _, err := ReadAll(f, 1<<20); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("ReadAll of /dev/zero = %v; want ErrTooLarge", err)
	}
}
