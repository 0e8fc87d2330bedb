package postgres

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwarden/warden/internal/pgtest"
)

// TestHostAnchorCatchesACutTail: rows cut from the end of the chain after
// the last keyed checkpoint verify from the database alone, but not against
// what a host saw committed (its anchor), which names them.
func TestHostAnchorCatchesACutTail(t *testing.T) {
	_, owner := openTest(t)
	path := filepath.Join(t.TempDir(), "fleet.anchor")
	s, err := Open(ctx, pgtest.WithRole(t, owner, writerRole), Options{Key: testKey, Anchor: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	seed(t, s, CheckpointEvery+30)
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("Verify of an untouched log = %+v, %v", rep, err)
	}
	asOwnerWithoutTriggers(t, owner, `DELETE FROM audit WHERE seq > 110`)
	bare := openDSN(t, pgtest.WithRole(t, owner, writerRole)) // the same key, no anchor
	if rep, err := bare.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("Verify without the anchor = %+v, %v; the cut after the last checkpoint is not visible from the database alone", rep, err)
	}
	rep, err := s.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || len(rep.Missing) != 1 || !strings.Contains(rep.Missing[0], "audit rows 111 to 130") {
		t.Fatalf("Verify with the host anchor = %+v; want the rows 111 to 130 missing", rep)
	}
}
