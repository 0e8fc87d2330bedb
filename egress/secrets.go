package egress

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/netguard"
)

// SecretSpec declares one secret the sandbox may use without holding it.
type SecretSpec struct {
	// Name is the environment variable the sandbox sees, holding the
	// placeholder.
	Name string
	// Value is the real secret. It never leaves the proxy except in Header
	// of a request to one of Hosts.
	Value string
	// Hosts are the canonical host names the secret is bound to.
	Hosts []string
	// Header is the one request header the real value may go in, e.g.
	// Authorization.
	Header string
	// AllowHTTP lets the secret go over plain HTTP; without it, only over
	// TLS that the proxy terminates.
	AllowHTTP bool
}

// secret is a declared secret with its placeholder.
type secret struct {
	SecretSpec
	placeholder string
}

// Secrets are a sandbox's placeholders. The sandbox sees only placeholders;
// the proxy puts the real value in the declared header of a request to a
// bound host, refuses a request that carries a placeholder anywhere else,
// and turns any real value in an answer back into its placeholder. A nil
// *Secrets has none.
type Secrets struct {
	list []secret
	ca   *authority
}

// NewSecrets makes a placeholder for each spec: random, with the real
// value's length and leading prefix (ghp_, sk-…), so tools that check the
// shape still accept it and scrubbing an answer keeps its length.
func NewSecrets(specs []SecretSpec) (*Secrets, error) {
	s := &Secrets{}
	for _, sp := range specs {
		if sp.Name == "" || sp.Value == "" || len(sp.Hosts) == 0 || sp.Header == "" {
			return nil, fmt.Errorf("secret %q needs a name, a value, at least one host and a header", sp.Name)
		}
		if len(sp.Value) < 8 {
			return nil, fmt.Errorf("secret %s is shorter than 8 characters; a placeholder that short could match unrelated text", sp.Name)
		}
		sp.Header = textproto.CanonicalMIMEHeaderKey(sp.Header)
		sp.Hosts = append([]string(nil), sp.Hosts...)
		for i, h := range sp.Hosts {
			name, addr, err := netguard.CanonicalHost(h)
			if err != nil || addr.IsValid() {
				return nil, fmt.Errorf("secret %s: %q is not a host name", sp.Name, h)
			}
			sp.Hosts[i] = name
		}
		ph, err := placeholder(sp.Value)
		if err != nil {
			return nil, err
		}
		s.list = append(s.list, secret{SecretSpec: sp, placeholder: ph})
	}
	if len(s.list) > 0 {
		ca, err := newAuthority()
		if err != nil {
			return nil, err
		}
		s.ca = ca
	}
	return s, nil
}

// Env is NAME=placeholder for each secret, for the sandbox's environment.
func (s *Secrets) Env() []string {
	if s == nil {
		return nil
	}
	env := make([]string, len(s.list))
	for i, sec := range s.list {
		env[i] = sec.Name + "=" + sec.placeholder
	}
	return env
}

// CACertPEM is the certificate of the authority the sandbox must trust for
// the proxy to terminate TLS toward bound hosts; nil without secrets.
func (s *Secrets) CACertPEM() []byte {
	if s == nil || s.ca == nil {
		return nil
	}
	return s.ca.certPEM
}

// bound reports whether a secret is bound to host, so the proxy must
// terminate TLS toward it.
func (s *Secrets) bound(host string) bool {
	if s == nil {
		return false
	}
	for _, sec := range s.list {
		if sec.boundTo(host) {
			return true
		}
	}
	return false
}

func (sec *secret) boundTo(host string) bool {
	for _, h := range sec.Hosts {
		if h == host {
			return true
		}
	}
	return false
}

// checkRequest finds a placeholder where it may not go: in the URL, in a
// header other than the declared one, toward a host the secret is not bound
// to, or over plain HTTP. It returns the rule and reason, or "" when the
// request may go.
func (s *Secrets) checkRequest(r *http.Request, t netguard.Target, overTLS bool) (rule, why string) {
	if s == nil {
		return "", ""
	}
	for i := range s.list {
		sec := &s.list[i]
		if strings.Contains(r.RequestURI, sec.placeholder) || strings.Contains(r.URL.RawQuery, sec.placeholder) {
			return "network.secret_misplaced", fmt.Sprintf("the placeholder for %s is in the URL; it may only go in the %s header", sec.Name, sec.Header)
		}
		for name, values := range r.Header {
			for _, v := range values {
				if !strings.Contains(v, sec.placeholder) {
					continue
				}
				switch {
				case name != sec.Header:
					return "network.secret_misplaced", fmt.Sprintf("the placeholder for %s is in the %s header; it may only go in %s", sec.Name, name, sec.Header)
				case !sec.boundTo(t.Host):
					return "network.secret_wrong_host", fmt.Sprintf("the placeholder for %s was sent toward %s; it is bound to %s", sec.Name, t.Host, strings.Join(sec.Hosts, ", "))
				case !overTLS && !sec.AllowHTTP:
					return "network.secret_plain_http", fmt.Sprintf("the placeholder for %s was sent over plain HTTP; use https (or set allow_http on the secret)", sec.Name)
				}
			}
		}
	}
	return "", ""
}

// substitute puts each real value in place of its placeholder in the
// declared header of a request to a bound host (checkRequest has vetted
// it), and asks for an unencoded answer so it can be scrubbed.
func (s *Secrets) substitute(out *http.Request, t netguard.Target) {
	if s == nil || !s.bound(t.Host) {
		return
	}
	out.Header.Del("Accept-Encoding") // the transport asks for gzip and decodes it
	for i := range s.list {
		sec := &s.list[i]
		if !sec.boundTo(t.Host) {
			continue
		}
		for j, v := range out.Header.Values(sec.Header) {
			if strings.Contains(v, sec.placeholder) {
				out.Header[sec.Header][j] = strings.ReplaceAll(v, sec.placeholder, sec.Value)
			}
		}
	}
}

// errEncoded refuses an answer the proxy cannot scrub.
var errEncoded = errors.New("the answer is compressed, so it cannot be checked for secrets; it is refused")

// scrubResponse turns every real secret value in an answer's headers and
// body back into its placeholder. Placeholders have their value's length,
// so Content-Length still holds.
// An answer from a bound host that is still compressed is refused; from
// any other host it passes as it is.
func (s *Secrets) scrubResponse(resp *http.Response, t netguard.Target) error {
	if s == nil || len(s.list) == 0 {
		return nil
	}
	s.scrubHeader(resp.Header)
	if resp.StatusCode == http.StatusSwitchingProtocols {
		// An upgraded stream (a WebSocket) cannot be scrubbed as it flows.
		if s.bound(t.Host) {
			return errors.New("a connection upgrade toward a host a secret is bound to cannot be checked for the secret; it is refused")
		}
		return nil
	}
	if ce := resp.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		if s.bound(t.Host) {
			return errEncoded
		}
		return nil
	}
	if resp.Body != nil && resp.Body != http.NoBody {
		resp.Body = &scrubber{src: resp.Body, secrets: s, trailer: resp}
	}
	return nil
}

// scrubHeader turns real values in a header map into placeholders, in place.
func (s *Secrets) scrubHeader(h http.Header) {
	for name, values := range h {
		for i, v := range values {
			h[name][i] = s.scrubString(v)
		}
	}
}

func (s *Secrets) scrubString(v string) string {
	for _, sec := range s.list {
		v = strings.ReplaceAll(v, sec.Value, sec.placeholder)
	}
	return v
}

// scrubber replaces secret values in a stream, holding back the bytes that
// could be the start of a value split across reads.
type scrubber struct {
	src     io.ReadCloser
	secrets *Secrets
	trailer *http.Response // its Trailer is filled in when the body ends
	buf     []byte         // read but not yet released
	out     []byte         // released, not yet returned
	eof     bool
}

func (sc *scrubber) hold() int {
	n := 0
	for _, s := range sc.secrets.list {
		n = max(n, len(s.Value)-1)
	}
	return n
}

func (sc *scrubber) Read(p []byte) (int, error) {
	for len(sc.out) == 0 {
		if sc.eof {
			if len(sc.buf) == 0 {
				return 0, io.EOF
			}
			sc.out, sc.buf = sc.replace(sc.buf), nil
			break
		}
		chunk := make([]byte, 32<<10)
		n, err := sc.src.Read(chunk)
		sc.buf = append(sc.buf, chunk[:n]...)
		if err == io.EOF {
			sc.eof = true
			sc.secrets.scrubHeader(sc.trailer.Trailer)
		} else if err != nil {
			return 0, err
		}
		sc.buf = sc.replace(sc.buf)
		if keep := sc.hold(); len(sc.buf) > keep {
			cut := len(sc.buf) - keep
			sc.out = append(sc.out, sc.buf[:cut]...)
			sc.buf = append([]byte(nil), sc.buf[cut:]...)
		}
	}
	n := copy(p, sc.out)
	sc.out = sc.out[n:]
	return n, nil
}

func (sc *scrubber) replace(b []byte) []byte {
	for _, s := range sc.secrets.list {
		b = bytes.ReplaceAll(b, []byte(s.Value), []byte(s.placeholder))
	}
	return b
}

func (sc *scrubber) Close() error { return sc.src.Close() }

// secretRefused alerts that a placeholder was headed where it may not go.
func (p *Proxy) secretRefused(ctx context.Context, t netguard.Target, why string) {
	if p.Events == nil {
		return
	}
	meta, _ := json.Marshal(map[string]any{"agent": p.Identity.Agent, "session": p.Identity.Session, "host": t.Host, "port": t.Port})
	if err := p.Events(context.WithoutCancel(ctx), warden.EventSecretLeak, warden.SevCritical, why, meta); err != nil {
		p.log().Error("could not record the refused secret placeholder", "error", err)
	}
}

// placeholder returns a random string the length of value that keeps its
// leading prefix (letters and digits up to the first '_' or '-', if that
// comes within 12 bytes) and its character classes.
func placeholder(value string) (string, error) {
	prefix := ""
	if i := strings.IndexAny(value, "_-"); i > 0 && i < 12 && len(value)-i-1 >= 8 {
		prefix = value[:i+1]
	}
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	rnd := make([]byte, len(value)-len(prefix))
	if _, err := rand.Read(rnd); err != nil {
		return "", fmt.Errorf("make a secret placeholder: %w", err)
	}
	out := []byte(prefix)
	for _, b := range rnd {
		out = append(out, alnum[int(b)%len(alnum)])
	}
	return string(out), nil
}
