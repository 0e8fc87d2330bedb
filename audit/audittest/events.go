package audittest

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
)

// eventFixture is the event log the event cases query, seq 1-5.
var eventFixture = []struct {
	at  time.Duration
	typ string
	sev warden.Severity
}{
	{0, warden.EventConfigChanged, warden.SevInfo},
	{time.Hour, warden.EventKillSwitchOn, warden.SevCritical},
	{2 * time.Hour, warden.EventConfigInvalid, warden.SevError},
	{3 * time.Hour, warden.EventKillSwitchOff, warden.SevWarn},
	{4 * time.Hour, warden.EventKillSwitchOn, warden.SevCritical},
}

func appendFixtureEvents(t *testing.T, s Store) []*warden.SecurityEvent {
	t.Helper()
	var out []*warden.SecurityEvent
	for i, f := range eventFixture {
		ev := &warden.SecurityEvent{
			TraceID: "trace-ev", CreatedAt: t0.Add(f.at), Type: f.typ, Severity: f.sev,
			Summary: "event " + f.typ, Metadata: json.RawMessage(`{"n":` + string(rune('0'+i)) + `,"by":"cli ✓"}`),
		}
		if i == 0 {
			ev.Metadata, ev.TraceID = nil, ""
		}
		if err := s.AppendEvent(ctx, ev); err != nil {
			t.Fatalf("AppendEvent(%s): %v", f.typ, err)
		}
		out = append(out, ev)
	}
	return out
}

func testEvents(t *testing.T, s Store) {
	record(t, s, simple(1, 0)) // the audit chain is separate: events still start at seq 1
	evs := appendFixtureEvents(t, s)
	prev := audit.GenesisHash
	for i, ev := range evs {
		if ev.Seq != int64(i+1) || ev.PrevHash != prev || ev.Hash != audit.HashEvent(prev, ev) || ev.ID == "" {
			t.Errorf("event %d: seq %d prev %q hash %q id %q; want seq %d chained to the previous event and an ID",
				i, ev.Seq, ev.PrevHash, ev.Hash, ev.ID, i+1)
		}
		prev = ev.Hash
	}
	got, err := s.Events(ctx, warden.EventFilter{})
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	if len(got) != len(evs) {
		t.Fatalf("Events returned %d events, want %d", len(got), len(evs))
	}
	for i := range got {
		if d := diffEvent(&got[i], evs[i]); len(d) > 0 {
			t.Errorf("event %d differs: %v", i+1, d)
		}
	}
	before := time.Now().Add(-time.Millisecond)
	ev := &warden.SecurityEvent{Type: warden.EventConfigChanged, Severity: warden.SevInfo}
	if err := s.AppendEvent(ctx, ev); err != nil {
		t.Fatal(err)
	}
	if ev.CreatedAt.Before(before) || ev.CreatedAt.After(time.Now().Add(time.Millisecond)) {
		t.Errorf("AppendEvent set CreatedAt %v, want now", ev.CreatedAt)
	}
	verifyOK(t, s, 1, int64(len(evs)+1))
}

func testEventFilters(t *testing.T, s Store) {
	appendFixtureEvents(t, s)
	for _, tc := range []struct {
		name string
		f    warden.EventFilter
		want []int64
	}{
		{name: "none", f: warden.EventFilter{}, want: []int64{1, 2, 3, 4, 5}},
		{name: "since is inclusive", f: warden.EventFilter{Since: t0.Add(2 * time.Hour)}, want: []int64{3, 4, 5}},
		{name: "type", f: warden.EventFilter{Type: warden.EventKillSwitchOn}, want: []int64{2, 5}},
		{name: "min severity info", f: warden.EventFilter{MinSeverity: warden.SevInfo}, want: []int64{1, 2, 3, 4, 5}},
		{name: "min severity warn", f: warden.EventFilter{MinSeverity: warden.SevWarn}, want: []int64{2, 3, 4, 5}},
		{name: "min severity error", f: warden.EventFilter{MinSeverity: warden.SevError}, want: []int64{2, 3, 5}},
		{name: "min severity critical", f: warden.EventFilter{MinSeverity: warden.SevCritical}, want: []int64{2, 5}},
		{name: "after seq", f: warden.EventFilter{AfterSeq: 3}, want: []int64{4, 5}},
		{name: "limit is the newest N in log order", f: warden.EventFilter{Limit: 2}, want: []int64{4, 5}},
		{name: "combined", f: warden.EventFilter{MinSeverity: warden.SevError, Since: t0.Add(time.Hour + time.Millisecond), Limit: 5}, want: []int64{3, 5}},
		{name: "no match", f: warden.EventFilter{Type: "nothing"}, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := s.Events(ctx, tc.f)
			if err != nil {
				t.Fatalf("Events(%+v): %v", tc.f, err)
			}
			var got []int64
			for _, ev := range evs {
				got = append(got, ev.Seq)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Events(%+v) = seqs %v, want %v", tc.f, got, tc.want)
			}
		})
	}
	if _, err := s.Events(ctx, warden.EventFilter{MinSeverity: "fatal"}); err == nil {
		t.Error(`Events(MinSeverity: "fatal") = nil error, want one`)
	}
}

func testEventRefusesInvalid(t *testing.T, s Store) {
	for _, ev := range []*warden.SecurityEvent{
		{Type: warden.EventConfigChanged, Severity: "fatal"},
		{Type: warden.EventConfigChanged},
		{Severity: warden.SevInfo},
		{Type: warden.EventConfigChanged, Severity: warden.SevInfo, Metadata: json.RawMessage(`{`)},
	} {
		if err := s.AppendEvent(ctx, ev); err == nil {
			t.Errorf("AppendEvent(%+v) = nil, want an error", *ev)
		}
		if ev.Seq != 0 || ev.Hash != "" {
			t.Errorf("failed AppendEvent set Seq=%d Hash=%q, want them zero", ev.Seq, ev.Hash)
		}
	}
	evs, err := s.Events(ctx, warden.EventFilter{})
	if err != nil || len(evs) != 0 {
		t.Errorf("Events after refused appends = %d events, %v; want none", len(evs), err)
	}
	verifyOK(t, s, 0, 0)
}

func testVerifyFresh(t *testing.T, s Store) { verifyOK(t, s, 0, 0) }

func testVerifyPopulated(t *testing.T, s Store) {
	for i := 1; i <= 20; i++ {
		e := simple(i, time.Duration(i)*time.Minute)
		if i%3 == 0 {
			e = full()
			e.ID = ""
		}
		record(t, s, e)
	}
	appendFixtureEvents(t, s)
	verifyOK(t, s, 20, int64(len(eventFixture)))
}
