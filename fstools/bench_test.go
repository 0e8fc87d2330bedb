package fstools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bench4K makes a root holding a 4 KiB file at sub/dir/file.txt.
func bench4K(b *testing.B) (r *Root, path string) {
	root := b.TempDir()
	path = filepath.Join(root, "sub", "dir", "file.txt")
	writeFile(b, path, strings.Repeat("x", 4096))
	return openRoot(b, root, Limits{}), path
}

// BenchmarkRead4K reads a 4 KiB file two directories down through Root.Read.
func BenchmarkRead4K(b *testing.B) {
	r, _ := bench4K(b)
	b.SetBytes(4096)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Read("sub/dir/file.txt"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOSReadFile4K reads the same file with os.ReadFile, for comparison.
func BenchmarkOSReadFile4K(b *testing.B) {
	_, path := bench4K(b)
	b.SetBytes(4096)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := os.ReadFile(path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWrite4K replaces a 4 KiB file atomically; most of the time is the
// two fsyncs.
func BenchmarkWrite4K(b *testing.B) {
	r, _ := bench4K(b)
	data := []byte(strings.Repeat("y", 4096))
	b.SetBytes(4096)
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Write("sub/dir/file.txt", data, 0); err != nil {
			b.Fatal(err)
		}
	}
}
