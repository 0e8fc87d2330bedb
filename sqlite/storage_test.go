package sqlite

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/agentwarden/warden"
)

// TestStorageErrorsSayWhatToDo: a write that failed because the disk is
// full or read-only reaches the user as a *warden.Error naming that and
// what to do, however deep it was wrapped; an error that already speaks to
// the user, or any other, passes unchanged.
func TestStorageErrorsSayWhatToDo(t *testing.T) {
	full := errors.New("no /dev/full here")
	if f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0); err == nil {
		_, full = f.Write([]byte("x")) // a real ENOSPC, as a spool append gets it
		f.Close()
	}
	if !errors.Is(full, syscall.ENOSPC) {
		full = &os.PathError{Op: "write", Path: "warden.db.spool", Err: syscall.ENOSPC}
	}
	lost := warden.Errorf(warden.EConflict, "the audit log is not what this home recorded").WithHint("recover")
	other := errors.New("something else")
	cases := []struct {
		name     string
		err      error
		msg      string // "" when err must pass unchanged
		hintWord string
	}{
		{"disk full", fmt.Errorf("record audit entry: spool: %w", full), "is full", "free space"},
		{"quota", fmt.Errorf("record audit entry: %w", syscall.EDQUOT), "is full", "free space"},
		{"read-only filesystem", fmt.Errorf("record audit entry: %w", &os.PathError{Op: "open", Path: "warden.db.spool", Err: syscall.EROFS}), "read-only", "writable"},
		{"already for the user", lost, "", ""},
		{"other", other, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := storage(tc.err)
			if tc.msg == "" {
				if got != tc.err {
					t.Fatalf("storage(%v) = %v; want it unchanged", tc.err, got)
				}
				return
			}
			var we *warden.Error
			if !errors.As(got, &we) || !strings.Contains(we.Message, tc.msg) || !strings.Contains(we.Hint, tc.hintWord) || !errors.Is(got, errors.Unwrap(tc.err)) {
				t.Fatalf("storage(%v) = %#v; want a *warden.Error saying %q with a hint to %q, keeping the cause", tc.err, got, tc.msg, tc.hintWord)
			}
		})
	}
	if storage(nil) != nil {
		t.Error("storage(nil) != nil")
	}
}
