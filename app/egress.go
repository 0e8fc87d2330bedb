package app

import (
	"context"
	"encoding/json"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/egress"
	"github.com/agentwarden/warden/fsguard"
	"github.com/agentwarden/warden/gate"
	"github.com/agentwarden/warden/netguard"
)

// Egress builds an egress proxy that decides through this home's gate for
// who (nil: a sandbox with no named agent). extraAllowed are more
// allowed_domains rules for this proxy only (a profile's allow_domains,
// --allow-domain); they join the policy file's, whose denials still win.
//
// A host the policy asks about opens an approval on wait's channel, and the
// request waits for the answer, wait.Notify saying where to give it; with
// wait nil, it opens one on channel "egress" and is refused at once, so that
// a retry goes through once a human approves. A proxy for no session gets
// one of its own, so that "approve for this session" means for as long as
// this proxy runs.
func (a *App) Egress(who *warden.Request, extraAllowed []string, wait *AskWait) (*egress.Proxy, error) {
	p := *a.Policy
	p.Network.Allowed = append(slices.Clone(p.Network.Allowed), extraAllowed...)
	guard, err := netguard.New(p.Network.Guard())
	if err != nil {
		return nil, warden.Errorf(warden.EInvalid, "the network policy for the proxy is not valid: %v", err).
			WithHint("fix network.allowed_domains or --allow-domain; rules look like api.github.com, *.example.com:443 or \"GET pypi.org\"")
	}
	g := a.Gate
	if len(extraAllowed) > 0 {
		g = a.gateFor(&p, a.Problems, a.Store)
		g.Approvals = a.Queue
	}
	id := egress.Identity{Agent: "sandbox"}
	if who != nil {
		id = egress.Identity{Agent: who.RequestedBy, Session: who.Session, Host: who.Host, Autonomous: who.Autonomous}
		if id.Agent == "" {
			id.Agent = "sandbox"
		}
	}
	if id.Session == "" {
		id.Session = "egress-" + NewID()
	}
	proxy := &egress.Proxy{
		Gate:      g,
		Guard:     guard,
		Resolver:  Resolver(p.Network.Resolver),
		Identity:  id,
		Events:    a.Event,
		Queue:     a.queueEvent,
		Log:       a.Log,
		Approvals: "egress",
		NoWait:    wait == nil,
	}
	if wait != nil {
		proxy.Approvals, proxy.Asked = wait.Channel, wait.Notify
	}
	return proxy, nil
}

// queueEvent is Event in two steps (an egress.QueueFunc): the redacted event
// is queued in order with the store's later records, and wait waits for it
// to be stored.
func (a *App) queueEvent(ctx context.Context, typ string, sev warden.Severity, summary string, meta json.RawMessage) (wait func() error) {
	ev := &warden.SecurityEvent{ID: NewID(), CreatedAt: a.Now(), Type: typ, Severity: sev}
	redactEvent(ev, summary, meta)
	queued := a.Store.QueueEvent(ctx, ev)
	return func() error {
		if err := queued(); err != nil {
			return eventNotRecorded(ev, err)
		}
		return nil
	}
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

// sandboxEgress is a run's egress proxy and the certificate bundle its
// sandbox trusts; Close stops the proxy and removes the bundle.
type sandboxEgress struct {
	*egress.Proxy
	bundle string
}

func (s *sandboxEgress) Close() error {
	err := s.Proxy.Close()
	if s.bundle != "" {
		_ = os.Remove(s.bundle)
	}
	return err
}

// sandboxEgress builds the egress proxy for one sandboxed run (asks wait as
// wait says, see Egress): the policy's
// secrets become placeholders in env, and when the proxy must terminate TLS
// toward their hosts, the sandbox gets a certificate bundle (the system's
// authorities and the proxy's own) through the usual variables.
func (a *App) sandboxEgress(who *warden.Request, extraAllowed []string, wait *AskWait) (eg *sandboxEgress, env []string, readable []string, err error) {
	p, err := a.Egress(who, extraAllowed, wait)
	if err != nil {
		return nil, nil, nil, err
	}
	eg = &sandboxEgress{Proxy: p}
	if p.Secrets, err = a.secrets(); err != nil {
		return nil, nil, nil, err
	}
	env = p.Secrets.Env()
	if ca := p.Secrets.CACertPEM(); ca != nil {
		bundle, err := writeBundle(filepath.Join(a.Home.Abs(), fsguard.SandboxDir), ca)
		if err != nil {
			return nil, nil, nil, err
		}
		eg.bundle = bundle
		readable = append(readable, bundle)
		for _, k := range []string{"SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO", "PIP_CERT"} {
			env = append(env, k+"="+bundle)
		}
	}
	return eg, env, readable, nil
}

// secrets reads the real values of the policy's network secrets. A value
// that cannot be read stops the run: the sandbox would otherwise send a
// placeholder that can never work, or nothing at all.
func (a *App) secrets() (*egress.Secrets, error) {
	var specs []egress.SecretSpec
	for _, s := range a.Policy.Network.Secrets {
		var value string
		switch {
		case s.FromFile != "":
			b, err := os.ReadFile(s.FromFile)
			if err != nil {
				return nil, warden.Errorf(warden.EInvalid, "network secret %s: cannot read %s", s.Name, s.FromFile).Wrap(err)
			}
			value = strings.TrimSpace(string(b))
		default:
			value = os.Getenv(s.FromEnv)
		}
		if value == "" {
			return nil, warden.Errorf(warden.EInvalid, "network secret %s has no value (from_env %s, from_file %s)", s.Name, s.FromEnv, s.FromFile).
				WithHint("set it, or remove it from network.secrets in " + config.FileName)
		}
		specs = append(specs, egress.SecretSpec{Name: s.Name, Value: value, Hosts: slices.Clone(s.Hosts), Header: s.Header, AllowHTTP: s.AllowHTTP})
	}
	secrets, err := egress.NewSecrets(specs)
	if err != nil {
		return nil, warden.Errorf(warden.EInvalid, "network secrets: %v", err)
	}
	return secrets, nil
}

// systemBundles are where Linux distributions keep their trusted
// authorities (the files Go's crypto/x509 reads).
var systemBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/ca-bundle.pem",
	"/etc/pki/tls/cacert.pem",
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
	"/etc/ssl/cert.pem",
}

// writeBundle writes the system's authorities and ca to a new file in dir.
func writeBundle(dir string, ca []byte) (string, error) {
	var bundle []byte
	for _, f := range systemBundles {
		if b, err := os.ReadFile(f); err == nil {
			bundle = append(b, '\n')
			break
		}
	}
	bundle = append(bundle, ca...)
	f, err := os.CreateTemp(dir, "proxy-ca-*.pem")
	if err != nil {
		return "", warden.Errorf(warden.EUnavailable, "write the sandbox's certificate bundle").Wrap(err)
	}
	_, err = f.Write(bundle)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", warden.Errorf(warden.EUnavailable, "write the sandbox's certificate bundle").Wrap(err)
	}
	return f.Name(), nil
}

// livePolicy is the gate and network guard of a long-lived sandbox's egress
// proxy (worldEgress) under the home's policy file as it is now. The
// sandbox's supervisor opened the home when it started; without this, a
// rule edited since, or an "always" answer written into the file, would
// not be in force for connections from inside the sandbox (its commands are
// decided under the current file), for as long as the sandbox runs. A file
// that no longer loads, or whose network rules do not, keeps the last good
// policy, as the daemon does (and is reported there).
type livePolicy struct {
	a     *App
	extra []string // the sandbox's own allowed domains (--allow-domain)
	mu    sync.Mutex
	stamp fileStamp
	gate  *gate.Gate
	guard *netguard.Guard
}

// newLivePolicy starts from the policy a was opened with.
func newLivePolicy(a *App, extra []string, g *gate.Gate, guard *netguard.Guard) *livePolicy {
	st, _ := stampOf(a.Home.PolicyPath())
	return &livePolicy{a: a, extra: extra, stamp: st, gate: g, guard: guard}
}

// current is the gate and guard for the next request, built anew first
// when the policy file changed.
func (l *livePolicy) current() (*gate.Gate, *netguard.Guard) {
	st, err := stampOf(l.a.Home.PolicyPath())
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil || st == l.stamp {
		return l.gate, l.guard
	}
	l.stamp = st
	loaded, err := config.Load(l.a.Home.PolicyPath())
	if err != nil {
		l.a.Log.Error("the policy file no longer loads; the sandbox's egress proxy keeps the last good policy", "error", warden.UserMessage(err))
		return l.gate, l.guard
	}
	p := *loaded.Policy
	p.Network.Allowed = append(slices.Clone(p.Network.Allowed), l.extra...)
	guard, err := netguard.New(p.Network.Guard())
	if err != nil {
		l.a.Log.Error("the policy's network rules no longer load; the sandbox's egress proxy keeps the last good ones", "error", err)
		return l.gate, l.guard
	}
	g := l.a.gateFor(&p, loaded.Problems, l.a.Store)
	g.Approvals = l.a.Queue
	l.gate, l.guard = g, guard
	return g, guard
}

func (l *livePolicy) CheckWith(ctx context.Context, req *warden.Request, opt gate.CheckOptions) (warden.Decision, error) {
	g, _ := l.current()
	return g.CheckWith(ctx, req, opt)
}

func (l *livePolicy) WaitAnswer(ctx context.Context, req *warden.Request, d warden.Decision) (bool, warden.Decision, error) {
	g, _ := l.current()
	return g.WaitAnswer(ctx, req, d)
}

func (l *livePolicy) Covered(ctx context.Context, req *warden.Request) (bool, error) {
	g, _ := l.current()
	return g.Covered(ctx, req)
}

func (l *livePolicy) Decide(q netguard.Query) warden.Decision {
	_, guard := l.current()
	return guard.Decide(q)
}

func (l *livePolicy) AddressAllowed(addr netip.Addr) error {
	_, guard := l.current()
	return guard.AddressAllowed(addr)
}
