package config

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.yaml")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(p, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := string(readBytes(t, p)); got != "new" {
		t.Errorf("contents = %q, want new", got)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	assertNoTemp(t, dir)

	// A new file in the current directory.
	t.Chdir(dir)
	if err := WriteAtomic("g.yaml", []byte("g"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := string(readBytes(t, "g.yaml")); got != "g" {
		t.Errorf("contents = %q", got)
	}
}

func TestWriteAtomicFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	// The target is a non-empty directory, so the final rename fails.
	target := filepath.Join(dir, "target")
	if err := os.MkdirAll(filepath.Join(target, "child"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(target, []byte("data"), 0o600); err == nil {
		t.Fatal("WriteAtomic over a directory = nil error")
	}
	assertNoTemp(t, dir)
	if fi, err := os.Stat(target); err != nil || !fi.IsDir() {
		t.Errorf("target changed: %v, %v", fi, err)
	}

	// A missing directory fails before anything is written.
	if err := WriteAtomic(filepath.Join(dir, "nope", "f"), []byte("x"), 0o600); err == nil {
		t.Error("WriteAtomic into a missing directory = nil error")
	}
}
