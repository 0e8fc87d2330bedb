//go:build unix

package sqlite

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// TestSpecialFileInTheHomeIsRefusedAtOnce: a named pipe where the
// checkpoint key or the spool belongs (a broken or tampered home) is
// refused at once, with a *warden.Error saying what is wrong, never waited
// on: opening a pipe with no writer (the key) or no reader (the spool)
// waited forever, and a hook that hangs past its host's timeout lets the
// call through.
func TestSpecialFileInTheHomeIsRefusedAtOnce(t *testing.T) {
	within := func(t *testing.T, what string, fn func() error) error {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- fn() }()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatalf("%s did not return in 10 s: it waits on the named pipe", what)
			return nil
		}
	}
	t.Run("key", func(t *testing.T) {
		h := newAnchoredHome(t)
		if err := os.Remove(h.opt.Key); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(h.opt.Key, 0o600); err != nil {
			t.Skipf("cannot make a named pipe here: %v", err)
		}
		err := within(t, "open with a named pipe for the key", func() error {
			s, err := OpenWith(ctx, h.db, h.opt)
			if err == nil {
				s.Close()
			}
			return err
		})
		if warden.ErrorCodeOf(err) != warden.EConflict || !strings.Contains(err.Error(), "not a regular file") ||
			!strings.Contains(warden.UserMessage(err), "warden audit recover") {
			t.Fatalf("open with a named pipe for the key = %v; want a refusal saying the key is not a regular file and how to recover", err)
		}
	})
	t.Run("spool", func(t *testing.T) {
		h := newAnchoredHome(t)
		spool := h.db + ".spool"
		os.Remove(spool)
		if err := syscall.Mkfifo(spool, 0o600); err != nil {
			t.Skipf("cannot make a named pipe here: %v", err)
		}
		err := within(t, "a spooled Record with a named pipe for the spool", func() error {
			s := OpenDeferredWith(h.db, h.opt)
			defer s.Close()
			return s.Record(ctx, spoolEntry(0), nil)
		})
		if warden.ErrorCodeOf(err) != warden.EConflict || !strings.Contains(err.Error(), "not a regular file") ||
			!strings.Contains(warden.UserMessage(err), "move it aside") {
			t.Fatalf("a spooled Record with a named pipe for the spool = %v; want a refusal saying the spool is not a regular file and what to do", err)
		}
		if _, serr := os.Lstat(filepath.Join(h.dir, "warden.db.spool")); serr != nil {
			t.Fatalf("the spool's pipe is gone: %v", serr)
		}
	})
}

// TestSpoolLockedTooLongIsRefused: a Record that finds the spool locked
// (another warden process stopped, or stuck, while it held the lock) waits
// at most spoolLockWait and is then refused with a *warden.Error saying
// so; it waited for as long as the lock was held, and a hook held past its
// host's timeout lets the call through.
func TestSpoolLockedTooLongIsRefused(t *testing.T) {
	old := spoolLockWait
	spoolLockWait = 200 * time.Millisecond
	t.Cleanup(func() { spoolLockWait = old })
	h := newAnchoredHome(t)
	s := OpenDeferredWith(h.db, h.opt)
	defer s.Close()
	if err := s.Record(ctx, spoolEntry(0), nil); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(h.db+".spool", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Record(ctx, spoolEntry(1), nil) }()
	select {
	case err := <-done:
		if warden.ErrorCodeOf(err) != warden.EUnavailable || !strings.Contains(err.Error(), "locked") {
			t.Fatalf("Record with the spool locked = %v; want a refusal saying the spool stayed locked", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Record with the spool locked did not return in 10 s: it waits for the lock")
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := s.Record(ctx, spoolEntry(2), nil); err != nil {
		t.Fatalf("Record once the lock is given back: %v", err)
	}
}
