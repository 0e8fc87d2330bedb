// Package approval makes "ask" real: it opens a pending approval for a request
// a human must confirm, takes the human's answer (once, deny, session, always,
// or host: run a shell command once on the host) from any channel, re-checks the request against the current policy before
// approving it, remembers the answer as a grant bound to the exact input, and
// lets the requester wait for the end. An approval nobody answers expires,
// which is a deny.
package approval

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/clip"
)

// DefaultTimeout is how long an approval waits for an answer.
const DefaultTimeout = 5 * time.Minute

// pollEvery is how often a waiter looks at the store for an answer given by
// another process.
const pollEvery = 250 * time.Millisecond

// Decider re-decides a request against the current policy, without recording
// anything: *pipeline.Pipeline.
type Decider interface {
	Decide(ctx context.Context, req *warden.Request) warden.Decision
}

// AlwaysWriter turns an "always" answer into a persistent rule (in the policy
// file) and returns a description of the rule for the audit log.
type AlwaysWriter interface {
	AddAlways(ctx context.Context, a warden.Approval, by string) (rule string, err error)
}

// Notifier is a channel told about approvals (Telegram, a webhook, the web
// console's live feed). A notifier's failure is logged, never fatal: the
// approval stays answerable from every other channel.
type Notifier interface {
	Name() string
	// Asked is told of a new pending approval.
	Asked(ctx context.Context, a warden.Approval) error
	// Ended is told when an approval ends, however it ended.
	Ended(ctx context.Context, a warden.Approval) error
}

// EventFunc records a security event about an approval.
type EventFunc func(ctx context.Context, typ string, sev warden.Severity, traceID, summary string, meta map[string]any) error

// Who answers an approval.
type Who struct {
	// Name identifies the person or credential, e.g. "operator" or a Telegram
	// user id; it is recorded as answered_by.
	Name string
	// Channel is where the answer came from: terminal, console, telegram, api.
	Channel string
}

// Human reports whether the answer came through a channel a person uses
// directly; only those may approve a tier 4 request.
func (w Who) Human() bool {
	switch w.Channel {
	case "terminal", "console", "telegram":
		return true
	}
	return false
}

func (w Who) String() string {
	if w.Name == "" {
		return w.Channel
	}
	return w.Channel + ":" + w.Name
}

// Queue is the approval queue. Store, Decider and Events are required.
type Queue struct {
	Store warden.ApprovalStore
	// Decider returns the pipeline of the current policy, for the re-check
	// when an approval is granted.
	Decider func() Decider
	// Always writes "always" answers; nil refuses them.
	Always    AlwaysWriter
	Events    EventFunc
	Notifiers []Notifier
	Now       func() time.Time
	NewID     func() string
	// Log receives notifier failures; nil drops them.
	Log func(msg string, args ...any)

	ttl atomic.Int64 // nanoseconds; zero is DefaultTimeout

	mu      sync.Mutex
	waiters map[string][]chan struct{}
}

// SetTimeout sets how long approvals opened from now on wait; zero or less
// is DefaultTimeout. It is safe to call while the queue is in use (the
// daemon does when the policy file changes).
func (q *Queue) SetTimeout(d time.Duration) { q.ttl.Store(int64(d)) }

func (q *Queue) now() time.Time {
	if q.Now != nil {
		return q.Now()
	}
	return time.Now()
}

// Timeout is how long an approval opened now waits for an answer.
func (q *Queue) Timeout() time.Duration { return q.timeout() }

func (q *Queue) timeout() time.Duration {
	if d := time.Duration(q.ttl.Load()); d > 0 {
		return d
	}
	return DefaultTimeout
}

// Open stores a pending approval for req, which d (an ask) decided. req and d
// must already be redacted where they will be stored; hash is the input hash
// of the request as it will run. The approval id is set in d.ApprovalID.
func (q *Queue) Open(ctx context.Context, req *warden.Request, d *warden.Decision, hash, channel string) (warden.Approval, error) {
	if d.Verdict != warden.Ask {
		return warden.Approval{}, warden.Errorf(warden.EInternal, "only an ask can wait for approval; this request was decided %s", d.Verdict)
	}
	now := q.now()
	a := warden.Approval{
		ID: q.NewID(), TraceID: req.TraceID, Request: *req, Decision: *d, InputHash: hash,
		CreatedAt: now, ExpiresAt: now.Add(q.timeout()), Channel: channel, State: warden.ApprovalPending,
	}
	a.Decision.ApprovalID = a.ID
	if err := q.Store.CreateApproval(ctx, &a); err != nil {
		return warden.Approval{}, warden.Errorf(warden.EUnavailable, "could not store the approval, so the request is denied").Wrap(err)
	}
	d.ApprovalID = a.ID
	if err := q.event(ctx, warden.EventApprovalRequested, warden.SevInfo, &a, fmt.Sprintf("approval %s opened: %s", a.ID, Describe(&a.Request)), nil); err != nil {
		return warden.Approval{}, err
	}
	for _, n := range q.Notifiers {
		if err := n.Asked(ctx, a); err != nil {
			q.log("approval channel could not be told of a new approval", "channel", n.Name(), "approval", a.ID, "error", err)
		}
	}
	return a, nil
}

// Get returns one approval, its state as of now.
func (q *Queue) Get(ctx context.Context, id string) (warden.Approval, error) {
	a, err := q.Store.GetApproval(ctx, id)
	if err != nil {
		return a, err
	}
	a.State = a.StateAt(q.now())
	return a, nil
}

// List returns the approvals matching f, newest first, their states as of now.
func (q *Queue) List(ctx context.Context, f warden.ApprovalFilter) ([]warden.Approval, error) {
	now := q.now()
	if f.Pending && f.Now.IsZero() {
		f.Now = now
	}
	as, err := q.Store.ListApprovals(ctx, f)
	for i := range as {
		as[i].State = as[i].StateAt(now)
	}
	return as, err
}

// Answer records who's answer to approval id. An approving answer is first
// re-checked against the current policy: if the policy now denies the
// request, the approval ends denied, with the reason as its note. A tier 4
// request accepts only "once" (or "host"), and only from a human channel; a
// request without a session cannot be granted for its session. "host" is
// taken only for a shell command: it grants one run of the exact input on
// the host, and is recorded as an escalation (EventHostEscalation).
func (q *Queue) Answer(ctx context.Context, id string, ans warden.Answer, who Who) (warden.Approval, error) {
	if _, err := warden.ParseAnswer(string(ans)); err != nil {
		return warden.Approval{}, err
	}
	a, err := q.Store.GetApproval(ctx, id)
	if err != nil {
		return warden.Approval{}, err
	}
	now := q.now()
	if st := a.StateAt(now); st != warden.ApprovalPending {
		return a, warden.Errorf(warden.EConflict, "approval %s is already %s", id, st).WithHint("`warden approvals list` shows the pending ones")
	}
	if err := checkAnswer(&a, ans, who, q.Always != nil); err != nil {
		return a, err
	}
	r := warden.Resolution{ID: id, State: warden.ApprovalDenied, Answer: ans, By: who.String(), At: now}
	var g *warden.Grant
	if ans.Approves() {
		req := a.Request
		d := q.Decider().Decide(ctx, &req)
		if d.Verdict == warden.Deny {
			r.Note = "the current policy denies this request: " + d.Reason
		} else {
			r.State = warden.ApprovalApproved
			g = &warden.Grant{ID: q.NewID(), Kind: warden.GrantOnce, InputHash: a.InputHash, Session: a.Request.Session,
				ApprovalID: id, By: r.By, CreatedAt: now}
			g.Host = ans == warden.AnswerHost
			if ans == warden.AnswerSession {
				g.Kind = warden.GrantSession
			} else {
				// A once grant waits for the retry no longer than the ask did.
				g.ExpiresAt = now.Add(q.timeout())
			}
		}
	}
	ended, err := q.Store.ResolveApproval(ctx, r, g)
	if err != nil {
		return a, err
	}
	sev := warden.SevInfo
	if ended.State == warden.ApprovalApproved {
		sev = warden.SevWarn
	}
	summary := fmt.Sprintf("approval %s %s by %s (%s)", id, ended.State, r.By, ans)
	if r.Note != "" {
		summary += ": " + r.Note
	}
	if err := q.event(ctx, warden.EventApprovalAnswered, sev, &ended, summary, map[string]any{"answer": ans, "by": r.By, "state": ended.State}); err != nil {
		return ended, err
	}
	if ans == warden.AnswerHost && ended.State == warden.ApprovalApproved {
		if err := q.escalated(ctx, &ended, who); err != nil {
			return ended, err
		}
	}
	q.ended(ctx, ended)
	if ans == warden.AnswerAlways && ended.State == warden.ApprovalApproved {
		// The rule is written after the answer is settled, so a concurrent
		// deny can never leave an always rule behind.
		rule, err := q.Always.AddAlways(ctx, ended, r.By)
		if err != nil {
			return ended, warden.Errorf(warden.EUnavailable, "approval %s is approved once, but the always rule could not be added to the policy file", id).Wrap(err).
				WithHint("fix the policy file (`warden config validate`); the next identical request will ask again")
		}
		if err := q.event(ctx, warden.EventPolicyRuleAdded, warden.SevWarn, &ended, fmt.Sprintf("%s always allows %s", r.By, Describe(&ended.Request)), map[string]any{"rule": rule}); err != nil {
			return ended, err
		}
	}
	return ended, nil
}

// escalated records that who let approval a's shell command run on the
// host, outside any sandbox: a security event of its own, apart from the
// answer, so that every escalation can be found by its type.
func (q *Queue) escalated(ctx context.Context, a *warden.Approval, who Who) error {
	summary := fmt.Sprintf("%s let a command run on the host, outside the sandbox (approval %s, once): %s", who, a.ID, clip.String(a.Request.Resource, 200))
	return q.event(ctx, warden.EventHostEscalation, warden.SevWarn, a, summary, map[string]any{
		"command": a.Request.Resource, "by": who.String(), "channel": who.Channel, "session": a.Request.Session,
		"cwd": a.Request.Cwd, "requested_through": a.Channel, "rule": a.Decision.Rule, "tier": a.Decision.Tier,
	})
}

// checkAnswer refuses answers the approval cannot take.
func checkAnswer(a *warden.Approval, ans warden.Answer, who Who, canAlways bool) error {
	if ans == warden.AnswerHost && !warden.RunsOnHost(&a.Request) {
		return warden.Errorf(warden.EInvalid, "approval %s is a %s %s request, and only a shell command can be run on the host", a.ID, a.Request.Capability, a.Request.Action).
			WithHint("answer once, session, always or deny")
	}
	if a.Decision.ManualOnly && ans.Approves() {
		if ans != warden.AnswerOnce && ans != warden.AnswerHost {
			return warden.Errorf(warden.EInvalid, "approval %s is tier 4 (manual only): it can only be approved once, never for a session or always", a.ID).
				WithHint("answer once, or deny")
		}
		if !who.Human() {
			return warden.Errorf(warden.EInvalid, "approval %s is tier 4 (manual only): only a person at the terminal, the web console or Telegram may approve it, not %s", a.ID, who.Channel)
		}
	}
	if ans == warden.AnswerAlways && !canAlways {
		return warden.Errorf(warden.EInvalid, "this warden cannot write always rules (no policy file is attached)").WithHint("answer once or session")
	}
	if ans == warden.AnswerSession && a.Request.Session == "" {
		return warden.Errorf(warden.EInvalid, "approval %s belongs to no session, so it cannot be approved for one", a.ID).
			WithHint("answer once, or always")
	}
	return nil
}

// Wait blocks until approval id ends (or ctx does) and returns it. An
// approval still pending at its expiry is expired here.
func (q *Queue) Wait(ctx context.Context, id string) (warden.Approval, error) {
	wake := q.subscribe(id)
	defer q.unsubscribe(id, wake)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		a, err := q.Store.GetApproval(ctx, id)
		if err != nil {
			return a, err
		}
		now := q.now()
		switch a.StateAt(now) {
		case warden.ApprovalPending:
		case warden.ApprovalExpired:
			return q.expire(ctx, a)
		default:
			return a, nil
		}
		expiry := time.NewTimer(a.ExpiresAt.Sub(now))
		select {
		case <-ctx.Done():
			expiry.Stop()
			return a, ctx.Err()
		case <-wake:
		case <-tick.C:
		case <-expiry.C:
		}
		expiry.Stop()
	}
}

// ExpireDue ends every approval past its expiry that is still pending, and
// returns how many it ended.
func (q *Queue) ExpireDue(ctx context.Context) (int, error) {
	now := q.now()
	due, err := q.Store.ListApprovals(ctx, warden.ApprovalFilter{Pending: true})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, a := range due {
		if a.StateAt(now) != warden.ApprovalExpired {
			continue
		}
		if _, err := q.expire(ctx, a); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// expire records the expiry of a, unless someone ended it first.
func (q *Queue) expire(ctx context.Context, a warden.Approval) (warden.Approval, error) {
	ended, err := q.Store.ResolveApproval(ctx, warden.Resolution{ID: a.ID, State: warden.ApprovalExpired, At: a.ExpiresAt,
		Note: "nobody answered in time, which is a deny"}, nil)
	if warden.ErrorCodeOf(err) == warden.EConflict {
		return q.Store.GetApproval(ctx, a.ID) // answered or expired meanwhile
	}
	if err != nil {
		return a, err
	}
	if err := q.event(ctx, warden.EventApprovalExpired, warden.SevInfo, &ended, fmt.Sprintf("approval %s expired unanswered: %s", a.ID, Describe(&a.Request)), nil); err != nil {
		return ended, err
	}
	q.ended(ctx, ended)
	return ended, nil
}

// Grant returns the grant that lets req (decided d, an ask) run, using up a
// once grant; ok is false when there is none. A tier 4 request takes only a
// once grant: a fresh answer to this exact input.
func (q *Queue) Grant(ctx context.Context, req *warden.Request, d *warden.Decision, hash string) (warden.Grant, bool, error) {
	return q.Store.TakeGrant(ctx, warden.GrantQuery{InputHash: hash, Session: req.Session, OnceOnly: d.ManualOnly, At: q.now()})
}

// Covers reports whether a live grant covers req's input (hash) in its
// session, without using it up.
func (q *Queue) Covers(ctx context.Context, req *warden.Request, hash string) (bool, error) {
	_, ok, err := q.Store.TakeGrant(ctx, warden.GrantQuery{InputHash: hash, Session: req.Session, At: q.now(), Peek: true})
	return ok, err
}

// Wake makes the waiters of approval id look at the store now, instead of
// at their next poll: for a store shared with other processes, which
// announce the approvals they changed (a fleet's LISTEN/NOTIFY). An id
// nobody waits for does nothing.
func (q *Queue) Wake(id string) {
	q.mu.Lock()
	for _, ch := range q.waiters[id] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	q.mu.Unlock()
}

func (q *Queue) ended(ctx context.Context, a warden.Approval) {
	q.Wake(a.ID)
	for _, n := range q.Notifiers {
		if err := n.Ended(ctx, a); err != nil {
			q.log("approval channel could not be told an approval ended", "channel", n.Name(), "approval", a.ID, "error", err)
		}
	}
}

func (q *Queue) subscribe(id string) chan struct{} {
	ch := make(chan struct{}, 1)
	q.mu.Lock()
	if q.waiters == nil {
		q.waiters = map[string][]chan struct{}{}
	}
	q.waiters[id] = append(q.waiters[id], ch)
	q.mu.Unlock()
	return ch
}

func (q *Queue) unsubscribe(id string, ch chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	ws := q.waiters[id]
	for i, w := range ws {
		if w == ch {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(q.waiters, id)
	} else {
		q.waiters[id] = ws
	}
}

func (q *Queue) event(ctx context.Context, typ string, sev warden.Severity, a *warden.Approval, summary string, extra map[string]any) error {
	meta := map[string]any{"approval_id": a.ID, "input_hash": a.InputHash, "capability": a.Request.Capability, "action": a.Request.Action}
	for k, v := range extra {
		meta[k] = v
	}
	return q.Events(ctx, typ, sev, a.TraceID, summary, meta)
}

func (q *Queue) log(msg string, args ...any) {
	if q.Log != nil {
		q.Log(msg, args...)
	}
}

// Describe is a one-line description of what a request asks for, for
// channels and events: "shell exec: rm -rf build".
func Describe(r *warden.Request) string {
	s := r.Capability + " " + r.Action
	if r.Resource != "" {
		s += ": " + clip.String(r.Resource, 200)
	}
	return s
}

// Content is everything a human may want to see before answering: the full
// request, its parameters, why the agent wants it and what every stage said.
func Content(a *warden.Approval) string {
	b, err := json.MarshalIndent(struct {
		Request  warden.Request  `json:"request"`
		Decision warden.Decision `json:"decision"`
	}{a.Request, a.Decision}, "", "  ")
	if err != nil {
		return Describe(&a.Request)
	}
	return string(b)
}
