package sqlite

import (
	"os"
	"testing"

	"github.com/agentwarden/warden"
)

// TestWALBounded opens, records and closes many times, like warden's
// one-decision processes. The WAL must persist between small closes (no
// checkpoint-on-close cost) and must never grow far past walCheckpointBytes.
func TestWALBounded(t *testing.T) {
	s, path := openTest(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var maxWAL int64
	persisted := false
	for i := range 120 {
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		e := &warden.AuditEntry{TraceID: "t", Capability: warden.CapShell, Action: "exec", Resource: "ls",
			Verdict: warden.Allow, Stages: []warden.StageAnswer{{Stage: "shellguard", Verdict: warden.Allow}}}
		if err := s.Record(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path + "-wal")
		if err == nil {
			maxWAL = max(maxWAL, fi.Size())
			persisted = persisted || i == 0
		}
	}
	if !persisted {
		t.Errorf("the WAL was checkpointed away after the first small close; want it kept (NO_CKPT_ON_CLOSE)")
	}
	// One Record adds well under 100 KB; Close checkpoints once past the limit.
	if limit := int64(walCheckpointBytes + 100<<10); maxWAL > limit {
		t.Errorf("WAL reached %d bytes; want at most %d", maxWAL, limit)
	}
	t.Logf("largest WAL after close: %d bytes (limit %d)", maxWAL, walCheckpointBytes)

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep, err := s.Verify(ctx)
	if err != nil || !rep.OK() || rep.AuditRows != 120 {
		t.Errorf("Verify = %+v, %v; want 120 intact rows", rep, err)
	}
}
