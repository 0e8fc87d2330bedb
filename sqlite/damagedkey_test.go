package sqlite

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// TestDamagedKeySaysWhatToDo: an audit.key emptied or cut short refuses the
// home with a *warden.Error naming the key and the way back (before: a bare
// internal error, shown as "open the audit database … run warden init"),
// and that way back works: moved aside, recover starts a new chain.
func TestDamagedKeySaysWhatToDo(t *testing.T) {
	h := newAnchoredHome(t)
	s := h.mustOpen(t)
	h.record(t, s, 3)
	s.Close()
	if err := os.WriteFile(h.opt.Key, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := h.open(t)
	if warden.ErrorCodeOf(err) != warden.EConflict || !strings.Contains(err.Error(), "is damaged") ||
		!strings.Contains(warden.UserMessage(err), "warden audit recover") {
		t.Fatalf("open with an empty key = %v; want a refusal naming the damaged key and how to recover", err)
	}
	if err := os.Rename(h.opt.Key, h.opt.Key+".damaged"); err != nil {
		t.Fatal(err)
	}
	if res, err := Recover(ctx, h.db, h.opt, "test", time.Now()); err != nil || !res.NewChain {
		t.Fatalf("Recover after moving the damaged key aside = %+v, %v; want a new chain", res, err)
	}
	if rep := h.verify(t); !rep.OK() {
		t.Fatalf("Verify after recovery = %+v", rep)
	}
}
