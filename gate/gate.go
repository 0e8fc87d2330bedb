// Package gate is the one path every action takes: it runs a request through
// the pipeline, redacts what will be stored and shown, records the decision
// durably in the audit log (debiting the spend ledger atomically when an allowed
// request moves funds), and only then returns the decision. A decision that
// could not be recorded is never returned: the caller gets an error and must
// deny.
package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/redact"
)

// Decider decides a request; *pipeline.Pipeline implements it.
type Decider interface {
	Decide(ctx context.Context, req *warden.Request) warden.Decision
}

// Gate ties the pipeline to the audit store. All fields but Now and NewID are
// required; a Gate missing its Decider or Store returns errors, never decisions.
type Gate struct {
	Decider Decider
	Store   warden.AuditStore
	// Debit returns the spend-ledger debit an allowed req needs, or nil when it
	// moves no funds (see safety.SpendCap.Debit).
	Debit func(req *warden.Request, at time.Time) *warden.Debit
	Now   func() time.Time
	NewID func() string
}

// Check decides req and records the decision. The returned decision has its
// reasons redacted. On error nothing was recorded and the caller must deny.
func (g *Gate) Check(ctx context.Context, req *warden.Request) (warden.Decision, error) {
	if g == nil || g.Decider == nil || g.Store == nil {
		return warden.Decision{}, warden.Errorf(warden.EInternal, "the gate is not configured")
	}
	now := g.now()
	req.Received = now
	if req.TraceID == "" {
		if g.NewID == nil {
			return warden.Decision{}, warden.Errorf(warden.EInternal, "the gate has no trace id source")
		}
		req.TraceID = g.NewID()
	}
	d := g.Decider.Decide(ctx, req)
	d.TraceID = req.TraceID
	redactDecision(&d)

	var debit *warden.Debit
	if (d.Verdict == warden.Allow || d.Verdict == warden.Sandbox) && g.Debit != nil {
		debit = g.Debit(req, now)
	}
	e := Entry(req, &d, g.now().Sub(now))
	err := g.Store.Record(ctx, e, debit)
	var capErr *warden.CapExceededError
	if errors.As(err, &capErr) {
		// Another process spent the headroom between the cap stage's read and
		// this atomic check-and-debit: the ledger wins, and the request is denied.
		denyForCap(&d, capErr)
		e = Entry(req, &d, g.now().Sub(now))
		err = g.Store.Record(ctx, e, nil)
	}
	if err != nil {
		return warden.Decision{}, warden.Errorf(warden.EUnavailable, "could not record the decision in the audit log, so the request is denied").
			Wrap(err).WithHint("check that $WARDEN_HOME/warden.db is writable; `warden audit verify` checks its integrity")
	}
	return d, nil
}

func (g *Gate) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// denyForCap turns d into a deny by the spend cap, updating the spend-cap
// stage's recorded answer so the audit log shows which check bound.
func denyForCap(d *warden.Decision, e *warden.CapExceededError) {
	reason := fmt.Sprintf("$%s already spent in the last 24 hours; $%s more would exceed the daily cap of $%s (checked atomically when recording)",
		e.Spent, e.Amount, e.Cap)
	d.Verdict, d.Rule, d.Reason = warden.Deny, "safety.daily_cap", reason
	d.Sandbox, d.Rewrite = "", ""
	for i := range d.Stages {
		if d.Stages[i].Rule == "safety.daily_cap" {
			d.Stages[i].Verdict, d.Stages[i].Reason = warden.Deny, reason
		}
	}
}

func redactDecision(d *warden.Decision) {
	d.Reason = redact.String(d.Reason)
	d.Rewrite = redact.String(d.Rewrite)
	for i := range d.Stages {
		d.Stages[i].Reason = redact.String(d.Stages[i].Reason)
		d.Stages[i].Error = redact.String(d.Stages[i].Error)
	}
}

// Entry builds the audit entry for a decided request, redacting every field
// that can carry a secret. d must already be redacted.
func Entry(req *warden.Request, d *warden.Decision, took time.Duration) *warden.AuditEntry {
	e := &warden.AuditEntry{
		TraceID:     req.TraceID,
		CreatedAt:   req.Received,
		Capability:  req.Capability,
		Action:      req.Action,
		Resource:    redact.String(req.Resource),
		Tool:        req.ToolName(),
		Tier:        d.Tier,
		Context:     redact.String(req.Context),
		RequestedBy: req.RequestedBy,
		Autonomous:  req.Autonomous,
		Session:     req.Session,
		Host:        req.Host,
		Verdict:     d.Verdict,
		Blocked:     d.Blocked(),
		Reason:      d.Reason,
		Rule:        d.Rule,
		Duration:    took,
		Stages:      d.Stages,
	}
	if e.Blocked {
		e.BlockReason = d.Reason
	}
	if len(req.Params) > 0 {
		if b, err := json.Marshal(req.Params); err == nil {
			e.Args = redact.JSON(b)
		} else {
			e.Args = redact.JSON(json.RawMessage(fmt.Sprintf("%q", "unencodable params: "+err.Error())))
		}
	}
	if len(req.Raw) > 0 {
		e.Raw = redact.JSON(req.Raw)
	}
	return e
}
