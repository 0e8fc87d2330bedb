package audittest

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// RunApprovals runs the conformance suite of warden.ApprovalStore. open must
// return a new, empty store for each call and close it when t ends.
func RunApprovals(t *testing.T, open func(t *testing.T) warden.ApprovalStore) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s warden.ApprovalStore)
	}{
		{"RoundTrip", testApprovalRoundTrip},
		{"KeepsProtective", testApprovalKeepsProtective},
		{"GetUnknown", testApprovalUnknown},
		{"ListPendingNewestFirst", testApprovalList},
		{"EndsOnce", testApprovalEndsOnce},
		{"ExpiredCannotBeAnswered", testApprovalExpired},
		{"OnceGrantIsUsedOnce", testOnceGrant},
		{"OnceGrantConcurrent", testOnceGrantConcurrent},
		{"SessionGrantStaysInItsSession", testSessionGrant},
		{"OnceOnlyIgnoresSessionGrants", testOnceOnly},
		{"GrantBoundToInput", testGrantBoundToInput},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

var approvalSeq atomic.Int64

// newApproval is a pending approval created at now, expiring in ttl.
func newApproval(now time.Time, ttl time.Duration, session string) *warden.Approval {
	n := approvalSeq.Add(1)
	req := warden.Request{TraceID: fmt.Sprintf("trace-%d", n), Capability: warden.CapShell, Action: "exec", Resource: "rm -rf build",
		Session: session, Params: map[string]json.RawMessage{"n": json.RawMessage(`1`)}}
	return &warden.Approval{
		ID: fmt.Sprintf("appr-%d", n), TraceID: req.TraceID, Request: req,
		Decision:  warden.Decision{Verdict: warden.Ask, Reason: "destructive", Rule: "shell.destructive", Tier: 3, TraceID: req.TraceID},
		InputHash: warden.InputHash(&req), CreatedAt: now.Truncate(time.Millisecond), ExpiresAt: now.Add(ttl).Truncate(time.Millisecond),
		Channel: "api", State: warden.ApprovalPending,
	}
}

func create(t *testing.T, s warden.ApprovalStore, a *warden.Approval) {
	t.Helper()
	if err := s.CreateApproval(ctx, a); err != nil {
		t.Fatalf("CreateApproval: %v", err)
	}
}

func approve(t *testing.T, s warden.ApprovalStore, a *warden.Approval, kind warden.GrantKind, at time.Time) {
	t.Helper()
	ans := warden.AnswerOnce
	if kind == warden.GrantSession {
		ans = warden.AnswerSession
	}
	g := &warden.Grant{ID: "grant-" + a.ID, Kind: kind, InputHash: a.InputHash, Session: a.Request.Session, ApprovalID: a.ID, By: "terminal:me", CreatedAt: at}
	if _, err := s.ResolveApproval(ctx, warden.Resolution{ID: a.ID, State: warden.ApprovalApproved, Answer: ans, By: "terminal:me", At: at}, g); err != nil {
		t.Fatalf("ResolveApproval: %v", err)
	}
}

func testApprovalRoundTrip(t *testing.T, s warden.ApprovalStore) {
	now := time.Now()
	a := newApproval(now, time.Minute, "s1")
	create(t, s, a)
	got, err := s.GetApproval(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != a.ID || got.TraceID != a.TraceID || got.InputHash != a.InputHash || got.Channel != "api" ||
		got.State != warden.ApprovalPending || !got.CreatedAt.Equal(a.CreatedAt) || !got.ExpiresAt.Equal(a.ExpiresAt) ||
		got.Request.Resource != a.Request.Resource || got.Request.Session != "s1" || string(got.Request.Params["n"]) != "1" ||
		got.Decision.Verdict != warden.Ask || got.Decision.Rule != "shell.destructive" || got.Decision.Tier != 3 {
		t.Errorf("GetApproval = %+v\nwant %+v", got, *a)
	}
	ended, err := s.ResolveApproval(ctx, warden.Resolution{ID: a.ID, State: warden.ApprovalDenied, Answer: warden.AnswerDeny, By: "console:op", At: now, Note: "no"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetApproval(ctx, a.ID)
	for _, x := range []warden.Approval{ended, got} {
		if x.State != warden.ApprovalDenied || x.Answer != warden.AnswerDeny || x.AnsweredBy != "console:op" || x.Note != "no" ||
			!x.AnsweredAt.Equal(now.Truncate(time.Millisecond)) {
			t.Errorf("after the answer: %+v; want denied by console:op at %v", x, now)
		}
	}
}

// A protective exit (flagged in-process by the stop-loss monitor) is still
// one when its approval is read back for the re-check; a plain request is
// not turned into one.
func testApprovalKeepsProtective(t *testing.T, s warden.ApprovalStore) {
	now := time.Now()
	exit, plain := newApproval(now, time.Minute, "s1"), newApproval(now, time.Minute, "s1")
	exit.Request.Protective = true
	create(t, s, exit)
	create(t, s, plain)
	for _, c := range []struct {
		a    *warden.Approval
		want bool
	}{{exit, true}, {plain, false}} {
		got, err := s.GetApproval(ctx, c.a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Request.Protective != c.want {
			t.Errorf("GetApproval(%s).Request.Protective = %v, want %v", c.a.ID, got.Request.Protective, c.want)
		}
	}
}

func testApprovalUnknown(t *testing.T, s warden.ApprovalStore) {
	if _, err := s.GetApproval(ctx, "nope"); warden.ErrorCodeOf(err) != warden.ENotFound {
		t.Errorf("GetApproval(unknown) = %v, want not_found", err)
	}
	_, err := s.ResolveApproval(ctx, warden.Resolution{ID: "nope", State: warden.ApprovalDenied, At: time.Now()}, nil)
	if warden.ErrorCodeOf(err) != warden.ENotFound {
		t.Errorf("ResolveApproval(unknown) = %v, want not_found", err)
	}
}

func testApprovalList(t *testing.T, s warden.ApprovalStore) {
	now := time.Now()
	old := newApproval(now.Add(-time.Hour), time.Minute, "") // expired
	a1 := newApproval(now.Add(-2*time.Second), time.Minute, "")
	a2 := newApproval(now.Add(-time.Second), time.Minute, "")
	done := newApproval(now, time.Minute, "")
	for _, a := range []*warden.Approval{old, a1, a2, done} {
		create(t, s, a)
	}
	if _, err := s.ResolveApproval(ctx, warden.Resolution{ID: done.ID, State: warden.ApprovalDenied, Answer: warden.AnswerDeny, At: now}, nil); err != nil {
		t.Fatal(err)
	}
	pending, err := s.ListApprovals(ctx, warden.ApprovalFilter{Pending: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 2 || pending[0].ID != a2.ID || pending[1].ID != a1.ID {
		t.Errorf("pending = %v; want [%s %s] (newest first, no expired, no answered)", ids(pending), a2.ID, a1.ID)
	}
	all, _ := s.ListApprovals(ctx, warden.ApprovalFilter{})
	if len(all) != 4 || all[0].ID != done.ID || all[3].ID != old.ID {
		t.Errorf("all = %v; want 4, newest first", ids(all))
	}
	if two, _ := s.ListApprovals(ctx, warden.ApprovalFilter{Limit: 2}); len(two) != 2 {
		t.Errorf("Limit 2 gave %d", len(two))
	}
	// The same input in another session, and another input in this one.
	other := newApproval(now, time.Minute, "other-session")
	changed := newApproval(now, time.Minute, "")
	changed.Request.Resource = "rm -rf dist"
	changed.InputHash = warden.InputHash(&changed.Request)
	for _, a := range []*warden.Approval{other, changed} {
		create(t, s, a)
	}
	same, err := s.ListApprovals(ctx, warden.ApprovalFilter{Pending: true, Now: now, InputHash: a1.InputHash})
	if err != nil {
		t.Fatal(err)
	}
	if len(same) != 2 || same[0].ID != a2.ID || same[1].ID != a1.ID {
		t.Errorf("pending of a1's input in its session = %v; want [%s %s]", ids(same), a2.ID, a1.ID)
	}
	if got, _ := s.ListApprovals(ctx, warden.ApprovalFilter{InputHash: a1.InputHash, Session: "other-session"}); len(got) != 1 || got[0].ID != other.ID {
		t.Errorf("a1's input in other-session = %v; want [%s]", ids(got), other.ID)
	}
}

func ids(as []warden.Approval) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.ID)
	}
	return out
}

func testApprovalEndsOnce(t *testing.T, s warden.ApprovalStore) {
	now := time.Now()
	a := newApproval(now, time.Minute, "")
	create(t, s, a)
	approve(t, s, a, warden.GrantOnce, now)
	_, err := s.ResolveApproval(ctx, warden.Resolution{ID: a.ID, State: warden.ApprovalDenied, Answer: warden.AnswerDeny, At: now}, nil)
	if warden.ErrorCodeOf(err) != warden.EConflict {
		t.Errorf("a second answer = %v; want conflict", err)
	}
	if got, _ := s.GetApproval(ctx, a.ID); got.State != warden.ApprovalApproved {
		t.Errorf("after a refused second answer the approval is %s, want approved", got.State)
	}
	// A refused answer stores no grant.
	b := newApproval(now, time.Minute, "")
	create(t, s, b)
	approve(t, s, b, warden.GrantOnce, now)
	g := &warden.Grant{ID: "late", Kind: warden.GrantSession, InputHash: "sha256:other", Session: "s", ApprovalID: b.ID, CreatedAt: now}
	if _, err := s.ResolveApproval(ctx, warden.Resolution{ID: b.ID, State: warden.ApprovalApproved, Answer: warden.AnswerSession, At: now}, g); err == nil {
		t.Fatal("answering an ended approval succeeded")
	}
	if _, ok, _ := s.TakeGrant(ctx, warden.GrantQuery{InputHash: "sha256:other", Session: "s", At: now}); ok {
		t.Error("the grant of a refused answer was stored")
	}
}

func testApprovalExpired(t *testing.T, s warden.ApprovalStore) {
	now := time.Now()
	a := newApproval(now.Add(-2*time.Minute), time.Minute, "")
	create(t, s, a)
	_, err := s.ResolveApproval(ctx, warden.Resolution{ID: a.ID, State: warden.ApprovalApproved, Answer: warden.AnswerOnce, At: now}, nil)
	if warden.ErrorCodeOf(err) != warden.EConflict {
		t.Errorf("approving after expiry = %v; want conflict", err)
	}
	ended, err := s.ResolveApproval(ctx, warden.Resolution{ID: a.ID, State: warden.ApprovalExpired, At: a.ExpiresAt}, nil)
	if err != nil || ended.State != warden.ApprovalExpired {
		t.Fatalf("recording the expiry = %+v, %v", ended, err)
	}
	if _, err := s.ResolveApproval(ctx, warden.Resolution{ID: a.ID, State: warden.ApprovalExpired, At: a.ExpiresAt}, nil); warden.ErrorCodeOf(err) != warden.EConflict {
		t.Errorf("recording the expiry twice = %v; want conflict", err)
	}
}

func testOnceGrant(t *testing.T, s warden.ApprovalStore) {
	now := time.Now()
	a := newApproval(now, time.Minute, "s1")
	create(t, s, a)
	approve(t, s, a, warden.GrantOnce, now)
	q := warden.GrantQuery{InputHash: a.InputHash, Session: "s1", At: now}
	for range 2 {
		peek := q
		peek.Peek = true
		if g, ok, err := s.TakeGrant(ctx, peek); err != nil || !ok || g.Kind != warden.GrantOnce {
			t.Fatalf("peeking at the once grant = %+v, %v, %v; want it", g, ok, err)
		}
	}
	g, ok, err := s.TakeGrant(ctx, q)
	if err != nil || !ok || g.Kind != warden.GrantOnce || g.ApprovalID != a.ID || g.By != "terminal:me" {
		t.Fatalf("first TakeGrant = %+v, %v, %v; want the once grant", g, ok, err)
	}
	if _, ok, _ := s.TakeGrant(ctx, q); ok {
		t.Error("a once grant was used twice")
	}
	q.Peek = true
	if _, ok, _ := s.TakeGrant(ctx, q); ok {
		t.Error("peeking found a once grant already used")
	}
}

func testOnceGrantConcurrent(t *testing.T, s warden.ApprovalStore) {
	now := time.Now()
	a := newApproval(now, time.Minute, "")
	create(t, s, a)
	approve(t, s, a, warden.GrantOnce, now)
	var wg sync.WaitGroup
	var taken atomic.Int64
	for range 16 {
		wg.Go(func() {
			if _, ok, err := s.TakeGrant(ctx, warden.GrantQuery{InputHash: a.InputHash, At: now}); err == nil && ok {
				taken.Add(1)
			}
		})
	}
	wg.Wait()
	if taken.Load() != 1 {
		t.Errorf("16 concurrent requests used one once grant %d times; want exactly 1", taken.Load())
	}
}

func testSessionGrant(t *testing.T, s warden.ApprovalStore) {
	now := time.Now()
	a := newApproval(now, time.Minute, "s1")
	create(t, s, a)
	approve(t, s, a, warden.GrantSession, now)
	for i := range 3 {
		if _, ok, err := s.TakeGrant(ctx, warden.GrantQuery{InputHash: a.InputHash, Session: "s1", At: now}); !ok || err != nil {
			t.Fatalf("use %d of a session grant in its session: %v, %v", i, ok, err)
		}
	}
	if _, ok, _ := s.TakeGrant(ctx, warden.GrantQuery{InputHash: a.InputHash, Session: "s2", At: now}); ok {
		t.Error("a session grant applied in another session")
	}
	if _, ok, _ := s.TakeGrant(ctx, warden.GrantQuery{InputHash: a.InputHash, Session: "", At: now}); ok {
		t.Error("a session grant applied to a request without a session")
	}
}

func testOnceOnly(t *testing.T, s warden.ApprovalStore) {
	now := time.Now()
	a := newApproval(now, time.Minute, "s1")
	create(t, s, a)
	approve(t, s, a, warden.GrantSession, now)
	if _, ok, _ := s.TakeGrant(ctx, warden.GrantQuery{InputHash: a.InputHash, Session: "s1", OnceOnly: true, At: now}); ok {
		t.Error("a tier 4 request (once only) was let through by a session grant")
	}
	b := newApproval(now, time.Minute, "s1")
	b.InputHash = a.InputHash
	create(t, s, b)
	approve(t, s, b, warden.GrantOnce, now)
	if g, ok, _ := s.TakeGrant(ctx, warden.GrantQuery{InputHash: a.InputHash, Session: "s1", OnceOnly: true, At: now}); !ok || g.Kind != warden.GrantOnce {
		t.Errorf("once only = %+v, %v; want the once grant", g, ok)
	}
}

func testGrantBoundToInput(t *testing.T, s warden.ApprovalStore) {
	now := time.Now()
	a := newApproval(now, time.Minute, "s1")
	create(t, s, a)
	approve(t, s, a, warden.GrantSession, now)
	changed := a.Request
	changed.Resource = "rm -rf /"
	if _, ok, _ := s.TakeGrant(ctx, warden.GrantQuery{InputHash: warden.InputHash(&changed), Session: "s1", At: now}); ok {
		t.Error("a grant applied to a changed input")
	}
}
