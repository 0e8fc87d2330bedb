package cachefile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteReplacesWhole writes a file twice, into a directory that does not
// exist yet: the second content replaces the first and no temporary file is
// left beside it.
func TestWriteReplacesWhole(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	path := filepath.Join(dir, "rules")
	Write(path, []byte("first, and longer"))
	Write(path, []byte("second"))
	if b, err := os.ReadFile(path); err != nil || string(b) != "second" {
		t.Fatalf("after two writes the file holds %q, %v; want the second", b, err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the directory made: %v, %v; want mode 0700", fi, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the directory holds %d entries; want only the file", len(ents))
	}
}

// TestWriteFailureLeavesNothing: a path under a regular file cannot be
// written; nothing panics and nothing is made.
func TestWriteFailureLeavesNothing(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	Write(filepath.Join(blocker, "cache", "rules"), []byte("x"))
	if fi, err := os.Stat(blocker); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the blocker changed: %v, %v", fi, err)
	}
}

// TestSealOpen: Open returns the body Seal framed, and refuses the same file
// under another magic, cut short anywhere, or with any byte changed.
func TestSealOpen(t *testing.T) {
	const magic = "warden-test-cache 1\n"
	body := []byte("the compiled rules")
	file := Seal(magic, body)
	if got, ok := Open(file, magic); !ok || string(got) != string(body) {
		t.Fatalf("Open(Seal) = %q, %v; want the body", got, ok)
	}
	if _, ok := Open(file, "warden-test-cache 2\n"); ok {
		t.Error("opened under another magic")
	}
	for n := range len(file) {
		if _, ok := Open(file[:n], magic); ok {
			t.Errorf("opened cut to %d of %d bytes", n, len(file))
		}
	}
	for i := range file {
		bad := append([]byte(nil), file...)
		bad[i] ^= 0x20
		if _, ok := Open(bad, magic); ok {
			t.Errorf("opened with byte %d changed", i)
		}
	}
}
