package sqlite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
)

func spoolEntry(i int) *warden.AuditEntry {
	return &warden.AuditEntry{
		ID:         uuid.NewString(),
		TraceID:    fmt.Sprintf("trace-%d", i),
		CreatedAt:  time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond),
		Capability: "tool", Action: "call", Resource: "get_price", Tool: "get_price", Tier: 1,
		Verdict: warden.Allow, Reason: "tier 1", Rule: "tools.tier1",
		Stages: []warden.StageAnswer{{Stage: "tool-tier", Verdict: warden.Allow, Reason: "tier 1", Rule: "tools.tier1"}},
	}
}

func countEntries(t *testing.T, path string) []warden.AuditEntry {
	t.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.Entries(context.Background(), warden.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := s.Verify(context.Background()); err != nil || !rep.OK() {
		t.Fatalf("Verify: %+v %v", rep.FirstBreak, err)
	}
	return rows
}

// TestDeferredStoreSpoolsWithoutOpeningTheDatabase: a plain Record on a
// deferred store touches only the spool; the next reader drains it into the
// chain.
func TestDeferredStoreSpoolsWithoutOpeningTheDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warden.db")
	s := OpenDeferred(path)
	for i := range 3 {
		if err := s.Record(context.Background(), spoolEntry(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the database was created by spooled records (stat: %v)", err)
	}
	rows := countEntries(t, path)
	if len(rows) != 3 {
		t.Fatalf("%d rows after draining, want 3", len(rows))
	}
	for i, r := range rows {
		if r.Seq != int64(i+1) || r.TraceID != fmt.Sprintf("trace-%d", i) || len(r.Stages) != 1 || r.Hash == "" {
			t.Errorf("row %d = seq %d trace %s stages %d hash %q", i, r.Seq, r.TraceID, len(r.Stages), r.Hash)
		}
	}
	if fi, err := os.Stat(path + spoolSuffix); err != nil || fi.Size() != 0 {
		t.Fatalf("spool after drain: %v, %v; want empty", fi, err)
	}
}

// TestDebitBypassesTheSpool: a debit needs the atomic check, so it goes to the
// database, and the spool is drained first.
func TestDebitBypassesTheSpool(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warden.db")
	s := OpenDeferred(path)
	defer s.Close()
	if err := s.Record(context.Background(), spoolEntry(0), nil); err != nil {
		t.Fatal(err)
	}
	e := spoolEntry(1)
	if err := s.Record(context.Background(), e, &warden.Debit{Amount: 5, Cap: 10}); err != nil {
		t.Fatal(err)
	}
	if e.Seq != 2 {
		t.Fatalf("debited entry got seq %d, want 2 (after the spooled one)", e.Seq)
	}
	if spent, err := s.SpentSince(context.Background(), time.Time{}); err != nil || spent != 5 {
		t.Fatalf("SpentSince = %v, %v; want 5", spent, err)
	}
}

// TestTornFramesAreSkippedAndReported: a process killed mid-write leaves a torn
// frame; the drain keeps every intact record around it and reports the damage.
func TestTornFramesAreSkippedAndReported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warden.db")
	var data []byte
	for i := range 4 {
		f, err := encodeFrame(spoolEntry(i))
		if err != nil {
			t.Fatal(err)
		}
		switch i {
		case 1:
			f = f[:len(f)/2] // torn: cut short
		case 2:
			f[len(f)-3] ^= 0x20 // damaged: checksum fails
		}
		data = append(data, f...)
	}
	data = append(data, []byte("garbage")...)
	if err := os.WriteFile(path+spoolSuffix, data, 0o600); err != nil {
		t.Fatal(err)
	}
	rows := countEntries(t, path)
	if len(rows) != 2 || rows[0].TraceID != "trace-0" || rows[1].TraceID != "trace-3" {
		t.Fatalf("rows %+v, want trace-0 and trace-3", rows)
	}
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, err := s.Events(context.Background(), warden.EventFilter{Type: "audit_spool_damaged"})
	if err != nil || len(evs) != 1 {
		t.Fatalf("damage events %+v, %v; want one", evs, err)
	}
}

// TestRedrainIsExactlyOnce: a drain that committed but crashed before emptying
// the spool must not record its entries twice.
func TestRedrainIsExactlyOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warden.db")
	s := OpenDeferred(path)
	for i := range 5 {
		if err := s.Record(context.Background(), spoolEntry(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	spooled, err := os.ReadFile(path + spoolSuffix)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(countEntries(t, path)); n != 5 {
		t.Fatalf("%d rows, want 5", n)
	}
	if err := os.WriteFile(path+spoolSuffix, spooled, 0o600); err != nil { // the crash
		t.Fatal(err)
	}
	if n := len(countEntries(t, path)); n != 5 {
		t.Fatalf("%d rows after draining the same spool again, want 5", n)
	}
}

// TestConcurrentSpoolingAndDraining: writers spool while readers drain; every
// record ends up in the chain exactly once.
func TestConcurrentSpoolingAndDraining(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warden.db")
	const writers, each = 6, 40
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				s := OpenDeferred(path) // one store per "process"
				err := s.Record(context.Background(), spoolEntry(w*each+i), nil)
				s.Close()
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r, err := Open(context.Background(), path)
		if err != nil {
			errs <- err
			return
		}
		defer r.Close()
		for range 30 {
			if _, err := r.Entries(context.Background(), warden.AuditFilter{Limit: 1}); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	<-done
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	rows := countEntries(t, path)
	seen := map[string]int{}
	for _, r := range rows {
		seen[r.TraceID]++
	}
	if len(rows) != writers*each || len(seen) != writers*each {
		t.Fatalf("%d rows with %d distinct traces, want %d each once", len(rows), len(seen), writers*each)
	}
}

func FuzzDecodeFrames(f *testing.F) {
	good, _ := encodeFrame(spoolEntry(1))
	event, _ := encodeEventFrame(testEvent(1))
	f.Add(good)
	f.Add(append(append([]byte{}, good...), good[:20]...))
	f.Add([]byte(spoolMagic + "\x00\x00\x00\x05\x00\x00\x00\x00{}"))
	f.Add(event)
	f.Add(append(append(append([]byte{}, event...), good...), event[:30]...))
	f.Fuzz(func(t *testing.T, data []byte) {
		records, _ := decodeFrames(data)
		for _, r := range records {
			switch {
			case (r.entry == nil) == (r.event == nil):
				t.Fatalf("decoded a record with entry %v and event %v; want exactly one", r.entry, r.event)
			case r.entry != nil && r.entry.ID == "":
				t.Fatal("decoded an entry without an id")
			case r.event != nil && r.event.ID == "":
				t.Fatal("decoded an event without an id")
			case r.event != nil && !bytes.Contains(data, audit.AppendEvent(nil, r.event)):
				t.Fatal("decoded an event whose canonical encoding is not in the data")
			}
		}
	})
}

// testEvent is a security event as a one-shot process appends it.
func testEvent(i int) *warden.SecurityEvent {
	return &warden.SecurityEvent{
		ID:        uuid.NewString(),
		TraceID:   fmt.Sprintf("trace-%d", i),
		CreatedAt: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond),
		Type:      warden.EventConfigInvalid, Severity: warden.SevError,
		Summary:  fmt.Sprintf("event %d: policy.yaml: line 3: unknown key", i),
		Metadata: json.RawMessage(fmt.Sprintf(`{"n":%d,"path":"policy.yaml"}`, i)),
	}
}

// drainedEvents opens the database at path, which drains the spool, checks
// that both chains verify, and returns the events and the report.
func drainedEvents(t *testing.T, path string) ([]warden.SecurityEvent, warden.VerifyReport) {
	t.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, err := s.Events(context.Background(), warden.EventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Verify(context.Background())
	if err != nil || !rep.OK() {
		t.Fatalf("Verify: %+v %v", rep.FirstBreak, err)
	}
	return evs, rep
}

// sameEvent reports how got differs from want in the fields AppendEvent's
// caller sets (the chain fields aside).
func sameEvent(got, want *warden.SecurityEvent) error {
	if got.ID != want.ID || got.TraceID != want.TraceID || !got.CreatedAt.Equal(want.CreatedAt) || got.Type != want.Type ||
		got.Severity != want.Severity || got.Summary != want.Summary || !bytes.Equal(got.Metadata, want.Metadata) {
		return fmt.Errorf("got %+v, want %+v", *got, *want)
	}
	return nil
}

// TestDeferredStoreSpoolsEventsWithoutOpeningTheDatabase: AppendEvent on a
// deferred store touches only the spool and leaves the chain fields zero; a
// read on the same store, and one after reopening, sees the event chained.
func TestDeferredStoreSpoolsEventsWithoutOpeningTheDatabase(t *testing.T) {
	for _, tc := range []struct {
		name string
		ev   func() *warden.SecurityEvent
	}{
		{"with trace and metadata", func() *warden.SecurityEvent { return testEvent(0) }},
		{"without trace or metadata", func() *warden.SecurityEvent {
			ev := testEvent(0)
			ev.TraceID, ev.Metadata = "", nil
			return ev
		}},
		{"empty metadata stored as none", func() *warden.SecurityEvent {
			ev := testEvent(0)
			ev.Metadata = json.RawMessage{}
			return ev
		}},
		{"id and time assigned", func() *warden.SecurityEvent {
			ev := testEvent(0)
			ev.ID, ev.CreatedAt = "", time.Time{}
			return ev
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "warden.db")
			s := OpenDeferred(path)
			defer s.Close()
			ev := tc.ev()
			if err := s.AppendEvent(context.Background(), ev); err != nil {
				t.Fatal(err)
			}
			if ev.ID == "" || ev.CreatedAt.IsZero() || ev.Seq != 0 || ev.PrevHash != "" || ev.Hash != "" {
				t.Fatalf("spooled event: id %q created %v seq %d prev %q hash %q; want an id and a time, no chain fields yet",
					ev.ID, ev.CreatedAt, ev.Seq, ev.PrevHash, ev.Hash)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Fatalf("the database was created by a spooled event (stat: %v)", err)
			}
			if fi, err := os.Stat(path + spoolSuffix); err != nil || fi.Size() == 0 {
				t.Fatalf("spool after AppendEvent: %v, %v; want the event in it", fi, err)
			}
			got, err := s.Events(context.Background(), warden.EventFilter{})
			if err != nil || len(got) != 1 {
				t.Fatalf("Events on the spooling store = %+v, %v; want the spooled event", got, err)
			}
			if err := sameEvent(&got[0], ev); err != nil {
				t.Fatal(err)
			}
			if got[0].Seq != 1 || got[0].PrevHash != audit.GenesisHash || got[0].Hash != audit.HashEvent(audit.GenesisHash, &got[0]) {
				t.Fatalf("drained event: seq %d prev %q hash %q; want the first link of the chain", got[0].Seq, got[0].PrevHash, got[0].Hash)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			evs, rep := drainedEvents(t, path)
			if len(evs) != 1 || rep.EventRows != 1 || rep.AuditRows != 0 {
				t.Fatalf("after reopening: %d events, report %+v; want the one event", len(evs), rep)
			}
			if err := sameEvent(&evs[0], &got[0]); err != nil || evs[0].Hash != got[0].Hash {
				t.Fatalf("after reopening: %v (hash %q, want %q)", err, evs[0].Hash, got[0].Hash)
			}
			if fi, err := os.Stat(path + spoolSuffix); err != nil || fi.Size() != 0 {
				t.Fatalf("spool after drain: %v, %v; want empty", fi, err)
			}
		})
	}
}

// TestOpenStoreAppendsEventsDirectly: a store with its database open chains an
// event at once, as before, and never writes the spool.
func TestOpenStoreAppendsEventsDirectly(t *testing.T) {
	s, path := openTest(t)
	ev := testEvent(0)
	if err := s.AppendEvent(ctx, ev); err != nil {
		t.Fatal(err)
	}
	if ev.Seq != 1 || ev.PrevHash != audit.GenesisHash || ev.Hash != audit.HashEvent(audit.GenesisHash, ev) {
		t.Fatalf("event: seq %d prev %q hash %q; want it chained on return", ev.Seq, ev.PrevHash, ev.Hash)
	}
	if _, err := os.Stat(path + spoolSuffix); !os.IsNotExist(err) {
		t.Fatalf("an open store wrote the spool (stat: %v)", err)
	}
}

// TestSpooledEntriesAndEventsDrainInOrder: entries and events spooled by many
// processes, interleaved, enter their own chains in spool order, after any
// rows the chains already hold, and both chains verify.
func TestSpooledEntriesAndEventsDrainInOrder(t *testing.T) {
	for _, tc := range []struct {
		name           string
		before         int // entries and events already in the database
		order          string
		wantE, wantEvs []string
	}{
		{name: "into an empty database", order: "EvvEEv",
			wantE: []string{"trace-0", "trace-3", "trace-4"}, wantEvs: []string{"trace-1", "trace-2", "trace-5"}},
		{name: "events only", order: "vvv",
			wantEvs: []string{"trace-0", "trace-1", "trace-2"}},
		{name: "after rows already in both chains", before: 2, order: "vEvE",
			wantE: []string{"old-0", "old-1", "trace-1", "trace-3"}, wantEvs: []string{"old-0", "old-1", "trace-0", "trace-2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "warden.db")
			if tc.before > 0 {
				s, err := Open(context.Background(), path)
				if err != nil {
					t.Fatal(err)
				}
				for i := range tc.before {
					e, ev := spoolEntry(100+i), testEvent(100+i)
					e.TraceID, ev.TraceID = fmt.Sprintf("old-%d", i), fmt.Sprintf("old-%d", i)
					if err := s.Record(context.Background(), e, nil); err != nil {
						t.Fatal(err)
					}
					if err := s.AppendEvent(context.Background(), ev); err != nil {
						t.Fatal(err)
					}
				}
				s.Close()
			}
			for i, kind := range tc.order {
				s := OpenDeferred(path) // one store per "process"
				var err error
				if kind == 'E' {
					err = s.Record(context.Background(), spoolEntry(i), nil)
				} else {
					err = s.AppendEvent(context.Background(), testEvent(i))
				}
				s.Close()
				if err != nil {
					t.Fatal(err)
				}
			}
			if _, err := os.Stat(path); tc.before == 0 && !os.IsNotExist(err) {
				t.Fatalf("the database was created by spooled records (stat: %v)", err)
			}
			entries := countEntries(t, path)
			evs, rep := drainedEvents(t, path)
			var gotE, gotEvs []string
			for i, e := range entries {
				if e.Seq != int64(i+1) {
					t.Errorf("entry %d has seq %d", i, e.Seq)
				}
				gotE = append(gotE, e.TraceID)
			}
			for i, ev := range evs {
				if ev.Seq != int64(i+1) {
					t.Errorf("event %d has seq %d", i, ev.Seq)
				}
				gotEvs = append(gotEvs, ev.TraceID)
			}
			if !slices.Equal(gotE, tc.wantE) || !slices.Equal(gotEvs, tc.wantEvs) {
				t.Fatalf("entries %v and events %v; want %v and %v", gotE, gotEvs, tc.wantE, tc.wantEvs)
			}
			if rep.AuditRows != int64(len(tc.wantE)) || rep.EventRows != int64(len(tc.wantEvs)) {
				t.Fatalf("Verify counted %d entries and %d events", rep.AuditRows, rep.EventRows)
			}
		})
	}
}

// TestTornEventFramesAreSkippedAndReported: a damaged or torn event frame is
// skipped like an entry frame: every intact record around it is kept, and the
// drain reports the damage in one audit_spool_damaged event, chained after the
// spooled events.
func TestTornEventFramesAreSkippedAndReported(t *testing.T) {
	reframe := func(payload []byte, magic string) []byte {
		f, err := sealFrame(append(make([]byte, spoolHeader), payload...), magic)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, tc := range []struct {
		name   string
		atEnd  bool
		damage func(ev *warden.SecurityEvent) []byte
	}{
		{"torn: cut short", false, func(ev *warden.SecurityEvent) []byte {
			f, _ := encodeEventFrame(ev)
			return f[:len(f)/2]
		}},
		{"torn at the end of the spool", true, func(ev *warden.SecurityEvent) []byte {
			f, _ := encodeEventFrame(ev)
			return f[:len(f)-1]
		}},
		{"torn inside the header", true, func(ev *warden.SecurityEvent) []byte {
			f, _ := encodeEventFrame(ev)
			return f[:spoolHeader-3]
		}},
		{"damaged: checksum fails", false, func(ev *warden.SecurityEvent) []byte {
			f, _ := encodeEventFrame(ev)
			f[len(f)-3] ^= 0x20
			return f
		}},
		{"checksum right but bytes left over", false, func(ev *warden.SecurityEvent) []byte {
			return reframe(append(audit.AppendEvent(nil, ev), 0), spoolEventMagic)
		}},
		{"checksum right but an entry's encoding", false, func(*warden.SecurityEvent) []byte {
			return reframe(audit.AppendEntry(nil, spoolEntry(9)), spoolEventMagic)
		}},
		{"checksum right but framed as an entry", false, func(ev *warden.SecurityEvent) []byte {
			return reframe(audit.AppendEvent(nil, ev), spoolMagic)
		}},
		{"an event without an id", false, func(ev *warden.SecurityEvent) []byte {
			ev.ID = ""
			f, _ := encodeEventFrame(ev)
			return f
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "warden.db")
			var data []byte
			add := func(f []byte, err error) {
				if err != nil {
					t.Fatal(err)
				}
				data = append(data, f...)
			}
			add(encodeFrame(spoolEntry(0)))
			add(encodeEventFrame(testEvent(1)))
			bad, damagedAt := tc.damage(testEvent(2)), len(data)
			if !tc.atEnd {
				add(bad, nil)
			}
			add(encodeEventFrame(testEvent(3)))
			if tc.atEnd {
				damagedAt = len(data)
				add(bad, nil)
			}
			if err := os.WriteFile(path+spoolSuffix, data, 0o600); err != nil {
				t.Fatal(err)
			}
			evs, rep := drainedEvents(t, path)
			if len(evs) != 3 || evs[0].TraceID != "trace-1" || evs[1].TraceID != "trace-3" || evs[2].Type != "audit_spool_damaged" {
				t.Fatalf("events %+v; want trace-1, trace-3 and the damage report", evs)
			}
			if rep.AuditRows != 1 || rep.EventRows != 3 {
				t.Fatalf("Verify counted %d entries and %d events, want 1 and 3", rep.AuditRows, rep.EventRows)
			}
			var meta struct {
				Offsets    []int `json:"offsets"`
				SpoolBytes int   `json:"spool_bytes"`
			}
			if err := json.Unmarshal(evs[2].Metadata, &meta); err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(meta.Offsets, damagedAt) || meta.SpoolBytes != len(data) {
				t.Fatalf("damage report %s; want offset %d among the offsets and spool_bytes %d", evs[2].Metadata, damagedAt, len(data))
			}
		})
	}
}

// TestRedrainOfEventsIsExactlyOnce: a drain that committed but crashed before
// emptying the spool must not append its events (or entries) twice.
func TestRedrainOfEventsIsExactlyOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		order string
	}{
		{"events only", "vvvv"},
		{"entries and events", "vEvEEv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "warden.db")
			wantE := strings.Count(tc.order, "E")
			wantEvs := len(tc.order) - wantE
			for i, kind := range tc.order {
				s := OpenDeferred(path)
				var err error
				if kind == 'E' {
					err = s.Record(context.Background(), spoolEntry(i), nil)
				} else {
					err = s.AppendEvent(context.Background(), testEvent(i))
				}
				s.Close()
				if err != nil {
					t.Fatal(err)
				}
			}
			spooled, err := os.ReadFile(path + spoolSuffix)
			if err != nil {
				t.Fatal(err)
			}
			for round := range 2 {
				if round == 1 {
					if err := os.WriteFile(path+spoolSuffix, spooled, 0o600); err != nil { // the crash
						t.Fatal(err)
					}
				}
				evs, rep := drainedEvents(t, path)
				if len(evs) != wantEvs || rep.EventRows != int64(wantEvs) || rep.AuditRows != int64(wantE) {
					t.Fatalf("drain %d: %d events, report %+v; want %d events and %d entries", round+1, len(evs), rep, wantEvs, wantE)
				}
			}
		})
	}
}

// TestOversizedEventIsRefused: an event that does not fit in one spool record
// is refused with an error naming the limit, and nothing is spooled.
func TestOversizedEventIsRefused(t *testing.T) {
	big := strings.Repeat("x", maxSpoolRecord)
	for _, tc := range []struct {
		name string
		ev   func() *warden.SecurityEvent
	}{
		{"summary", func() *warden.SecurityEvent {
			ev := testEvent(0)
			ev.Summary = big
			return ev
		}},
		{"metadata", func() *warden.SecurityEvent {
			ev := testEvent(0)
			ev.Metadata = json.RawMessage(`{"blob":"` + big + `"}`)
			return ev
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "warden.db")
			s := OpenDeferred(path)
			defer s.Close()
			ev := tc.ev()
			err := s.AppendEvent(context.Background(), ev)
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("above the spool's %d byte limit", maxSpoolRecord)) ||
				!strings.Contains(err.Error(), ev.Type) {
				t.Fatalf("AppendEvent of an oversized event = %v; want an error naming the event and the limit", err)
			}
			if ev.Seq != 0 || ev.Hash != "" {
				t.Fatalf("refused event has seq %d hash %q; want them zero", ev.Seq, ev.Hash)
			}
			if fi, err := os.Stat(path + spoolSuffix); !os.IsNotExist(err) {
				t.Fatalf("spool after a refused event: %v, %v; want none", fi, err)
			}
			if evs, _ := drainedEvents(t, path); len(evs) != 0 {
				t.Fatalf("%d events stored, want none", len(evs))
			}
		})
	}
}
