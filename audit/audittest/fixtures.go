package audittest

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentwarden/warden"
)

// t0 anchors the suite's timestamps; every fixture time is at millisecond
// precision so it round-trips unchanged.
var t0 = time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)

// simple returns a minimal allowed shell entry at t0 + offset.
func simple(n int, offset time.Duration) *warden.AuditEntry {
	return &warden.AuditEntry{
		TraceID:    fmt.Sprintf("trace-%d", n),
		CreatedAt:  t0.Add(offset),
		Capability: warden.CapShell, Action: "exec", Resource: fmt.Sprintf("echo %d", n),
		Verdict: warden.Allow, Reason: "read-only command", Rule: "shell.readonly",
	}
}

// full returns an entry with every field set, including a long output and
// stages that cover every StageAnswer field.
func full() *warden.AuditEntry {
	return &warden.AuditEntry{
		ID:          "0190f3a4-7b1e-7c3d-9a2b-5e6f7a8b9c0d",
		TraceID:     "trace-full",
		CreatedAt:   t0.Add(90*time.Minute + 123*time.Millisecond),
		Capability:  warden.CapTrade,
		Action:      "swap",
		Resource:    "SOL",
		Tool:        "jupiter",
		Tier:        warden.TierAlwaysConfirm,
		Args:        json.RawMessage(`{"amount_usd": "250.00", "from":"USDC","to":"SOL"}`),
		Context:     "rebalance — SOL under target weight; ünïcödé ✓ 😀",
		RequestedBy: "skill:rebalancer",
		Autonomous:  true,
		Session:     "session-1",
		Host:        "claude",
		Raw:         json.RawMessage(`{"tool_name":"swap","tool_input":{"amount":"250"},"nested":[1,2.5,null,true]}`),
		Verdict:     warden.Deny,
		Blocked:     true,
		BlockReason: "exposure",
		Reason:      "SOL exposure would reach 41% of the portfolio; the limit is 25%",
		Rule:        "exposure.token_limit",
		Result:      json.RawMessage(`{"status":"error"}`),
		Output:      strings.Repeat("line of output € ", 200), // > OutputLimit, multi-byte runes
		Error:       "denied by policy",
		Duration:    1834 * time.Microsecond,
		Stages: []warden.StageAnswer{
			{Stage: "position-sizing", Verdict: warden.Allow, Reason: "clipped to $250", Rule: "sizing.clipped", Duration: 21 * time.Microsecond},
			{Stage: "exposure", Verdict: warden.Deny, Reason: "SOL exposure would reach 41%", Rule: "exposure.token_limit", Duration: 35 * time.Microsecond},
			{Stage: "oracle", Verdict: warden.Deny, Reason: "could not decide", Error: "price feed timed out", Duration: 50 * time.Millisecond},
			{Stage: "approval", Verdict: warden.Ask, Reason: "a human must confirm"},
			{Stage: "sandbox", Verdict: warden.Sandbox, Reason: "run isolated", Rule: "sandbox.default"},
		},
	}
}

// clone returns a deep copy of e.
func clone(e *warden.AuditEntry) *warden.AuditEntry {
	c := *e
	c.Args = append(json.RawMessage(nil), e.Args...)
	c.Raw = append(json.RawMessage(nil), e.Raw...)
	c.Result = append(json.RawMessage(nil), e.Result...)
	c.Stages = append([]warden.StageAnswer(nil), e.Stages...)
	return &c
}
