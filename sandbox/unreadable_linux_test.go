package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwarden/warden/sandbox"
)

// TestUnreadableDirectory: a directory in Spec.Unreadable (warden's home)
// is left out of the read-all grant as a whole. A file in it that the
// caller's list of hidden paths missed (one SQLite made after the list was
// taken) cannot be read, while the workspace inside it, granted by name,
// stays readable and writable.
// (Under /tmp, which the sandbox replaces and grants whole, only masks
// hide: the directory is made in /var/tmp.)
func TestUnreadableDirectory(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	s, home := workspaceSpec(t)
	outside, err := os.MkdirTemp("/var/tmp", "warden-unreadable-")
	if err != nil {
		t.Skipf("no directory outside /tmp to test in: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	wh := filepath.Join(outside, ".warden")
	s.Workspace = filepath.Join(wh, "sandbox", "files")
	if err := os.MkdirAll(s.Workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, wh+"/listed.txt", "SECRET-LISTED\n")
	mustWrite(t, wh+"/warden.db-wal", "SECRET-UNLISTED\n")
	s.Hidden = append(s.Hidden, wh+"/listed.txt") // the list missed warden.db-wal
	script := "cat " + wh + "/warden.db-wal; cat " + wh + "/listed.txt; ls " + wh + "; " +
		"echo ws > " + s.Workspace + "/w && cat " + s.Workspace + "/w"

	// Without Unreadable the file the list missed is readable: the case is live.
	r := runAt(t, s, home, "/bin/bash", "-c", script)
	if r.err != nil || !strings.Contains(r.stdout, "SECRET-UNLISTED") {
		t.Fatalf("without Unreadable the unlisted file should be readable (the test would prove nothing): %s", r)
	}

	s.Unreadable = []string{wh}
	r = runAt(t, s, home, "/bin/bash", "-c", script)
	if r.err != nil {
		t.Fatalf("could not run: %v", r.err)
	}
	for _, secret := range []string{"SECRET-UNLISTED", "SECRET-LISTED"} {
		if strings.Contains(r.stdout, secret) {
			t.Errorf("%s shows in the output: %s", secret, r)
		}
	}
	if !strings.Contains(r.stdout, "ws") {
		t.Errorf("the workspace inside the unreadable directory cannot be used: %s", r)
	}
}

// TestUnreadableDirectoryThroughASymlink: an Unreadable directory named
// through a symlink (~/.warden -> /data/warden) is left out of the grant
// where it really is too, not only by the name it was given.
func TestUnreadableDirectoryThroughASymlink(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	s, home := workspaceSpec(t)
	outside, err := os.MkdirTemp("/var/tmp", "warden-unreadable-")
	if err != nil {
		t.Skipf("no directory outside /tmp to test in: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	real := filepath.Join(outside, "data-warden")
	wh := filepath.Join(outside, ".warden")
	if err := os.MkdirAll(filepath.Join(real, "sandbox", "files"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, wh); err != nil {
		t.Fatal(err)
	}
	s.Workspace = filepath.Join(wh, "sandbox", "files")
	mustWrite(t, real+"/warden.db-wal", "SECRET-UNLISTED\n")
	s.Unreadable = []string{wh}
	r := runAt(t, s, home, "/bin/bash", "-c", "cat "+real+"/warden.db-wal; cat "+wh+"/warden.db-wal; echo ws > "+s.Workspace+"/w && cat "+s.Workspace+"/w")
	if r.err != nil {
		t.Fatalf("could not run: %v", r.err)
	}
	if strings.Contains(r.stdout, "SECRET-UNLISTED") {
		t.Errorf("the unreadable directory is read by its real path: %s", r)
	}
	if !strings.Contains(r.stdout, "ws") {
		t.Errorf("the workspace inside the unreadable directory cannot be used: %s", r)
	}
}
