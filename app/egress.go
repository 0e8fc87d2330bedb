package app

import (
	"context"
	"net"
	"slices"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/egress"
	"github.com/agentwarden/warden/gate"
	"github.com/agentwarden/warden/netguard"
	"github.com/agentwarden/warden/safety"
)

// Egress builds an egress proxy that decides through this home's gate for
// who (nil: a sandbox with no named agent). extraAllowed are more
// allowed_domains rules for this proxy only (a profile's allow_domains,
// --allow-domain); they join the policy file's, whose denials still win.
func (a *App) Egress(who *warden.Request, extraAllowed []string) (*egress.Proxy, error) {
	p := *a.Policy
	p.Network.Allowed = append(slices.Clone(p.Network.Allowed), extraAllowed...)
	guard, err := netguard.New(p.Network.Guard())
	if err != nil {
		return nil, warden.Errorf(warden.EInvalid, "the network policy for the proxy is not valid: %v", err).
			WithHint("fix network.allowed_domains or --allow-domain; rules look like api.github.com, *.example.com:443 or \"GET pypi.org\"")
	}
	g := a.Gate
	if len(extraAllowed) > 0 {
		spend := safety.SpendCap{Cap: p.Safety.DailySpendCap}
		g = &gate.Gate{Decider: Pipeline(a.Home, &p, a.Problems, a.Store, a.Now), Store: a.Store, Debit: spend.Debit, Now: a.Now, NewID: NewID}
	}
	id := egress.Identity{Agent: "sandbox"}
	if who != nil {
		id = egress.Identity{Agent: who.RequestedBy, Session: who.Session, Host: who.Host, Autonomous: who.Autonomous}
		if id.Agent == "" {
			id.Agent = "sandbox"
		}
	}
	return &egress.Proxy{
		Gate:     g,
		Guard:    guard,
		Resolver: Resolver(p.Network.Resolver),
		Identity: id,
		Events:   a.Event,
		Log:      a.Log,
	}, nil
}

// Resolver is the resolver the egress proxy uses: the pure-Go one, asking
// server (HOST:PORT) when it is set, else the system's configured servers.
func Resolver(server string) *net.Resolver {
	r := &net.Resolver{PreferGo: true}
	if server != "" {
		r.Dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
			d := net.Dialer{Timeout: 5 * time.Second}
			return d.DialContext(ctx, network, server)
		}
	}
	return r
}
