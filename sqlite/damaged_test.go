package sqlite

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// TestDamagedDatabaseIsALoss: a warden.db that SQLite cannot read (cut
// short by a crash or a careless copy, or overwritten) is what the anchor
// recorded gone missing, not an unexplained failure: opening it is refused
// with ErrLost and the hint to recover, Verify reports it, and Recover keeps
// it aside and starts a new chain that records the loss. Before, every
// command failed with "open the audit database" and recover could not
// open it either, so no command could bring the home back.
func TestDamagedDatabaseIsALoss(t *testing.T) {
	for name, damage := range map[string]func(t *testing.T, db string){
		"cut short": func(t *testing.T, db string) {
			fi, err := os.Stat(db)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(db, fi.Size()/3); err != nil {
				t.Fatal(err)
			}
		},
		"overwritten": func(t *testing.T, db string) {
			if err := os.WriteFile(db, []byte(strings.Repeat("not a database ", 400)), 0o600); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			h := newAnchoredHome(t)
			s := h.mustOpen(t)
			h.record(t, s, 300)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			// Move every row into warden.db, then lose the WAL with it.
			c, err := openConn(ctx, h.db, false)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.c.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
				t.Fatal(err)
			}
			c.close()
			damage(t, h.db)
			for _, p := range []string{h.db + "-wal", h.db + "-shm"} {
				os.Remove(p)
			}

			_, err = h.open(t)
			if !errors.Is(err, ErrLost) || !strings.Contains(warden.UserMessage(err), "warden audit recover") ||
				!strings.Contains(err.Error(), "cannot read") {
				t.Fatalf("open a damaged database = %v; want ErrLost saying it cannot be read and how to recover", err)
			}
			rep := h.verify(t)
			if rep.OK() || !strings.Contains(strings.Join(rep.Missing, "; "), "cannot read") {
				t.Fatalf("Verify of a damaged database = %+v; want it to name the damaged database", rep)
			}
			res, err := Recover(ctx, h.db, h.opt, "test", time.Now())
			if err != nil || !res.NewChain || len(res.Kept) == 0 {
				t.Fatalf("Recover = %+v, %v; want a new chain and the damaged file kept aside", res, err)
			}
			s = h.mustOpen(t)
			rows, err := s.Entries(ctx, warden.AuditFilter{})
			if err != nil || len(rows) != 1 || rows[0].Action != "recover" || !strings.Contains(rows[0].Reason, "300 audit rows") {
				t.Fatalf("new chain = %+v, %v; want one recover row naming the old anchor's 300 rows", rows, err)
			}
			s.Close()
			if rep := h.verify(t); !rep.OK() {
				t.Fatalf("Verify after recovery = %+v", rep)
			}
		})
	}
}
