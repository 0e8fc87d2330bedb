package fstools

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentwarden/warden"
)

// TestWriteAtomic has a writer alternate two 1 MiB contents while a reader
// reads the file through Root.Read and through plain os.ReadFile: every read
// must be one content or the other, never a mix or a partial file.
func TestWriteAtomic(t *testing.T) {
	root := t.TempDir()
	r := openRoot(t, root, Limits{})
	contents := [2][]byte{bytes.Repeat([]byte("a"), 1<<20), bytes.Repeat([]byte("b"), 1<<20)}
	if err := r.Write("f", contents[0], 0o644); err != nil {
		t.Fatal(err)
	}

	writes := 100
	if testing.Short() {
		writes = 20
	}
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		defer done.Store(true)
		for i := range writes {
			if err := r.Write("f", contents[i%2], 0o644); err != nil {
				t.Errorf("Write: %v", err)
				return
			}
		}
	})
	reads := 0
	for !done.Load() {
		for _, read := range []func() ([]byte, error){
			func() ([]byte, error) { return r.Read("f") },
			func() ([]byte, error) { return os.ReadFile(filepath.Join(root, "f")) },
		} {
			b, err := read()
			if err != nil {
				t.Fatalf("read during writes: %v", err)
			}
			if !bytes.Equal(b, contents[0]) && !bytes.Equal(b, contents[1]) {
				t.Fatalf("read %d bytes that are neither content (first %q, last %q)", len(b), b[:min(len(b), 8)], b[max(0, len(b)-8):])
			}
			reads++
		}
	}
	wg.Wait()
	t.Logf("%d writes, %d whole reads", writes, reads)
	assertOnly(t, r, ".", "f")
}

// assertOnly checks that the directory dir holds exactly the entries want:
// no temporary file is left behind.
func assertOnly(t *testing.T, r *Root, dir string, want ...string) {
	t.Helper()
	entries, err := r.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(entries); got != strings.Join(want, ",") {
		t.Errorf("List(%q) = %s, want %s", dir, got, strings.Join(want, ","))
	}
}

func TestWriteFailureLeavesOldContent(t *testing.T) {
	root := t.TempDir()
	r := openRoot(t, root, Limits{MaxWrite: 16})
	writeFile(t, filepath.Join(root, "f"), "old\n")
	if err := os.Mkdir(filepath.Join(root, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}

	err := r.Write("f", bytes.Repeat([]byte("x"), 17), 0o644)
	want := `writing 17 bytes to "f" exceeds the write limit of 16 bytes; nothing was written`
	if !errorMatches(err, want) {
		t.Errorf("Write over the limit: %v, want %q", err, want)
	}
	if got := readFile(t, filepath.Join(root, "f")); got != "old\n" {
		t.Errorf("after a failed Write the file holds %q, want %q", got, "old\n")
	}
	if err := r.Write("dir", []byte("x"), 0o644); !errorMatches(err, `"dir" is a directory; cannot write it`) {
		t.Errorf("Write over a directory: %v", err)
	}
	if err := r.Write("nodir/f", []byte("x"), 0o644); !errorMatches(err, `the directory "nodir" of "nodir/f" does not exist`) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Write in a missing directory: %v", err)
	}
	assertOnly(t, r, ".", "dir", "f")
	if err := r.Write("f", []byte("exactly 16 bytes"), 0o644); err != nil {
		t.Errorf("Write at the limit: %v", err)
	}
}

func TestWriteModes(t *testing.T) {
	root := t.TempDir()
	r := openRoot(t, root, Limits{})
	writeFile(t, filepath.Join(root, "script"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(root, "script"), 0o751); err != nil {
		t.Fatal(err)
	}
	if err := r.Write("script", []byte("#!/bin/sh\ntrue\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.Write("new", []byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]fs.FileMode{"script": 0o751, "new": 0o644 &^ umask(t, root)} {
		fi, err := os.Lstat(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode(); got != want {
			t.Errorf("mode of %s = %v, want %v", name, got, want)
		}
	}
}

// umask finds the process umask by creating a file with mode 0o777.
func umask(t *testing.T, dir string) fs.FileMode {
	p := filepath.Join(dir, "umask-probe")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o777)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(p)
	return 0o777 &^ fi.Mode().Perm()
}

func TestWriteRefusesSymlink(t *testing.T) {
	root := t.TempDir()
	r := openRoot(t, root, Limits{})
	writeFile(t, filepath.Join(root, "target"), "target\n")
	symlink(t, "target", filepath.Join(root, "link"))
	for name, err := range map[string]error{
		"Write":  r.Write("link", []byte("x"), 0o644),
		"Append": r.Append("link", []byte("x")),
	} {
		if !errorMatches(err, `"link" is a symlink`) {
			t.Errorf("%s through a symlink: %v", name, err)
		}
	}
	if got := readFile(t, filepath.Join(root, "target")); got != "target\n" {
		t.Errorf("the symlink's target holds %q, want it unchanged", got)
	}
	if fi, err := os.Lstat(filepath.Join(root, "link")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v, %v", fi, err)
	}
}

func TestAppend(t *testing.T) {
	root := t.TempDir()
	r := openRoot(t, root, Limits{MaxWrite: 10})
	for _, step := range []struct {
		data    string
		want    string // the file afterwards
		wantErr string
	}{
		{"abc", "abc", ""},
		{"defg", "abcdefg", ""},
		{"hijk", "abcdefg", `appending 4 bytes to "f" (now 7 bytes) would exceed the write limit of 10 bytes; nothing was appended`},
		{"hij", "abcdefghij", ""},
	} {
		err := r.Append("f", []byte(step.data))
		if step.wantErr == "" && err != nil || step.wantErr != "" && !errorMatches(err, step.wantErr) {
			t.Errorf("Append(%q) = %v, want %q", step.data, err, step.wantErr)
		}
		if got := readFile(t, filepath.Join(root, "f")); got != step.want {
			t.Errorf("after Append(%q) the file holds %q, want %q", step.data, got, step.want)
		}
	}
	if err := r.Append("g", []byte("0123456789x")); !errorMatches(err, "would exceed the write limit") {
		t.Errorf("Append over the limit to a new file: %v", err)
	}
	assertOnly(t, r, ".", "f")
}

func TestAppendRefusesHardLink(t *testing.T) {
	root, outside := newDirs(t)
	r := openRoot(t, root, Limits{})
	if err := os.Link(filepath.Join(outside, "secret.txt"), filepath.Join(root, "hard")); err != nil {
		t.Fatal(err)
	}
	err := r.Append("hard", []byte("more\n"))
	if !errorMatches(err, `"hard" has 2 hard links`) || warden.ErrorCodeOf(err) != warden.EInvalid {
		t.Errorf("Append to a hard link: %v", err)
	}
	if got := readFile(t, filepath.Join(outside, "secret.txt")); got != outsideSecret+"\n" {
		t.Errorf("the outside file holds %q after Append", got)
	}
	// Write replaces the name: the outside file keeps its content.
	if err := r.Write("hard", []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(outside, "secret.txt")); got != outsideSecret+"\n" {
		t.Errorf("the outside file holds %q after Write", got)
	}
}

// TestReadLimit checks that a file over the read limit is an error giving both
// sizes, never a truncated read.
func TestReadLimit(t *testing.T) {
	root := t.TempDir()
	r := openRoot(t, root, Limits{MaxRead: 8})
	writeFile(t, filepath.Join(root, "small"), "12345678")
	writeFile(t, filepath.Join(root, "big"), "123456789")
	if b, err := r.Read("small"); err != nil || string(b) != "12345678" {
		t.Errorf("Read(small) = %q, %v", b, err)
	}
	b, err := r.Read("big")
	if want := `"big" is 9 bytes, more than the read limit of 8 bytes`; b != nil || !errorMatches(err, want) {
		t.Errorf("Read(big) = %q, %v; want an error %q", b, err, want)
	}
	if _, err := r.Read("missing"); !errors.Is(err, fs.ErrNotExist) || warden.ErrorCodeOf(err) != warden.ENotFound {
		t.Errorf("Read(missing) = %v, want a not-found error", err)
	}
}
