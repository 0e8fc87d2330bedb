package egress

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"syscall"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/gate"
	"github.com/agentwarden/warden/netguard"
)

// verdict is the proxy's answer for one request: the gate's decision and,
// when it allows, the one address to dial.
type verdict struct {
	warden.Decision
	pinned netip.AddrPort
	status int // the HTTP status a refusal gets
}

func (v *verdict) allowed() bool { return v.Verdict == warden.Allow && v.pinned.IsValid() }

// decide judges a request for t. The name is judged before it is resolved,
// so a name that may not be reached is never looked up; the gate then
// decides (and audits) the request with every address the name resolved to.
//
// A name the policy asks about is resolved only once a human's answer
// covers it: a remembered one (a grant, an always rule), or the answer to
// the approval this request opens and, unless NoWait, waits for. Until then
// the gate decides on the name alone, and nothing about it reaches DNS.
func (p *Proxy) decide(ctx context.Context, action, resource string, t netguard.Target, method string, targetErr error) verdict {
	if targetErr != nil {
		// Nothing can be judged: refuse without showing the gate (and the
		// audit log) a URL that may carry a secret. The request log has it.
		rule, why := "network.malformed", targetErr.Error()
		var te *netguard.TargetError
		if errors.As(targetErr, &te) {
			rule = te.Rule
		}
		return verdict{Decision: warden.Denyf(rule, why), status: http.StatusForbidden}
	}
	r := &pending{p: p, t: t, req: &warden.Request{
		Capability:  warden.CapNetwork,
		Action:      action,
		Resource:    resource,
		RequestedBy: p.Identity.Agent,
		Session:     p.Identity.Session,
		Host:        p.Identity.Host,
		Autonomous:  p.Identity.Autonomous,
		Params:      map[string]json.RawMessage{netguard.ParamMethod: jsonString(method)},
	}}
	switch pre := p.Guard.Decide(netguard.Query{Target: t, Method: method}); pre.Verdict {
	case warden.Allow:
		r.resolve(ctx)
	case warden.Ask:
		// An error here only means not resolving yet: the gate decides next.
		if ok, err := p.Gate.Covered(ctx, r.req); err == nil && ok {
			r.resolve(ctx)
		}
	}
	d, err := r.check(ctx)
	if err != nil {
		p.log().Error("the gate could not decide a network request", "error", err)
		return verdict{Decision: warden.Denyf("network.unavailable", "warden could not decide or record this request, so it is refused; see warden's log"), status: http.StatusServiceUnavailable}
	}
	v := verdict{Decision: d, status: http.StatusForbidden}
	switch {
	case d.Verdict == warden.Ask && d.ApprovalID != "":
		v.Verdict = warden.Deny
		v.Reason = fmt.Sprintf("%s; approval %s waits for a human: once it is approved (`warden approvals approve %[2]s`), retry", d.Reason, d.ApprovalID)
	case d.Verdict == warden.Ask:
		v.Verdict = warden.Deny
		v.Reason = d.Reason + "; this proxy has no approval channel, so the request is refused (add the host to network.allowed_domains to allow it)"
	case d.Verdict != warden.Allow:
	case !r.resolved:
		// The gate allowed a name the proxy had not resolved: only a policy
		// that changed between the two judgements can do that. Fail closed.
		v.Verdict, v.Reason = warden.Deny, "the host was not resolved before the decision; retry"
	case len(r.addrs) == 0:
		v.Verdict, v.Reason = warden.Deny, "the host has no address"
	default:
		v.pinned = netip.AddrPortFrom(pick(r.addrs), t.Port)
		if p.isSelf(v.pinned) {
			v.Verdict, v.Rule, v.Reason = warden.Deny, "network.self_connection", fmt.Sprintf("%s is this proxy's own listener", v.pinned)
			v.pinned = netip.AddrPort{}
		}
	}
	return v
}

// pending is one request on its way through the gate.
type pending struct {
	p        *Proxy
	t        netguard.Target
	req      *warden.Request
	resolved bool
	addrs    []netip.Addr
}

// resolve looks the name up and puts every answer (or why there was none)
// in the request, for the gate to judge.
func (r *pending) resolve(ctx context.Context) {
	var err error
	r.addrs, err = r.p.resolve(ctx, r.t)
	r.resolved = true
	list := make([]string, len(r.addrs))
	for i, a := range r.addrs {
		list[i] = a.String()
	}
	r.req.Params[netguard.ParamAddresses], _ = json.Marshal(list)
	if err != nil {
		r.req.Params[netguard.ParamResolveError] = jsonString(err.Error())
	}
}

// maxRounds bounds how many approvals one request waits for in turn: each
// round is a human's answer whose once grant another waiting request used
// first.
const maxRounds = 8

// check decides the request through the gate. An ask opens a pending
// approval (or joins the one pending for the same destination) when the
// proxy has an approval channel and, unless NoWait, waits for the answer.
// Once approved, the name is resolved and the request decided again, which
// uses the grant up; when another request waiting on the same approval took
// its once grant first, this one asks again.
func (r *pending) check(ctx context.Context) (warden.Decision, error) {
	p := r.p
	opt := gate.CheckOptions{Approval: p.Approvals, JoinPending: true}
	d, err := p.Gate.CheckWith(ctx, r.req, opt)
	for round := 0; err == nil && d.Verdict == warden.Ask && d.ApprovalID != "" && !p.NoWait; round++ {
		if round == maxRounds {
			d.Verdict, d.Reason = warden.Deny, fmt.Sprintf("%s; %d approvals in a row were used by other requests first, so this one is refused", d.Reason, maxRounds)
			return d, nil
		}
		if p.Asked != nil {
			p.Asked(d.ApprovalID)
		}
		approved, denied, werr := p.Gate.WaitAnswer(ctx, r.req, d)
		if werr != nil || !approved {
			return denied, werr
		}
		if !r.resolved {
			r.resolve(ctx)
		}
		d, err = p.Gate.CheckWith(ctx, r.req, opt)
	}
	return d, err
}

// resolve returns every address t's host stands for: the literal itself, the
// loopback address for a loopback name (never asked of DNS), or each answer.
func (p *Proxy) resolve(ctx context.Context, t netguard.Target) ([]netip.Addr, error) {
	if t.IsAddr() {
		return []netip.Addr{t.Addr}, nil
	}
	if netguard.IsLoopbackHost(t.Host) {
		return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1})}, nil
	}
	timeout := p.ResolveTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r := p.Resolver
	if r == nil {
		r = &net.Resolver{PreferGo: true}
	}
	addrs, err := r.LookupNetIP(ctx, "ip", t.Host)
	if err != nil {
		var de *net.DNSError
		if errors.As(err, &de) {
			return nil, fmt.Errorf("%s", de.Err)
		}
		return nil, err
	}
	return addrs, nil
}

// pick chooses the address to dial among answers that were all allowed:
// the first IPv4 one, else the first.
func pick(addrs []netip.Addr) netip.Addr {
	if i := slices.IndexFunc(addrs, func(a netip.Addr) bool { return a.Unmap().Is4() }); i >= 0 {
		return addrs[i].Unmap()
	}
	return addrs[0]
}

type pinKey struct{}

// withPin carries the address a forwarded request may connect to.
func withPin(ctx context.Context, ap netip.AddrPort) context.Context {
	return context.WithValue(ctx, pinKey{}, ap)
}

// dialPinned connects to the pinned address in ctx, whatever address the
// caller names, through the checking dialer.
func (p *Proxy) dialPinned(ctx context.Context, network, _ string) (net.Conn, error) {
	ap, ok := ctx.Value(pinKey{}).(netip.AddrPort)
	if !ok || !ap.IsValid() {
		return nil, errors.New("no decided address to connect to")
	}
	return p.dial(ctx, ap)
}

// dial connects to ap. The dialer's Control hook runs on the address the
// kernel is about to connect to and refuses it unless it is ap and the
// guard allows it: the second, independent check.
func (p *Proxy) dial(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
	timeout := p.DialTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	d := net.Dialer{
		Timeout: timeout,
		Control: func(_, address string, _ syscall.RawConn) error {
			got, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("refusing to connect to %q: not an address", address)
			}
			if got.Addr().Unmap() != ap.Addr().Unmap() || got.Port() != ap.Port() {
				return fmt.Errorf("refusing to connect to %s: the decided address is %s", got, ap)
			}
			if err := p.Guard.AddressAllowed(got.Addr()); err != nil {
				return fmt.Errorf("refusing to connect to %s: %w", got, err)
			}
			return nil
		},
	}
	return d.DialContext(ctx, "tcp", ap.String())
}

// pathHash identifies a path in the request log without revealing it: a
// keyed hash, so a guessable path (or a short token in a query) cannot be
// recovered by hashing candidates. Equal paths match within one proxy.
func (p *Proxy) pathHash(path string) string {
	if path == "" {
		return ""
	}
	m := hmac.New(sha256.New, p.pathKey[:])
	m.Write([]byte(path))
	return hex.EncodeToString(m.Sum(nil)[:12])
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
