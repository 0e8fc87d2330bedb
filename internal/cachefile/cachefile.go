// Package cachefile writes the files warden keeps beside its policy to
// spare later processes work (the policy cache, the compiled filesystem and
// network rules): each is replaced whole, atomically, and never synced. A
// file cut short by a crash fails the checksum its reader keeps, and is
// computed again; so is one that could not be written.
//
// Seal and Open are the binary caches' frame (the compiled filesystem and
// network rules): a magic line naming the format, the CRC-32 (IEEE) of the
// body, and the body. IEEE, not Castagnoli: hash/crc32 builds no tables
// for it in a fresh process.
package cachefile

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
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
