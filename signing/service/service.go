// Package service is warden's remote signing service: a sandboxed agent
// submits what it wants signed, the gate decides it (the global stages, then
// signing/policy), and only an allowed request reaches the key. An ask waits
// in the approval queue, holding its rate slot, and is signed only once a
// human approves it and the current policy, re-checked then, still allows it;
// a denied or expired one is never signed and its slot is given back.
//
// Every request is audited three ways: its decision in the audit log, and the
// security events signing_request_submitted, then signing_request_approved or
// signing_request_rejected. No event, result or error ever carries key
// material.
package service

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/gate"
	"github.com/agentwarden/warden/signing"
	"github.com/agentwarden/warden/signing/policy"
)

// Channel is the approval channel signing requests wait in.
const Channel = "signing"

// EventFunc records a security event.
type EventFunc func(ctx context.Context, typ string, sev warden.Severity, traceID, summary string, meta map[string]any) error

// Service signs what the gate allows. Gate (with its approval queue), Signer
// and Events are required; a Service without a Signer refuses every request
// (no key is unlocked).
type Service struct {
	// Gate returns the current policy's gate (the daemon rebuilds it when
	// the policy file changes).
	Gate   func() *gate.Gate
	Signer signing.Signer
	Valuer policy.Valuer
	Events EventFunc
	NewID  func() string

	mu      sync.Mutex
	pending map[string]*pendingSign // by approval id
	results map[string]Result       // ended requests by approval id
	order   []string                // approval ids of results, oldest first
	locks   map[string]*sync.Mutex  // one finisher per approval
}

// maxResults bounds how many ended asks keep their result for a late poll.
const maxResults = 1000

// pendingSign is an ask waiting for a human, with what it would sign.
type pendingSign struct {
	req      *signing.Request
	wreq     *warden.Request
	decision warden.Decision
	created  time.Time
}

// Options adjust one Submit.
type Options struct {
	// Wait is how long Submit waits for a human to answer an ask before
	// returning it pending; zero returns at once.
	Wait        time.Duration
	Session     string
	RequestedBy string
}

// Decision is the policy decision a result carries.
type Decision struct {
	Verdict    string `json:"verdict"`
	Rule       string `json:"rule,omitempty"`
	Reason     string `json:"reason,omitempty"`
	TraceID    string `json:"traceId,omitempty"`
	ApprovalID string `json:"approvalId,omitempty"`
}

// Result is what a signing request came to. Success is true only with a
// signature. A pending result has Pending set and the approval id in its
// decision.
type Result struct {
	Success   bool   `json:"success"`
	Pending   bool   `json:"pending,omitempty"`
	RequestID string `json:"requestId,omitempty"`
	// Signature is the 65-byte signature of a message, or the signed raw
	// transaction (what eth_sendRawTransaction takes), 0x-hex.
	Signature string `json:"signature,omitempty"`
	// TxHash is the hash of a signed transaction.
	TxHash         string   `json:"txHash,omitempty"`
	From           string   `json:"from,omitempty"`
	Error          string   `json:"error,omitempty"`
	PolicyDecision Decision `json:"policyDecision"`
	HumanConfirmed bool     `json:"humanConfirmed"`
}

func decisionOf(d warden.Decision) Decision {
	return Decision{Verdict: d.Verdict.String(), Rule: d.Rule, Reason: d.Reason, TraceID: d.TraceID, ApprovalID: d.ApprovalID}
}

// Address is the signing address.
func (s *Service) Address() (signing.Address, error) {
	if s.Signer == nil {
		return signing.Address{}, errNoKey
	}
	return s.Signer.Address(), nil
}

var errNoKey = warden.Errorf(warden.EUnavailable, "no signing key is unlocked in this warden, so nothing can be signed").
	WithHint("create or import one with `warden signer init`, then restart `warden serve` with its passphrase")

// Submit decides and, when allowed, signs the request in body. An error
// means nothing was decided (the request is malformed before it could reach
// the gate, no key is unlocked, or the audit log could not record it); every
// decision, including each refusal, is a Result.
func (s *Service) Submit(ctx context.Context, body []byte, o Options) (Result, error) {
	if s.Signer == nil {
		return Result{}, errNoKey
	}
	r, perr := signing.ParseBody(body)
	wreq := s.request(ctx, r, body)
	wreq.Session, wreq.RequestedBy = o.Session, o.RequestedBy
	wreq.TraceID = s.NewID()
	summary := "submitted: " + wreq.Resource
	meta := map[string]any{"method": wreq.Action}
	if r != nil && r.RequestID != "" {
		meta["request_id"] = r.RequestID
	}
	if perr != nil {
		meta["error"] = perr.Error()
	}
	if err := s.event(ctx, warden.EventSigningSubmitted, warden.SevInfo, wreq.TraceID, summary, meta); err != nil {
		return Result{}, err
	}
	d, err := s.Gate().CheckWith(ctx, wreq, gate.CheckOptions{Approval: Channel})
	if err != nil {
		return Result{}, err
	}
	res := Result{PolicyDecision: decisionOf(d)}
	if r != nil {
		res.RequestID = r.RequestID
	}
	switch d.Verdict {
	case warden.Allow:
		return s.sign(ctx, r, wreq, d, false)
	case warden.Ask:
		s.park(d.ApprovalID, &pendingSign{req: r, wreq: wreq, decision: d, created: time.Now()})
		res.Pending = true
		res.Error = "waiting for a human to approve: " + d.Reason
		if o.Wait <= 0 {
			return res, nil
		}
		wctx, cancel := context.WithTimeout(ctx, o.Wait)
		defer cancel()
		if _, err := s.Gate().Approvals.Wait(wctx, d.ApprovalID); err != nil {
			return res, nil // still pending: the agent polls
		}
		return s.finish(ctx, d.ApprovalID)
	}
	res.Error = d.Reason
	if d.Verdict != warden.Deny {
		// Any verdict but allow and ask (a sandbox) signs nothing: give
		// back what the gate reserved for it.
		res.Error = fmt.Sprintf("a signing request cannot be run %s: %s", d.Verdict, d.Reason)
		if err := s.Gate().Release(ctx, wreq.TraceID, "not signed: verdict "+d.Verdict.String()); err != nil {
			return res, err
		}
	}
	return res, s.rejected(ctx, wreq, d, "refused by policy: "+d.Reason)
}

// request is the gate's view of the request. A body that does not parse
// still becomes a request, carrying the body as its raw input, so that its
// refusal is decided and audited like any other.
func (s *Service) request(ctx context.Context, r *signing.Request, body []byte) *warden.Request {
	if r == nil {
		// The body's own params go with it, so that the stages parsing them
		// again refuse it for the same reason the agent is told.
		w := &warden.Request{Capability: warden.CapSign, Action: methodOf(body), Tool: signing.ToolSignTransaction, Resource: "malformed signing request"}
		var params map[string]json.RawMessage
		if json.Unmarshal(body, &params) == nil {
			delete(params, "method")
			w.Params = params
		} else if json.Valid(body) {
			w.Raw = append(json.RawMessage(nil), body...)
		}
		return w
	}
	w := r.Warden()
	// A price source that fails leaves the value unknown, never zero: the
	// stages then ask a human instead of letting the USD caps pass it.
	usd, known, err := s.Valuer.Value(ctx, r)
	if err == nil && known && usd > 0 {
		w.Params[warden.ParamAmountUSD] = json.RawMessage(fmt.Sprintf("%q", usd.String()))
	}
	return w
}

// methodOf is the method a malformed body names, if it names one.
func methodOf(body []byte) string {
	var b struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &b) != nil || b.Method == "" || len(b.Method) > 40 {
		return "unknown"
	}
	return b.Method
}

// sign signs an allowed request. A failure gives back its reservations.
func (s *Service) sign(ctx context.Context, r *signing.Request, wreq *warden.Request, d warden.Decision, human bool) (Result, error) {
	res := Result{RequestID: r.RequestID, PolicyDecision: decisionOf(d), HumanConfirmed: human}
	var err error
	switch {
	case r.Tx != nil:
		var st signing.SignedTx
		st, err = s.Signer.SignTransaction(ctx, r.Tx)
		if err == nil {
			res.Signature, res.TxHash, res.From = "0x"+hex.EncodeToString(st.Raw), "0x"+hex.EncodeToString(st.Hash[:]), signing.Checksum(st.From)
		}
	case r.Method == signing.MethodPersonalSign:
		var sig []byte
		sig, err = s.Signer.SignMessage(ctx, r.Message)
		if err == nil {
			res.Signature, res.From = "0x"+hex.EncodeToString(sig), signing.Checksum(s.Signer.Address())
		}
	default:
		err = fmt.Errorf("this signer cannot sign a %s request", r.Method)
	}
	if err != nil {
		if rerr := s.Gate().Release(ctx, wreq.TraceID, "signing failed"); rerr != nil {
			err = fmt.Errorf("%w (and its reservation could not be released: %v)", err, rerr)
		}
		res.Error = "the signer failed: " + err.Error()
		return res, s.rejected(ctx, wreq, d, "allowed, but the signer failed: "+err.Error())
	}
	res.Success = true
	meta := map[string]any{"method": wreq.Action, "verdict": d.Verdict.String(), "rule": d.Rule, "reason": d.Reason, "human_confirmed": human}
	if res.TxHash != "" {
		meta["tx_hash"] = res.TxHash
	}
	if d.ApprovalID != "" {
		meta["approval_id"] = d.ApprovalID
	}
	return res, s.event(ctx, warden.EventSigningApproved, warden.SevWarn, wreq.TraceID, "signed: "+wreq.Resource, meta)
}

func (s *Service) rejected(ctx context.Context, wreq *warden.Request, d warden.Decision, summary string) error {
	meta := map[string]any{"method": wreq.Action, "verdict": d.Verdict.String(), "rule": d.Rule, "reason": d.Reason}
	if d.ApprovalID != "" {
		meta["approval_id"] = d.ApprovalID
	}
	return s.event(ctx, warden.EventSigningRejected, warden.SevInfo, wreq.TraceID, summary, meta)
}

func (s *Service) event(ctx context.Context, typ string, sev warden.Severity, trace, summary string, meta map[string]any) error {
	if err := s.Events(ctx, typ, sev, trace, summary, meta); err != nil {
		return warden.Errorf(warden.EUnavailable, "could not record the %s event, so the request is refused", typ).Wrap(err)
	}
	return nil
}
