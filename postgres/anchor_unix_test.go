//go:build unix

package postgres

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// TestHostAnchorNeverWaits: the host anchor is advanced after every commit,
// before its callers are answered, so nothing about the anchor may hold
// them: a named pipe where the anchor or its temporary file belongs (a
// broken home) is never opened blocking (it is replaced), and a lock held elsewhere (a
// warden process stopped while it held it) is waited for at most
// anchorLockWait, the anchor then left behind, which is safe. Before,
// reading the pipe waited for a writer, and the lock for as long as it was
// held: every Record of the host hung, and a hook held past its host's
// timeout lets the call through.
func TestHostAnchorNeverWaits(t *testing.T) {
	old := anchorLockWait
	anchorLockWait = 200 * time.Millisecond
	t.Cleanup(func() { anchorLockWait = old })
	within := func(t *testing.T, a *hostAnchor, rows int64) {
		t.Helper()
		done := make(chan struct{})
		go func() { a.advance(rows, "head", 0, ""); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("advance did not return in 10 s")
		}
	}
	for _, name := range []string{"anchor", "temporary file"} {
		t.Run("pipe for the "+name, func(t *testing.T) {
			a := &hostAnchor{path: filepath.Join(t.TempDir(), "fleet.anchor"), key: testKey}
			pipe := a.path
			if name != "anchor" {
				pipe = a.path + ".tmp"
			}
			if err := syscall.Mkfifo(pipe, 0o600); err != nil {
				t.Skipf("cannot make a named pipe here: %v", err)
			}
			within(t, a, 3)
			// A damaged anchor starts again from this commit, and what
			// stands in the temporary file's place is replaced.
			if af, ok, err := a.read(); err != nil || !ok || af.AuditRows != 3 {
				t.Fatalf("after advance the anchor is %+v, %v, %v; want 3 audit rows", af, ok, err)
			}
		})
	}
	t.Run("lock held", func(t *testing.T) {
		a := &hostAnchor{path: filepath.Join(t.TempDir(), "fleet.anchor"), key: testKey}
		within(t, a, 1)
		f, err := os.OpenFile(a.path+".lock", os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		within(t, a, 2)
		if af, ok, err := a.read(); err != nil || !ok || af.AuditRows != 1 {
			t.Fatalf("with the lock held elsewhere the anchor is %+v, %v, %v; want it left at 1 row", af, ok, err)
		}
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		within(t, a, 2)
		if af, ok, err := a.read(); err != nil || !ok || af.AuditRows != 2 {
			t.Fatalf("once the lock is given back the anchor is %+v, %v, %v; want 2 rows", af, ok, err)
		}
	})
}

// TestJournalPipeIsRefusedAtOnce: a named pipe where the fleet journal
// belongs is refused at once, saying what it is and what to do. Before, a
// replay read it until a writer came, holding the journal's lock all the
// while, so every later record failed as "stayed locked by another warden
// process", which names the wrong culprit.
func TestJournalPipeIsRefusedAtOnce(t *testing.T) {
	j := &journal{path: filepath.Join(t.TempDir(), "fleet.journal")}
	if err := syscall.Mkfifo(j.path, 0o600); err != nil {
		t.Skipf("cannot make a named pipe here: %v", err)
	}
	for name, op := range map[string]func() error{
		"append": func() error { return j.append(journalRecord(journalEntry, []byte("x"))) },
		"drain":  func() error { _, err := j.drain(func([]journalRow) error { return nil }); return err },
	} {
		done := make(chan error, 1)
		go func() { done <- op() }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(warden.UserMessage(err), "move it aside") {
				t.Errorf("%s with a named pipe for the journal = %v; want a refusal saying it is not a regular file and what to do", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s with a named pipe for the journal did not return in 10 s", name)
		}
	}
}
