package sqlite

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/util/vfsutil"
	"github.com/ncruces/go-sqlite3/vfs"
)

// countingFile is an in-memory file that counts the writes and syncs that
// reach it, and fails writes with failWrite.
type countingFile struct {
	vfsutil.SliceFile
	writes, syncs int
	failWrite     error
}

func (f *countingFile) WriteAt(p []byte, off int64) (int, error) {
	if f.failWrite != nil {
		return 0, f.failWrite
	}
	f.writes++
	return f.SliceFile.WriteAt(p, off)
}

func (f *countingFile) Sync(vfs.SyncFlag) error { f.syncs++; return nil }

// writeFrames writes n WAL frames as SQLite does, a 24-byte header and then
// a 4 KiB page each, after a 32-byte WAL header, and returns the bytes.
func writeFrames(t *testing.T, w *walFile, n int) []byte {
	t.Helper()
	var want []byte
	write := func(p []byte) {
		if _, err := w.WriteAt(p, int64(len(want))); err != nil {
			t.Fatal(err)
		}
		want = append(want, p...)
	}
	write(bytes.Repeat([]byte{'W'}, 32))
	for i := range n {
		write(bytes.Repeat([]byte{byte('h' + i)}, 24))
		write(bytes.Repeat([]byte{byte('A' + i)}, 4096))
	}
	return want
}

// TestWALFileWritesACommitOnce: the frames of a commit reach the file in one
// write, before its sync, and read back as written.
func TestWALFileWritesACommitOnce(t *testing.T) {
	f := &countingFile{}
	w := &walFile{File: f}
	want := writeFrames(t, w, 20)
	if f.writes != 0 {
		t.Fatalf("%d writes reached the file before the sync, want 0", f.writes)
	}
	if err := w.Sync(vfs.SYNC_FULL); err != nil {
		t.Fatal(err)
	}
	if f.writes != 1 || f.syncs != 1 {
		t.Fatalf("a commit of 20 frames made %d writes and %d syncs, want 1 and 1", f.writes, f.syncs)
	}
	if !bytes.Equal(f.SliceFile, want) {
		t.Fatal("the file does not hold the frames as written")
	}
}

// TestWALFileReadsWhatWasWritten: a read, a size or a write elsewhere in
// the file first writes what is gathered, so the file never reads stale.
func TestWALFileReadsWhatWasWritten(t *testing.T) {
	f := &countingFile{}
	w := &walFile{File: f}
	want := writeFrames(t, w, 2)
	got := make([]byte, 4096)
	if _, err := w.ReadAt(got, 32+24); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want[32+24:32+24+4096]) {
		t.Fatal("ReadAt did not see the gathered page")
	}
	writeFrames(t, w, 1) // rewrites from offset 0: not after what is gathered
	if n, err := w.Size(); err != nil || n != int64(len(want)) {
		t.Fatalf("Size = %d, %v; want %d", n, err, len(want))
	}
	if f.writes != 2 {
		t.Fatalf("%d writes reached the file, want 2 (one before the read, one before the size)", f.writes)
	}
}

// TestWALFileWriteErrorFailsTheSync: a gathered write that fails fails the
// sync, and the file is not synced: the commit is not acknowledged.
func TestWALFileWriteErrorFailsTheSync(t *testing.T) {
	full := errors.New("no space left on device")
	f := &countingFile{}
	w := &walFile{File: f}
	writeFrames(t, w, 3)
	f.failWrite = full
	if err := w.Sync(vfs.SYNC_FULL); !errors.Is(err, full) {
		t.Fatalf("Sync = %v, want the write's error", err)
	}
	if f.syncs != 0 {
		t.Fatal("the file was synced after its write failed")
	}
	// What failed is not kept: SQLite writes the transaction again from
	// its own state, and an old buffer written later, at offsets a newer
	// commit may have used meanwhile, would overwrite its frames.
	f.failWrite = nil
	if err := w.Sync(vfs.SYNC_FULL); err != nil {
		t.Fatal(err)
	}
	if f.writes != 0 || len(f.SliceFile) != 0 {
		t.Fatalf("the failed buffer reached the file later (%d writes, %d bytes)", f.writes, len(f.SliceFile))
	}
}

// TestConnOpensThePathLiterally: connections name their VFS in a URI; a
// path with the characters a URI gives meaning to still names that file.
func TestConnOpensThePathLiterally(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a ?mode=ro#x %41:b.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Record(context.Background(), spoolEntry(1), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if n.Name() != filepath.Base(path) && n.Name() != filepath.Base(path)+"-wal" && n.Name() != filepath.Base(path)+"-shm" {
			t.Errorf("unexpected file %q beside %q", n.Name(), filepath.Base(path))
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

// TestWALReadByTheDefaultVFS: what a store commits through its WAL is read
// by a connection of the default VFS (the sqlite3 shell, another program)
// while the store still has it open.
func TestWALReadByTheDefaultVFS(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warden.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 50 {
		if err := s.Record(context.Background(), spoolEntry(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	c, err := sqlite3.OpenFlags(path, sqlite3.OPEN_READONLY)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, _, err := c.Prepare(`SELECT count(*) FROM audit`)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if !st.Step() {
		t.Fatal(st.Err())
	}
	if n := st.ColumnInt(0); n != 50 {
		t.Fatalf("the default VFS reads %d rows, want 50", n)
	}
}
