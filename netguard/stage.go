package netguard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/agentwarden/warden"
)

// Actions of the network capability.
const (
	// ActionFetch is an HTTP(S) or WebSocket request; the resource is its URL.
	ActionFetch = "fetch"
	// ActionConnect is a tunnel (HTTP CONNECT); the resource is HOST:PORT.
	ActionConnect = "connect"
)

// Request parameters the stage reads.
const (
	// ParamMethod is the HTTP method of a fetch (default GET).
	ParamMethod = "method"
	// ParamAddresses lists every address the egress proxy resolved the host
	// to; each is judged. Present only after resolution.
	ParamAddresses = "addresses"
	// ParamResolveError says why resolution found no address.
	ParamResolveError = "resolve_error"
)

// Stage is the pipeline stage for the network capability. A Stage with no
// Guard denies everything, naming Err when set. Limiter, when set, counts
// every request the guard would let through (allow or ask) per agent.
type Stage struct {
	Guard   *Guard
	Err     error
	Limiter *Limiter
	Now     func() time.Time
}

var _ warden.Stage = Stage{}

// Name implements warden.Stage.
func (Stage) Name() string { return "net-guard" }

// Check implements warden.Stage. It never returns an error: what it cannot
// judge it denies, with the reason.
func (s Stage) Check(_ context.Context, req *warden.Request) (warden.Decision, error) {
	if req.Capability != warden.CapNetwork {
		return warden.Denyf("network.wrong_capability", fmt.Sprintf("the network guard only judges the %q capability, not %q", warden.CapNetwork, req.Capability)), nil
	}
	if s.Guard == nil {
		why := "the network policy is not available"
		if s.Err != nil {
			why += ": " + s.Err.Error()
		}
		return warden.Denyf("network.no_policy", why+"; fix the network section of the policy file"), nil
	}
	q, err := QueryOf(req)
	if err != nil {
		var te *TargetError
		if errors.As(err, &te) {
			return warden.Denyf(te.Rule, te.Msg), nil
		}
		return warden.Denyf("network.malformed", err.Error()), nil
	}
	d := s.Guard.Decide(q)
	if d.Verdict == warden.Deny || s.Limiter == nil {
		return d, nil
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	agent := AgentOf(req)
	if ok, reset, which := s.Limiter.Take(agent, now()); !ok {
		return warden.Denyf("network.rate_limit", fmt.Sprintf("%s has reached the network.rate_limit.%s limit; it resets at %s (in %s)",
			agent, which, reset.UTC().Format(time.RFC3339), reset.Sub(now()).Round(time.Second))), nil
	}
	return d, nil
}

// AgentOf names whoever the rate limits count a request against.
func AgentOf(req *warden.Request) string {
	switch {
	case req.RequestedBy != "":
		return req.RequestedBy
	case req.Session != "":
		return "session:" + req.Session
	}
	return "agent"
}

// QueryOf reads a network request: its action, resource and parameters.
func QueryOf(req *warden.Request) (Query, error) {
	t, err := targetOf(req)
	if err != nil {
		return Query{}, err
	}
	q := Query{Target: t, Method: "GET"}
	if req.Action == ActionConnect {
		q.Method = "CONNECT"
	}
	if raw, ok := req.Params[ParamMethod]; ok && req.Action == ActionFetch {
		if json.Unmarshal(raw, &q.Method) != nil || q.Method == "" {
			return Query{}, fmt.Errorf("params.%s must be an HTTP method such as GET", ParamMethod)
		}
	}
	if raw, ok := req.Params[ParamAddresses]; ok {
		var addrs []string
		if json.Unmarshal(raw, &addrs) != nil {
			return Query{}, fmt.Errorf("params.%s must be a list of addresses", ParamAddresses)
		}
		q.Resolved = true
		for _, s := range addrs {
			a, err := netip.ParseAddr(s)
			if err != nil {
				return Query{}, fmt.Errorf("params.%s: %q is not an address", ParamAddresses, s)
			}
			q.Addresses = append(q.Addresses, a)
		}
		if raw, ok := req.Params[ParamResolveError]; ok {
			_ = json.Unmarshal(raw, &q.ResolveError)
		}
	}
	return q, nil
}

// targetOf is where a network request goes: its URL or authority.
func targetOf(req *warden.Request) (Target, error) {
	switch req.Action {
	case ActionFetch:
		return ParseURL(req.Resource)
	case ActionConnect:
		return ParseAuthority(req.Resource)
	}
	return Target{}, fmt.Errorf("network action %q is not one of %s, %s", req.Action, ActionFetch, ActionConnect)
}

// InputHash is what an answer to a network ask is bound to: the
// destination, host and port, whatever the path, the method, the scheme or
// the addresses the name resolved to. Approving example.com:443 for a
// session therefore covers every later connection to it in that session,
// not only a byte-identical request, and a changed destination asks again.
// A request whose destination cannot be read is bound to its exact input
// (warden.InputHash).
func InputHash(req *warden.Request) string {
	if req.Capability != warden.CapNetwork {
		return warden.InputHash(req)
	}
	t, err := targetOf(req)
	if err != nil {
		return warden.InputHash(req)
	}
	// The prefix keeps these apart from warden.InputHash's inputs, which
	// start with '{' or a NUL byte.
	sum := sha256.Sum256([]byte("network destination\x00" + t.Authority()))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Destination describes what a network answer covers (see InputHash):
// "connections to example.com:443", or "" when the request has none.
func Destination(req *warden.Request) string {
	if req.Capability != warden.CapNetwork {
		return ""
	}
	t, err := targetOf(req)
	if err != nil {
		return ""
	}
	return "connections to " + t.Authority()
}
