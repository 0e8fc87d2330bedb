// Package stoplosstest is the conformance suite every stoploss.Store
// implementation runs: rules round-trip, are listed in the order added, are
// removed once and never replaced, and marks only rise.
package stoplosstest

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance/stoploss"
)

var ctx = context.Background()

// Run runs the suite. open must return a new, empty store for each call and
// release it when t ends.
func Run(t *testing.T, open func(t *testing.T) stoploss.Store) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s stoploss.Store)
	}{
		{"Empty", testEmpty},
		{"RoundTrip", testRoundTrip},
		{"RefusesInvalid", testRefusesInvalid},
		{"IDsAreNeverReused", testDuplicateID},
		{"RemoveOnce", testRemove},
		{"MarksOnlyRise", testMarks},
		{"MarksRefuseNonFinite", testMarksNonFinite},
		{"MarksConcurrent", testMarksConcurrent},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

var created = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Rules returns a rule of each shape, all fields set.
func Rules() []stoploss.Rule {
	return []stoploss.Rule{
		{ID: "sl-fixed", Target: "base:WETH", Kind: stoploss.FixedPercent, ThresholdPct: 0.1, TakeProfitPct: 0.25,
			Entry: 3012.5, CreatedAt: created, By: "operator"},
		{ID: "sl-trail", Target: "pos-7", Kind: stoploss.Trailing, ThresholdPct: 0.05, Basis: stoploss.BasisMargin,
			MaxAge: 48 * time.Hour, CreatedAt: created.Add(time.Minute), By: "agent"},
		{ID: "sl-time", Target: "solana:BONK", Kind: stoploss.TimeBased, MaxAge: 24 * time.Hour, Entry: 0.0000213,
			Basis: stoploss.BasisPrice, CreatedAt: created.Add(2 * time.Minute), By: stoploss.DefaultBy},
	}
}

func add(t *testing.T, s stoploss.Store, r stoploss.Rule) {
	t.Helper()
	if err := s.AddRule(ctx, r); err != nil {
		t.Fatalf("AddRule(%s): %v", r.ID, err)
	}
}

func list(t *testing.T, s stoploss.Store) []stoploss.Rule {
	t.Helper()
	rules, err := s.Rules(ctx)
	if err != nil {
		t.Fatalf("Rules: %v", err)
	}
	return rules
}

func ids(rules []stoploss.Rule) []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		out[i] = r.ID
	}
	return out
}

func wantCode(t *testing.T, what string, err error, code warden.ErrorCode) {
	t.Helper()
	if err == nil || warden.ErrorCodeOf(err) != code {
		t.Errorf("%s = %v, want a *warden.Error with code %s", what, err, code)
	}
}

// same compares two rules field by field, times by Equal.
func same(a, b stoploss.Rule) bool {
	return a.ID == b.ID && a.Target == b.Target && a.Kind == b.Kind && a.ThresholdPct == b.ThresholdPct &&
		a.TakeProfitPct == b.TakeProfitPct && a.MaxAge == b.MaxAge && a.Basis == b.Basis && a.Entry == b.Entry &&
		a.CreatedAt.Equal(b.CreatedAt) && a.By == b.By
}

func testEmpty(t *testing.T, s stoploss.Store) {
	if rules := list(t, s); len(rules) != 0 {
		t.Errorf("Rules of an empty store = %v, want none", ids(rules))
	}
	marks, err := s.Marks(ctx)
	if err != nil || len(marks) != 0 {
		t.Errorf("Marks of an empty store = %v, %v; want none", marks, err)
	}
}

func testRoundTrip(t *testing.T, s stoploss.Store) {
	want := Rules()
	for _, r := range want {
		add(t, s, r)
	}
	got := list(t, s)
	if len(got) != len(want) {
		t.Fatalf("Rules = %v, want %v", ids(got), ids(want))
	}
	for i := range want {
		if !same(got[i], want[i]) {
			t.Errorf("Rules()[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func testRefusesInvalid(t *testing.T, s stoploss.Store) {
	ok := Rules()[0]
	for _, tc := range []struct {
		name string
		edit func(r *stoploss.Rule)
	}{
		{"no id", func(r *stoploss.Rule) { r.ID = "" }},
		{"no target", func(r *stoploss.Rule) { r.Target = "" }},
		{"threshold above 1", func(r *stoploss.Rule) { r.ThresholdPct = 1.5 }},
		{"NaN threshold", func(r *stoploss.Rule) { r.ThresholdPct = math.NaN() }},
		{"unknown kind", func(r *stoploss.Rule) { r.Kind = "trailng" }},
	} {
		r := ok
		tc.edit(&r)
		wantCode(t, fmt.Sprintf("AddRule(%s)", tc.name), s.AddRule(ctx, r), warden.EInvalid)
	}
	if rules := list(t, s); len(rules) != 0 {
		t.Errorf("Rules after refused adds = %v, want none", ids(rules))
	}
}

func testDuplicateID(t *testing.T, s stoploss.Store) {
	r := Rules()[0]
	add(t, s, r)
	other := Rules()[1]
	other.ID = r.ID
	wantCode(t, "AddRule of a used id", s.AddRule(ctx, other), warden.EConflict)
	if err := s.RemoveRule(ctx, r.ID); err != nil {
		t.Fatalf("RemoveRule: %v", err)
	}
	wantCode(t, "AddRule of a removed rule's id", s.AddRule(ctx, other), warden.EConflict)
	if rules := list(t, s); len(rules) != 0 {
		t.Errorf("Rules = %v, want none: the removed rule stays removed and its id was not reused", ids(rules))
	}
}

func testRemove(t *testing.T, s stoploss.Store) {
	rules := Rules()
	for _, r := range rules {
		add(t, s, r)
	}
	if err := s.RemoveRule(ctx, rules[1].ID); err != nil {
		t.Fatalf("RemoveRule: %v", err)
	}
	if got := ids(list(t, s)); fmt.Sprint(got) != fmt.Sprint([]string{rules[0].ID, rules[2].ID}) {
		t.Errorf("Rules after removing %s = %v", rules[1].ID, got)
	}
	wantCode(t, "RemoveRule twice", s.RemoveRule(ctx, rules[1].ID), warden.ENotFound)
	wantCode(t, "RemoveRule of an unknown id", s.RemoveRule(ctx, "sl-nope"), warden.ENotFound)
}

func testMarks(t *testing.T, s stoploss.Store) {
	for _, step := range []struct {
		key  string
		v    float64
		want float64
	}{
		{"pos-1", 100, 100},
		{"pos-1", 120, 120},
		{"pos-1", 116, 120}, // lower: ignored, not an error
		{"pos-1", 120, 120},
		{"pos-1", 120.5, 120.5},
		{"pos-short", -100, -100}, // a short's trough, negated
		{"pos-short", -104, -100},
		{"pos-short", -95, -95},
		{"base:WETH#sl-1", 0.0000213, 0.0000213},
	} {
		if err := s.SetMark(ctx, step.key, step.v); err != nil {
			t.Fatalf("SetMark(%s, %v): %v", step.key, step.v, err)
		}
		marks, err := s.Marks(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := marks[step.key]; got != step.want {
			t.Errorf("after SetMark(%s, %v): mark = %v, want %v", step.key, step.v, got, step.want)
		}
	}
	marks, _ := s.Marks(ctx)
	if len(marks) != 3 {
		t.Errorf("Marks = %v, want 3 keys", marks)
	}
}

func testMarksNonFinite(t *testing.T, s stoploss.Store) {
	if err := s.SetMark(ctx, "pos-1", 50); err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		wantCode(t, fmt.Sprintf("SetMark(%v)", v), s.SetMark(ctx, "pos-1", v), warden.EInvalid)
	}
	if marks, _ := s.Marks(ctx); marks["pos-1"] != 50 {
		t.Errorf("mark after refused values = %v, want 50", marks["pos-1"])
	}
}

func testMarksConcurrent(t *testing.T, s stoploss.Store) {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				// Interleaved rising and falling values; want is their maximum.
				v := float64(100 + (i*4+g)%100)
				if i%2 == 1 {
					v = float64(100 - i)
				}
				if err := s.SetMark(ctx, "pos-c", v); err != nil {
					t.Errorf("SetMark: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	marks, err := s.Marks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := 0.0
	for g := range 4 {
		for i := 0; i < 25; i += 2 {
			want = math.Max(want, float64(100+(i*4+g)%100))
		}
	}
	if marks["pos-c"] != want {
		t.Errorf("mark after concurrent SetMark = %v, want the maximum %v", marks["pos-c"], want)
	}
}
