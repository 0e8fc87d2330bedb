package warden_test

import (
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// TestCheckResolution: a pending approval may be answered before its expiry
// and expired at it; an ended one, or one past its expiry answered, is a
// conflict; a host grant goes only with the answer host.
func TestCheckResolution(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pending := warden.Approval{ID: "a1", State: warden.ApprovalPending, ExpiresAt: t0.Add(time.Minute)}
	denied := pending
	denied.State = warden.ApprovalDenied
	approve := warden.Resolution{ID: "a1", State: warden.ApprovalApproved, Answer: warden.AnswerOnce, At: t0}
	expire := warden.Resolution{ID: "a1", State: warden.ApprovalExpired, At: t0.Add(time.Minute)}
	late := approve
	late.At = t0.Add(time.Minute)
	host := approve
	host.Answer = warden.AnswerHost
	for _, c := range []struct {
		name string
		a    warden.Approval
		r    warden.Resolution
		g    *warden.Grant
		want warden.ErrorCode
	}{
		{"answered in time", pending, approve, &warden.Grant{Kind: warden.GrantOnce}, ""},
		{"expired at its expiry", pending, expire, nil, ""},
		{"answered past its expiry", pending, late, nil, warden.EConflict},
		{"already ended", denied, approve, nil, warden.EConflict},
		{"host answer with its host grant", pending, host, &warden.Grant{Kind: warden.GrantOnce, Host: true}, ""},
		{"host grant without the host answer", pending, approve, &warden.Grant{Kind: warden.GrantOnce, Host: true}, warden.EInternal},
		{"host answer with a plain grant", pending, host, &warden.Grant{Kind: warden.GrantOnce}, warden.EInternal},
	} {
		err := c.a.CheckResolution(c.r, c.g)
		if got := warden.ErrorCodeOf(err); (err == nil) != (c.want == "") || (err != nil && got != c.want) {
			t.Errorf("%s: CheckResolution = %v (code %q), want code %q", c.name, err, got, c.want)
		}
	}
	if a, h := host.StoredAnswer(); a != warden.AnswerOnce || !h {
		t.Errorf("run on host is stored as %q, host %v; want once, host", a, h)
	}
	if a, h := approve.StoredAnswer(); a != warden.AnswerOnce || h {
		t.Errorf("once is stored as %q, host %v; want once, not host", a, h)
	}
}
