//go:build amd64 || arm64

package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestMaskOfAPathGoneMeanwhile: a mask whose path was removed between its
// lstat and its mount (a host socket whose server stopped while the
// sandbox started: seen as runs failing with exit 125 while other
// sandboxes came and went) hides nothing and fails nothing; a path still
// there whose mount failed, or any other error, still fails the run.
func TestMaskOfAPathGoneMeanwhile(t *testing.T) {
	dir := t.TempDir()
	gone := filepath.Join(dir, "agent.sock")
	if err := maskFailed(gone, unix.ENOENT); err != nil {
		t.Errorf("a path gone since the lstat: %v, want no error", err)
	}
	there := filepath.Join(dir, "still")
	if err := os.WriteFile(there, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := maskFailed(there, unix.ENOENT); err == nil {
		t.Error("ENOENT for a path that is still there: no error, want the run to fail")
	}
	if err := maskFailed(gone, unix.EPERM); err == nil {
		t.Error("EPERM: no error, want the run to fail")
	}
	if err := maskFailed(there, nil); err != nil {
		t.Errorf("a mount that worked: %v", err)
	}
}
