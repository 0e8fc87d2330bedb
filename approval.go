package warden

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// ApprovalState is where a pending approval stands. An approval that is still
// pending after its ExpiresAt is expired, which means denied.
type ApprovalState string

const (
	ApprovalPending  ApprovalState = "pending"
	ApprovalApproved ApprovalState = "approved"
	ApprovalDenied   ApprovalState = "denied"
	ApprovalExpired  ApprovalState = "expired"
)

// Answer is what a human answers to an approval.
type Answer string

const (
	// AnswerOnce approves this one request: one run of the exact input.
	AnswerOnce Answer = "once"
	// AnswerDeny refuses it.
	AnswerDeny Answer = "deny"
	// AnswerSession approves the exact input for the rest of its session.
	AnswerSession Answer = "session"
	// AnswerAlways approves the exact input from now on, by adding a rule to
	// the policy file.
	AnswerAlways Answer = "always"
	// AnswerHost approves one run of the exact input on the host, outside
	// any sandbox: "run on host", for shell commands that need the host
	// (git push over SSH, docker, gh with its stored login). Only a shell
	// command (RunsOnHost) takes it, and it is audited as an escalation.
	AnswerHost Answer = "host"
)

// ParseAnswer reads an answer name; "approve" is AnswerOnce.
func ParseAnswer(s string) (Answer, error) {
	switch Answer(s) {
	case AnswerOnce, AnswerDeny, AnswerSession, AnswerAlways, AnswerHost:
		return Answer(s), nil
	case "approve":
		return AnswerOnce, nil
	}
	return "", Errorf(EInvalid, "unknown answer %q", s).WithHint("answer once (or approve), deny, session, always, or host (run a shell command once on the host)")
}

// Approves reports whether the answer lets the request run.
func (a Answer) Approves() bool {
	return a == AnswerOnce || a == AnswerSession || a == AnswerAlways || a == AnswerHost
}

// RunsOnHost reports whether a request can be answered AnswerHost: only a
// shell command (capability shell, action exec) can run on the host.
func RunsOnHost(r *Request) bool { return r.Capability == CapShell && r.Action == "exec" }

// Approval is one ask waiting for, or answered by, a human. Request and
// Decision are stored redacted.
type Approval struct {
	ID        string    `json:"id"`
	TraceID   string    `json:"trace_id"`
	Request   Request   `json:"request"`
	Decision  Decision  `json:"decision"`
	InputHash string    `json:"input_hash"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	// Channel is where the ask came from: api, hook:codex, exec, proxy, cli…
	Channel    string        `json:"channel"`
	State      ApprovalState `json:"state"`
	Answer     Answer        `json:"answer,omitempty"`
	AnsweredBy string        `json:"answered_by,omitempty"`
	AnsweredAt time.Time     `json:"answered_at,omitzero"`
	// Note says why an approval ended the way it did when the answer alone
	// does not (e.g. "the kill switch is on").
	Note string `json:"note,omitempty"`
}

// StateAt is the approval's state at t: a pending approval past its expiry is
// expired.
func (a *Approval) StateAt(t time.Time) ApprovalState {
	if a.State == ApprovalPending && !t.Before(a.ExpiresAt) {
		return ApprovalExpired
	}
	return a.State
}

// ApprovalFilter selects approvals; zero fields match everything.
type ApprovalFilter struct {
	// Pending selects approvals not answered yet; with Now set, only those
	// still before their expiry at Now.
	Pending bool
	Now     time.Time
	// InputHash, when set, selects approvals of that exact input in Session
	// (the empty session included).
	InputHash string
	Session   string
	Limit     int
}

// GrantKind is how far a remembered answer reaches.
type GrantKind string

const (
	// GrantOnce lets the exact input run one more time, then is used up.
	GrantOnce GrantKind = "once"
	// GrantSession lets the exact input run for the rest of its session.
	GrantSession GrantKind = "session"
)

// Grant is a remembered human answer, bound to the hash of the exact input
// (and, for session grants, the session). "Always" answers are not grants in
// the store: they are rules in the policy file.
type Grant struct {
	ID   string    `json:"id"`
	Kind GrantKind `json:"kind"`
	// Host says the human answered "run on host" (AnswerHost): the once
	// grant runs its shell command on the host, unconfined. Only once
	// grants carry it; false runs the command as its decision says.
	Host       bool      `json:"host,omitempty"`
	InputHash  string    `json:"input_hash"`
	Session    string    `json:"session,omitempty"`
	ApprovalID string    `json:"approval_id"`
	By         string    `json:"by"`
	CreatedAt  time.Time `json:"created_at"`
	ExpiresAt  time.Time `json:"expires_at,omitzero"`
}

// GrantQuery asks for a grant that covers an input.
type GrantQuery struct {
	InputHash string
	Session   string
	// OnceOnly admits only once grants (a tier 4 request: no standing grant).
	OnceOnly bool
	// Peek reports the grant without using up a once grant.
	Peek bool
	At   time.Time
}

// Resolution is a human's answer to one approval, or its expiry.
type Resolution struct {
	ID    string
	State ApprovalState // approved, denied or expired
	// Answer is empty for an expiry.
	Answer Answer
	By     string
	At     time.Time
	Note   string
}

// CheckResolution says whether r may end a, as stored now, with g: nil when
// a is pending at r.At (or r is the expiry that ends it), else an *Error of
// code EConflict; a grant that does not go with the answer is EInternal.
// Every ApprovalStore's ResolveApproval checks this inside its transaction.
func (a *Approval) CheckResolution(r Resolution, g *Grant) error {
	st := a.StateAt(r.At)
	if r.State == ApprovalExpired && st == ApprovalExpired && a.State == ApprovalPending {
		st = ApprovalPending // the expiry is what ends it
	}
	if st != ApprovalPending {
		return Errorf(EConflict, "approval %s is already %s", r.ID, st).WithHint("`warden approvals list` shows the pending ones")
	}
	if g != nil && g.Host != (r.Answer == AnswerHost) {
		return Errorf(EInternal, "approval %s: a host grant goes only with the answer host", r.ID)
	}
	return nil
}

// StoredAnswer is r's answer as a store keeps it: "run on host"
// (AnswerHost) is the answer once with host set.
func (r Resolution) StoredAnswer() (answer Answer, host bool) {
	if r.Answer == AnswerHost {
		return AnswerOnce, true
	}
	return r.Answer, false
}

// ApprovalStore keeps approvals and grants. Approvals change state once, from
// pending to approved, denied or expired; grants are added and once grants used
// up. Implementations make each method atomic across processes.
type ApprovalStore interface {
	// CreateApproval stores a new pending approval. Its request is kept in
	// the stored form (EncodeStoredRequest), so a protective exit is still
	// one when it is re-checked.
	CreateApproval(ctx context.Context, a *Approval) error
	// GetApproval returns one approval, or an *Error with code ENotFound.
	GetApproval(ctx context.Context, id string) (Approval, error)
	// ListApprovals returns the approvals matching f, newest first.
	ListApprovals(ctx context.Context, f ApprovalFilter) ([]Approval, error)
	// ResolveApproval ends a pending approval, storing g (when not nil) in the
	// same transaction. It fails with an *Error of code EConflict when the
	// approval already ended, or is past its expiry at r.At and r is not
	// the expiry itself.
	ResolveApproval(ctx context.Context, r Resolution, g *Grant) (Approval, error)
	// TakeGrant returns a live grant covering q, using up a once grant
	// unless q.Peek.
	TakeGrant(ctx context.Context, q GrantQuery) (Grant, bool, error)
}

// InputHash is the hash that binds approvals and grants to the exact input:
// SHA-256 over the canonical JSON of the capability, action, resource, tool,
// params and working directory. Who asked, why and when are not part of it.
func InputHash(r *Request) string {
	params := make(map[string]any, len(r.Params))
	valid := true
	for k, v := range r.Params {
		x, ok := canonicalValue(v)
		params[k], valid = x, valid && ok
	}
	// encoding/json sorts map keys, which makes this canonical.
	b, err := json.Marshal(map[string]any{
		"capability": r.Capability, "action": r.Action, "resource": r.Resource,
		"tool": r.Tool, "params": params, "cwd": r.Cwd,
	})
	if err != nil || !valid {
		// Not JSON all through: hash the text as given, behind a byte no
		// JSON document starts with, so it cannot collide with a valid input.
		b = fmt.Appendf(nil, "\x00%v", r.Params)
		b = fmt.Appendf(b, "%q\x00%q\x00%q\x00%q\x00%q", r.Capability, r.Action, r.Resource, r.Tool, r.Cwd)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// canonicalValue decodes a JSON value with numbers kept as written, so that
// two amounts a float would round together never share a hash.
func canonicalValue(v json.RawMessage) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil || dec.More() {
		return nil, false
	}
	return x, true
}
