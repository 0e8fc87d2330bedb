// Package cachefile writes the files warden keeps beside its policy to
// spare later processes work (the policy cache, the compiled filesystem and
// network rules): each is replaced whole, atomically, and never synced. A
// file cut short by a crash fails the checksum its reader keeps, and is
// computed again; so is one that could not be written.
//
// Seal and Open are the binary caches' frame (the compiled filesystem and
// network rules): a magic line naming the format, the CRC-32 (IEEE) of the
// body, and the body. IEEE, not Castagnoli: hash/crc32 builds no tables
// for it in a fresh process. Writer and Reader are the values of a body
// (the compiled filesystem rules, the policy cache's rule lists).
package cachefile

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/agentwarden/warden/internal/regfile"
)

// Seal is a cache file holding body in the format magic names: magic, the
// CRC-32 (IEEE) of body (4 bytes, little-endian), and body.
func Seal(magic string, body []byte) []byte {
	out := make([]byte, 0, len(magic)+4+len(body))
	out = append(out, magic...)
	out = binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(body))
	return append(out, body...)
}

// Open returns the body of data, a file Seal made with magic; false when
// data is another format, or is cut short or damaged (its checksum fails).
// The body shares data.
func Open(data []byte, magic string) ([]byte, bool) {
	if len(data) < len(magic)+4 || string(data[:len(magic)]) != magic {
		return nil, false
	}
	body := data[len(magic)+4:]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(data[len(magic):]) {
		return nil, false
	}
	return body, true
}

// MaxSize bounds a cache file Read returns: the caches of a policy of
// thousands of rules are a few hundred KB.
const MaxSize = 64 << 20

// Read returns the cache file at path; false when it cannot be read or is
// not what Write makes: a regular file, not a symlink, of at most MaxSize
// bytes. It never waits (regfile.Open): a named pipe or a device put in a
// cache's place (os.ReadFile waited forever on a pipe, and read /dev/zero
// until memory ran out, so every decision hung) is ignored like a damaged
// file, and the caller computes what the cache would have held.
func Read(path string) ([]byte, bool) {
	f, fi, err := regfile.Open(path, os.O_RDONLY, 0, false)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if fi.Size() > MaxSize {
		return nil, false
	}
	data, err := regfile.ReadAll(f, MaxSize)
	return data, err == nil
}

// Write replaces the file at path with data: a temporary file beside it,
// renamed over it. The directory is made (mode 0700) when missing. Failures
// are ignored: the next process computes what the file would have held.
func Write(path string, data []byte) {
	dir := filepath.Dir(path)
	if os.MkdirAll(dir, 0o700) != nil {
		return
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr != nil || cerr != nil || os.Rename(f.Name(), path) != nil {
		os.Remove(f.Name())
	}
}

// Writer appends the values of a cache file's body: unsigned and signed
// varints, bytes, and strings (a uvarint length and the bytes).
type Writer struct{ B []byte }

func (w *Writer) Uint(n uint64) { w.B = binary.AppendUvarint(w.B, n) }

func (w *Writer) Int(n int64) { w.B = binary.AppendVarint(w.B, n) }

func (w *Writer) Byte(c byte) { w.B = append(w.B, c) }

func (w *Writer) Str(s string) {
	w.Uint(uint64(len(s)))
	w.B = append(w.B, s...)
}

// Reader reads what a Writer appended, in the same order. Bad is set at the
// first value that does not fit (cut short, or a length past the end), and
// every read after it returns zero: a decoder reads on and checks Bad once.
// The strings it returns share S.
type Reader struct {
	S   string
	Bad bool
}

// NewReader reads body in place: the strings read share its bytes, so
// nothing may write body after.
func NewReader(body []byte) Reader {
	return Reader{S: unsafe.String(unsafe.SliceData(body), len(body))}
}

func (r *Reader) Uint() uint64 {
	if r.Bad {
		return 0
	}
	if r.S != "" && r.S[0] < 0x80 { // one byte: most lengths and counts
		v := uint64(r.S[0])
		r.S = r.S[1:]
		return v
	}
	v, k := binary.Uvarint([]byte(r.S[:min(len(r.S), binary.MaxVarintLen64)]))
	if k <= 0 {
		r.Bad = true
		return 0
	}
	r.S = r.S[k:]
	return v
}

func (r *Reader) Int() int64 {
	if r.Bad {
		return 0
	}
	v, k := binary.Varint([]byte(r.S[:min(len(r.S), binary.MaxVarintLen64)]))
	if k <= 0 {
		r.Bad = true
		return 0
	}
	r.S = r.S[k:]
	return v
}

// Count reads a count of items that take at least one byte each: one past
// what is left is Bad, so a damaged count cannot make its reader allocate
// more than the file could hold.
func (r *Reader) Count() int {
	n := r.Uint()
	if n > uint64(len(r.S)) {
		r.Bad = true
		return 0
	}
	return int(n)
}

func (r *Reader) Byte() byte {
	if r.Bad || r.S == "" {
		r.Bad = true
		return 0
	}
	c := r.S[0]
	r.S = r.S[1:]
	return c
}

func (r *Reader) Str() string {
	n := r.Count()
	if r.Bad {
		return ""
	}
	s := r.S[:n]
	r.S = r.S[n:]
	return s
}

// Done reports whether everything was read, and read well.
func (r *Reader) Done() bool { return !r.Bad && r.S == "" }
