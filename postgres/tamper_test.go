package postgres

import (
	"strings"
	"testing"

	"github.com/agentwarden/warden/audit"
)

// asOwnerWithoutTriggers runs sqls as the tables' owner (a superuser here)
// with triggers off: what someone who holds the database itself can do.
func asOwnerWithoutTriggers(t *testing.T, owner string, sqls ...string) {
	t.Helper()
	c := connect(t, owner)
	if _, err := c.Exec(ctx, `SET session_replication_role = replica`); err != nil {
		t.Skipf("the test role cannot turn triggers off (%v): these tamper tests need a superuser DSN", err)
	}
	for _, sql := range sqls {
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
}

// TestRehashedChainIsDetected: a row rewritten with every later hash
// recomputed by warden's own code verifies as a chain, but no longer passes
// through the keyed checkpoint taken before; Verify names the row.
func TestRehashedChainIsDetected(t *testing.T) {
	s, owner := openTest(t)
	seed(t, s, CheckpointEvery+20)
	es, err := s.Entries(ctx, auditAll)
	if err != nil {
		t.Fatal(err)
	}
	// Rewrite row 7 ("deny" instead of "allow") and rechain everything after.
	prev := es[5].Hash
	var sqls []string
	for i := 6; i < len(es); i++ {
		e := &es[i]
		if i == 6 {
			e.Verdict = 0 // deny
		}
		e.PrevHash = prev
		e.Hash = audit.HashEntry(prev, e)
		prev = e.Hash
		sqls = append(sqls, sqlf(`UPDATE audit SET verdict = %s, enc = %s, prev_hash = %s, hash = %s WHERE seq = %d`,
			e.Verdict.String(), audit.AppendEntry(nil, e), e.PrevHash, e.Hash, e.Seq))
	}
	if brk := audit.VerifyEntries(es); brk != nil {
		t.Fatalf("the rechained entries do not verify by themselves: %+v", brk)
	}
	asOwnerWithoutTriggers(t, owner, sqls...)
	rep, err := s.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || rep.FirstBreak == nil || rep.FirstBreak.Table != audit.TableAudit || !strings.Contains(rep.FirstBreak.Why, "checkpoint") {
		t.Fatalf("Verify after a rechained rewrite = %+v; want a break at the checkpoint", rep)
	}
}

// TestAlteredColumnIsDetected: a query column changed to mislead SQL
// (the verdict of a denial made "allow"), its encoding left alone, is a
// break at that row.
func TestAlteredColumnIsDetected(t *testing.T) {
	s, owner := openTest(t)
	seed(t, s, 10)
	asOwnerWithoutTriggers(t, owner, `UPDATE audit SET resource = 'BONK' WHERE seq = 4`)
	rep, err := s.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.FirstBreak == nil || rep.FirstBreak.Seq != 4 || !strings.Contains(rep.FirstBreak.Why, "resource column") {
		t.Fatalf("Verify after altering a column = %+v; want a break at row 4 naming the resource column", rep.FirstBreak)
	}
}

// TestLoweredTotalIsDetected: a running total of the spend ledger lowered
// behind warden's back (which would let more through the cap) is a break.
func TestLoweredTotalIsDetected(t *testing.T) {
	s, owner := openTest(t)
	seed(t, s, 10)
	asOwnerWithoutTriggers(t, owner, `UPDATE spend_minutes SET amount_micros = 0`)
	rep, err := s.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.FirstBreak == nil || rep.FirstBreak.Table != "spend_minutes" {
		t.Fatalf("Verify after lowering the running totals = %+v; want a break in spend_minutes", rep.FirstBreak)
	}
}

// TestForgedCheckpointIsDetected: a checkpoint whose MAC was not made with
// the fleet's key is a break.
func TestForgedCheckpointIsDetected(t *testing.T) {
	s, owner := openTest(t)
	seed(t, s, CheckpointEvery+1)
	asOwnerWithoutTriggers(t, owner, `UPDATE chain_checkpoints SET mac = repeat('0', 64)`)
	rep, err := s.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.FirstBreak == nil || rep.FirstBreak.Table != "chain_checkpoints" {
		t.Fatalf("Verify after forging a checkpoint's MAC = %+v; want a break in chain_checkpoints", rep.FirstBreak)
	}
}
