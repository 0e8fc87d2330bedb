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
	"strings"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/approval"
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
	// Approvals, when set, lets remembered answers (grants) settle asks, and
	// opens approvals for asks whose caller will wait (CheckOptions.Approval).
	Approvals *approval.Queue
	// Always looks an input hash up among the policy file's "always" rules,
	// returning the rule's description; nil has none.
	Always func(inputHash string) (rule string, ok bool)
	// InputHash is what an ask's approval, grants and always rules are bound
	// to: an answer covers exactly the requests of the same hash. nil is
	// warden.InputHash, the exact input; a capability may bind more broadly
	// (the network binds to the destination, see netguard.InputHash).
	InputHash func(*warden.Request) string
}

// CheckOptions adjust one Check.
type CheckOptions struct {
	// Approval names the channel the request came through (api, hook:codex,
	// exec…) when the caller wants an ask to open a pending approval it can
	// wait for; empty opens none.
	Approval string
	// JoinPending makes an ask whose exact input (in the same session)
	// already waits for an answer carry that approval's id instead of opening
	// another: for callers that retry rather than wait, so retrying does not
	// pile up approvals. The approve-once grant lets the retry through.
	JoinPending bool
	// DryRun decides and records without debiting the spend ledger or
	// taking a rate slot: an allowed fund-moving request reserves nothing,
	// and its decision says so. A check that is only a question (`warden
	// check`) is a dry run; only a path that then executes (the trader, a
	// hook before the host runs its tool) reserves.
	DryRun bool
}

// Check decides req and records the decision. The returned decision has its
// reasons redacted. On error nothing was recorded and the caller must deny.
func (g *Gate) Check(ctx context.Context, req *warden.Request) (warden.Decision, error) {
	return g.CheckWith(ctx, req, CheckOptions{})
}

// CheckWith is Check with options. An ask that a grant or an always rule
// covers becomes the verdict it would have had without the ask (allow, or
// sandbox when a stage demanded isolation); a tier 4 ask takes only a once
// grant. An ask left standing opens an approval when opt.Approval is set, and
// the decision carries its id.
func (g *Gate) CheckWith(ctx context.Context, req *warden.Request, opt CheckOptions) (warden.Decision, error) {
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
	var hash string
	if d.Verdict == warden.Ask {
		hash = g.inputHash(req)
		if err := g.settle(ctx, req, &d, hash); err != nil {
			return warden.Decision{}, err
		}
	}
	redactDecision(&d)
	opening := d.Verdict == warden.Ask && opt.Approval != ""
	if opening && g.Approvals == nil {
		return warden.Decision{}, warden.Errorf(warden.EUnavailable, "this warden has no approval queue, so the ask cannot wait for a human and the request is denied")
	}
	if opening && opt.JoinPending {
		open, err := g.Approvals.List(ctx, warden.ApprovalFilter{Pending: true, InputHash: hash, Session: req.Session, Limit: 1})
		if err != nil {
			return warden.Decision{}, warden.Errorf(warden.EUnavailable, "could not look for a pending approval of this request, so it is denied").Wrap(err)
		}
		if len(open) > 0 {
			d.ApprovalID, opening = open[0].ID, false
		}
	}

	var debit *warden.Debit
	switch {
	case g.Debit == nil:
	case opt.DryRun:
		if d.Verdict == warden.Allow || d.Verdict == warden.Sandbox {
			noteReservedNothing(&d, g.Debit(req, now))
		}
	case d.Verdict == warden.Allow || d.Verdict == warden.Sandbox:
		debit = g.Debit(req, now)
	case opening:
		// A pending approval holds the request's rate slot (not its spend,
		// which is debited when the approved request is decided again), so
		// asks cannot pile up past a limit and all be approved later.
		if full := g.Debit(req, now); full != nil && full.Slot != nil {
			slot := *full.Slot
			slot.HoldUntil = now.Add(g.Approvals.Timeout())
			debit = &warden.Debit{Slot: &slot}
		}
	}
	e := Entry(req, &d, g.now().Sub(now))
	err := g.Store.Record(ctx, e, debit)
	// Another process may have taken the headroom between the stages' read
	// and this atomic check-and-take: the store wins, and the request is
	// denied.
	if err != nil && deniedByStore(&d, err) {
		opening = false
		e = Entry(req, &d, g.now().Sub(now))
		err = g.Store.Record(ctx, e, nil)
	}
	if err != nil {
		return warden.Decision{}, unrecorded(err)
	}
	if opening {
		// The approval opens once the decision (and its held slot) is on
		// record, so a refused slot never leaves an approval behind.
		stored := redactRequest(req)
		if _, err := g.Approvals.Open(ctx, &stored, &d, hash, opt.Approval); err != nil {
			if debit != nil {
				_ = g.Release(ctx, req.TraceID, "the approval could not be opened")
			}
			return warden.Decision{}, err
		}
	}
	return d, nil
}

// unrecorded is the error of a decision whose audit record could not be
// written: the request is denied, saying why the store refused when it said
// so in a user's terms (a lost or replaced audit log names what is missing).
func unrecorded(err error) error {
	return storeFailed("could not record the decision in the audit log, so the request is denied", err)
}

// storeFailed is the error of a request denied because the store failed at
// what (a sentence): the store's own message and hint when it gave them in
// a user's terms, else a hint to check the database.
func storeFailed(what string, err error) error {
	msg, hint := what,
		"check that $WARDEN_HOME/warden.db is writable; `warden audit verify` checks its integrity"
	var we *warden.Error
	if errors.As(err, &we) {
		msg += ": " + we.Message
		if we.Hint != "" {
			hint = we.Hint
		}
	}
	return warden.Errorf(warden.EUnavailable, "%s", msg).Wrap(err).WithHint(hint)
}

// Release gives back what the decision traceID reserved (its spend debit, its
// rate slot) when the store is also the ledger; a trace that reserved nothing
// is not an error.
func (g *Gate) Release(ctx context.Context, traceID, reason string) error {
	l, ok := g.Store.(warden.Ledger)
	if !ok {
		return nil
	}
	err := l.Release(ctx, traceID, reason, g.now())
	if warden.ErrorCodeOf(err) == warden.ENotFound {
		return nil
	}
	return err
}

// deniedByStore turns d into a deny when the store refused its reservation
// (the daily cap, a rate limit, a replayed request id), and reports whether
// it did.
func deniedByStore(d *warden.Decision, err error) bool {
	var (
		capErr    *warden.CapExceededError
		rateErr   *warden.RateExceededError
		holdsErr  *warden.HoldsExceededError
		replayErr *warden.ReplayError
	)
	switch {
	case errors.As(err, &holdsErr):
		denyFor(d, holdsErr.Kind+".pending", holdsReason(holdsErr))
	case errors.As(err, &capErr):
		denyForCap(d, capErr)
	case errors.As(err, &rateErr):
		denyFor(d, rateErr.Kind+".rate", fmt.Sprintf("%s rate limit reached: %d already in the last %s, at most %d (checked atomically when recording)",
			rateErr.Kind, rateErr.Held, warden.FormatWindow(rateErr.Limit.Window), rateErr.Limit.Max))
	case errors.As(err, &replayErr):
		denyFor(d, replayErr.Kind+".replay", fmt.Sprintf("request id %q was already used; a request id is accepted once (replay protection)", replayErr.Key))
	default:
		return false
	}
	return true
}

// holdsReason says why an ask could not hold a rate slot while it waits.
func holdsReason(e *warden.HoldsExceededError) string {
	if e.Requester != "" {
		return fmt.Sprintf("%d %s asks of yours (%s) are waiting for a human, and at most %d may wait at once; answer them or let them expire",
			e.Held, e.Kind, e.Requester, e.Max)
	}
	return fmt.Sprintf("%d %s asks are waiting for a human, and pending asks may hold at most %d of the %s limit, so the rest stays for requests allowed outright; answer them or let them expire",
		e.Held, e.Kind, e.Max, warden.FormatWindow(e.Window))
}

// denyFor turns d into a deny by rule, recording it as that rule's stage
// answer (or a new answer when no stage of that rule answered).
func denyFor(d *warden.Decision, rule, reason string) {
	d.Verdict, d.Rule, d.Reason = warden.Deny, rule, reason
	d.Sandbox, d.Rewrite, d.ApprovalID = "", "", ""
	for i := range d.Stages {
		if d.Stages[i].Rule == rule {
			d.Stages[i].Verdict, d.Stages[i].Reason = warden.Deny, reason
			return
		}
	}
	d.Stages = append(d.Stages, warden.StageAnswer{Stage: "store", Verdict: warden.Deny, Rule: rule, Reason: reason})
}

// RuleHostGrant is the rule of a decision a "run on host" answer
// (warden.AnswerHost) settled: an allow whose Sandbox is warden.SandboxHost.
const RuleHostGrant = "grant.host"

// HostGranted reports whether d lets a shell command run on the host because
// a human answered its ask "run on host": the command then runs unconfined,
// as the host would run it, once.
func HostGranted(d *warden.Decision) bool {
	return d.Verdict == warden.Allow && d.Sandbox == warden.SandboxHost && d.Rule == RuleHostGrant
}

// settle turns an ask into the verdict a remembered answer gives it: an
// always rule from the policy file, else a grant from the store. A host
// grant on a shell command allows it on the host (HostGranted), whatever
// sandbox a stage demanded: the human chose the host.
func (g *Gate) settle(ctx context.Context, req *warden.Request, d *warden.Decision, hash string) error {
	answer := warden.StageAnswer{Stage: "grant", Verdict: warden.Allow}
	switch rule, ok := g.always(hash, d); {
	case ok:
		answer.Rule = "approvals.always"
		answer.Reason = "always allowed by the policy file: " + rule
	case g.Approvals != nil:
		start := g.now()
		gr, ok, err := g.Approvals.Grant(ctx, req, d, hash)
		if err != nil {
			return storeFailed("could not look up remembered approvals, so the request is denied", err)
		}
		if !ok {
			return nil
		}
		answer.Duration = g.now().Sub(start)
		answer.Rule = "grant." + string(gr.Kind)
		switch {
		case gr.Host && warden.RunsOnHost(req):
			answer.Rule = RuleHostGrant
			answer.Reason = fmt.Sprintf("approved by %s to run once on the host, outside the sandbox (approval %s)", gr.By, gr.ApprovalID)
		case gr.Kind == warden.GrantSession:
			answer.Reason = fmt.Sprintf("approved for this session by %s (approval %s)", gr.By, gr.ApprovalID)
		default:
			// A host grant on anything but a shell command (which no
			// answer can give) is only approve once: it runs isolated.
			answer.Reason = fmt.Sprintf("approved once by %s (approval %s)", gr.By, gr.ApprovalID)
		}
		d.ApprovalID = gr.ApprovalID
	default:
		return nil
	}
	d.Stages = append(d.Stages, answer)
	d.Verdict, d.Rule = warden.Allow, answer.Rule
	switch {
	case answer.Rule == RuleHostGrant:
		if d.Sandbox != "" && d.Sandbox != warden.SandboxHost {
			answer.Reason += "; the guard had wanted the " + d.Sandbox + " sandbox"
			d.Stages[len(d.Stages)-1].Reason = answer.Reason
		}
		d.Sandbox = warden.SandboxHost
	case d.Sandbox == warden.SandboxHost:
		// The user's shell.host rule named the command: approved, it is
		// allowed as the rule says, like an allow of that rule.
	case d.Sandbox != "":
		d.Verdict = warden.Sandbox // an approved ask still runs isolated
	}
	d.Reason = answer.Reason + "; it had asked: " + d.Reason
	return nil
}

// always looks hash up among the policy's always rules; a tier 4 request is
// never answered by a standing rule.
func (g *Gate) always(hash string, d *warden.Decision) (string, bool) {
	if g.Always == nil || d.ManualOnly {
		return "", false
	}
	return g.Always(hash)
}

// redactRequest is the request as an approval stores it.
func redactRequest(req *warden.Request) warden.Request {
	r := *req
	r.Resource = redact.String(r.Resource)
	r.Context = redact.String(r.Context)
	if len(r.Params) > 0 {
		r.Params = make(map[string]json.RawMessage, len(req.Params))
		for k, v := range req.Params {
			r.Params[k] = redact.JSON(v)
		}
	}
	if len(r.Raw) > 0 {
		r.Raw = redact.JSON(r.Raw)
	}
	return r
}

// Await waits for the approval an ask opened (d.ApprovalID) and returns the
// decision it ends in, recorded like any other: an approved request is decided
// again, so the current policy still applies and the grant is used up there;
// a denied or expired one is a deny. When ctx ends first, the error says so
// and the caller must deny.
func (g *Gate) Await(ctx context.Context, req *warden.Request, d warden.Decision) (warden.Decision, error) {
	approved, denied, err := g.WaitAnswer(ctx, req, d)
	if err != nil || !approved {
		return denied, err
	}
	return g.Check(ctx, req)
}

// WaitAnswer waits for the approval an ask opened (d.ApprovalID) and reports
// whether a human approved it; the caller then decides the request again,
// which uses the grant up. A denied or expired approval is a deny, recorded
// and returned. When ctx ends first, the error says so and the caller must
// deny.
func (g *Gate) WaitAnswer(ctx context.Context, req *warden.Request, d warden.Decision) (approved bool, denied warden.Decision, err error) {
	if d.Verdict != warden.Ask || d.ApprovalID == "" || g.Approvals == nil {
		return false, warden.Decision{}, warden.Errorf(warden.EInternal, "there is no approval to wait for")
	}
	a, err := g.Approvals.Wait(ctx, d.ApprovalID)
	if err != nil {
		return false, warden.Decision{}, warden.Errorf(warden.EUnavailable, "stopped waiting for approval %s, so the request is denied", d.ApprovalID).Wrap(err)
	}
	if a.State == warden.ApprovalApproved {
		return true, warden.Decision{}, nil
	}
	start := g.now()
	d.Verdict, d.Rule, d.Sandbox, d.Rewrite = warden.Deny, "approval."+string(a.State), "", ""
	switch a.State {
	case warden.ApprovalExpired:
		d.Reason = fmt.Sprintf("approval %s expired unanswered, which is a deny", a.ID)
	default:
		d.Reason = fmt.Sprintf("approval %s was denied by %s", a.ID, a.AnsweredBy)
		if a.Note != "" {
			d.Reason += ": " + a.Note
		}
	}
	d.Stages = append(d.Stages, warden.StageAnswer{Stage: "approval", Verdict: warden.Deny, Rule: d.Rule, Reason: d.Reason})
	redactDecision(&d)
	req.Received = start
	if err := g.Store.Record(ctx, Entry(req, &d, 0), nil); err != nil {
		return false, warden.Decision{}, warden.Errorf(warden.EUnavailable, "could not record the decision in the audit log, so the request is denied").Wrap(err)
	}
	return false, d, nil
}

// Covered reports whether a remembered answer (an always rule, or a live
// grant in req's session) covers req's input, without using a grant up: for
// a caller that prepares a request (resolves its name) only once it may
// run. It decides nothing; the request must still be checked.
func (g *Gate) Covered(ctx context.Context, req *warden.Request) (bool, error) {
	hash := g.inputHash(req)
	if g.Always != nil {
		if _, ok := g.Always(hash); ok {
			return true, nil
		}
	}
	if g.Approvals == nil {
		return false, nil
	}
	return g.Approvals.Covers(ctx, req, hash)
}

func (g *Gate) inputHash(req *warden.Request) string {
	if g.InputHash != nil {
		return g.InputHash(req)
	}
	return warden.InputHash(req)
}

func (g *Gate) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// noteReservedNothing says in an allowed dry run's reason that what it would
// have debited (full) was not reserved: the spend-cap stage's answer (whether
// the amount fits the ledger now) stands, and the cap is debited only when a
// trade executes.
func noteReservedNothing(d *warden.Decision, full *warden.Debit) {
	if full == nil || full.Amount <= 0 && full.Slot == nil {
		return
	}
	note := "nothing was reserved: this was only a question"
	if full.Amount > 0 {
		for _, s := range d.Stages {
			if s.Rule == "safety.daily_cap" && s.Verdict == warden.Allow {
				note += "; " + s.Reason
				break
			}
		}
		note += "; only an executing trade (`warden trade`) debits the daily cap, which checks it again atomically"
	}
	d.Reason = strings.Replace(d.Reason, " (reserved atomically when recorded)", "", 1) + " (" + note + ")"
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

// redactDecision redacts what a decision shows. Its reasons are mostly the
// policy's own words, the same for every request of a kind: redacting them
// afresh was a third of what the gate cost a proxied request, so they go
// through redact.Repeated (docs/benchmarks.md, issue 26).
func redactDecision(d *warden.Decision) {
	d.Reason = redact.Repeated(d.Reason)
	d.Rewrite = redact.Repeated(d.Rewrite)
	for i := range d.Stages {
		d.Stages[i].Reason = redact.Repeated(d.Stages[i].Reason)
		d.Stages[i].Error = redact.Repeated(d.Stages[i].Error)
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
		Resource:    redact.Repeated(req.Resource),
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
