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

// TestReaderReadsWhatWriterWrote: every kind of value comes back in order;
// a count or string length past the end, or a body cut anywhere, sets Bad,
// which then holds for every read after.
func TestReaderReadsWhatWriterWrote(t *testing.T) {
	var w Writer
	w.Uint(3)
	w.Uint(1 << 40)
	w.Int(-5)
	w.Byte(0xff)
	w.Str("rules")
	w.Str("")
	r := NewReader(w.B)
	if n, big, i, c, s, e := r.Count(), r.Uint(), r.Int(), r.Byte(), r.Str(), r.Str(); n != 3 || big != 1<<40 || i != -5 || c != 0xff || s != "rules" || e != "" || !r.Done() {
		t.Fatalf("read %d %d %d %#x %q %q, done %v; want what was written", n, big, i, c, s, e, r.Done())
	}
	for cut := range len(w.B) {
		r := NewReader(w.B[:cut])
		r.Count()
		r.Uint()
		r.Int()
		r.Byte()
		r.Str()
		r.Str()
		if !r.Bad || r.Done() {
			t.Errorf("cut to %d of %d bytes: Bad %v; want set", cut, len(w.B), r.Bad)
		}
	}
	r = NewReader([]byte{5, 'a', 'b'})
	if r.Count(); !r.Bad {
		t.Error("a count of 5 with 2 bytes left was read")
	}
	if r.Byte() != 0 || r.Str() != "" || r.Uint() != 0 || !r.Bad {
		t.Error("reads after Bad returned values")
	}
	r = NewReader([]byte{3, 'a', 'b'})
	if s := r.Str(); s != "" || !r.Bad {
		t.Errorf("a 3-byte string with 2 bytes left read as %q", s)
	}
}
