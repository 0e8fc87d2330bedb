package sqlite

import (
	"net/url"

	"github.com/ncruces/go-sqlite3/util/vfsutil"
	"github.com/ncruces/go-sqlite3/vfs"
)

// walVFSName is the VFS every connection of this package opens with: the
// default one, whose WAL files gather a commit's writes into one (walFile).
// The files are SQLite's own format; any other program (sqlite3, another
// warden) reads and writes them with its default VFS.
const walVFSName = "warden-wal"

func init() { vfs.Register(walVFSName, walVFS{vfs.Find("")}) }

// walVFS is the default VFS, except that it opens WAL files as walFiles.
type walVFS struct{ vfs.VFS }

func (v walVFS) OpenFilename(name *vfs.Filename, flags vfs.OpenFlag) (vfs.File, vfs.OpenFlag, error) {
	f, flags, err := vfsutil.WrapOpenFilename(v.VFS, name, flags)
	if err != nil || flags&vfs.OPEN_WAL == 0 {
		return f, flags, err
	}
	return &walFile{File: f}, flags, nil
}

// walMaxBuffer is the most a walFile holds before it writes: a group
// commit of the proxy's 16 clients writes about 20 frames (80 KiB).
const walMaxBuffer = 256 << 10

// walFile gathers consecutive writes to a WAL file and writes them in one
// call, before any read, sync, size, truncate or close of the file. SQLite
// writes a commit's frames one after another, each as a 24-byte header and
// then its page, two writes a frame, and syncs the file once at the end:
// here that is one write and one sync. A write that fails is reported by
// the call that writes it (the sync of the commit, whose transaction then
// fails); what a crash loses is what an unsynced file may lose anyway.
//
// It is correct only because every connection runs synchronous=FULL
// (conn.go): SQLite then syncs a commit's frames before it publishes them
// in the shared WAL index, so another process never reads a frame still in
// this buffer. Under synchronous=NORMAL it would publish frames not yet
// written; do not open a connection here without FULL.
type walFile struct {
	vfs.File
	buf []byte
	off int64 // the file offset of buf[0]
}

func (f *walFile) WriteAt(p []byte, off int64) (int, error) {
	if len(f.buf) > 0 && (off != f.off+int64(len(f.buf)) || len(f.buf)+len(p) > walMaxBuffer) {
		if err := f.flush(); err != nil {
			return 0, err
		}
	}
	if len(p) >= walMaxBuffer {
		return f.File.WriteAt(p, off)
	}
	if len(f.buf) == 0 {
		f.off = off
	}
	f.buf = append(f.buf, p...)
	return len(p), nil
}

func (f *walFile) flush() error {
	if len(f.buf) == 0 {
		return nil
	}
	_, err := f.File.WriteAt(f.buf, f.off)
	f.buf = f.buf[:0]
	return err
}

func (f *walFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.flush(); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

func (f *walFile) Sync(flags vfs.SyncFlag) error {
	if err := f.flush(); err != nil {
		return err
	}
	return f.File.Sync(flags)
}

func (f *walFile) Size() (int64, error) {
	if err := f.flush(); err != nil {
		return 0, err
	}
	return f.File.Size()
}

func (f *walFile) Truncate(size int64) error {
	if err := f.flush(); err != nil {
		return err
	}
	return f.File.Truncate(size)
}

func (f *walFile) Close() error {
	err := f.flush()
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	return err
}

func (f *walFile) SizeHint(size int64) error { return vfsutil.WrapSizeHint(f.File, size) }
func (f *walFile) ChunkSize(size int)        { vfsutil.WrapChunkSize(f.File, size) }
func (f *walFile) Unwrap() vfs.File          { return f.File }

// connURI is the URI that opens path with walVFSName.
func connURI(path string) string {
	u := url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: "vfs=" + walVFSName}
	return u.String()
}
