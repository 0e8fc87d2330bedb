package app

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/egress"
	"github.com/agentwarden/warden/fsguard"
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
