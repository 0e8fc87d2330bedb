package egress

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"sync"
	"time"
)

// authority is the certificate authority of one proxy: only the sandbox the
// proxy serves trusts it, and it signs certificates only for hosts a secret
// is bound to. Its key never leaves memory.
type authority struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte

	mu     sync.Mutex
	leaves map[string]*tls.Certificate
}

const authorityLifetime = 7 * 24 * time.Hour

func newAuthority() (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("make the proxy's certificate authority: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "warden egress proxy (one sandbox)", Organization: []string{"warden"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(authorityLifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("make the proxy's certificate authority: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &authority{cert: cert, key: key, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), leaves: map[string]*tls.Certificate{}}, nil
}

// leaf returns a certificate for host signed by the authority.
func (a *authority) leaf(host string) (*tls.Certificate, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.leaves[host]; ok {
		return c, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: host},
		DNSNames:     []string{host},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     a.cert.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der, a.cert.Raw}, PrivateKey: key}
	a.leaves[host] = c
	return c, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// intercept serves a CONNECT to a host a secret is bound to: it terminates
// the client's TLS with a certificate from the proxy's authority, then
// forwards each request inside over a fresh, verified TLS connection to the
// pinned address, putting real secret values in their declared headers and
// scrubbing them out of the answers.
func (p *Proxy) intercept(w http.ResponseWriter, r *http.Request, e *entry) {
	t := e.target
	client, rw, release, ok := p.openTunnel(r.Context(), w, e)
	if !ok {
		return
	}
	defer release()
	if rw.Reader.Buffered() > 0 {
		// TLS must start after the tunnel opens; bytes sent before that
		// are not a client this proxy can terminate TLS for.
		e.status, e.note = http.StatusBadRequest, "data before the tunnel was opened"
		return
	}
	conf := &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"},
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			if hello.ServerName != "" && hello.ServerName != t.Host {
				return nil, fmt.Errorf("the TLS server name %q differs from the CONNECT host %s", hello.ServerName, t.Host)
			}
			return p.Secrets.ca.leaf(t.Host)
		},
	}
	inner := t
	inner.Scheme = "https"
	srv := &http.Server{
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(p.log().Handler(), slog.LevelDebug),
		Handler: http.HandlerFunc(func(w2 http.ResponseWriter, r2 *http.Request) {
			ie := &entry{start: time.Now(), method: r2.Method, v: e.v}
			ie.target = inner
			ie.target.Path = r2.URL.RequestURI()
			defer p.record(r2.Context(), ie)
			p.forwardChecked(w2, r2, ie, inner, true)
		}),
	}
	l := &oneConn{conn: tls.Server(client, conf), done: make(chan struct{})}
	_ = srv.Serve(l)
	<-l.done
}

// oneConn is a listener that yields one connection, then waits for it to
// close.
type oneConn struct {
	conn net.Conn
	once sync.Once
	done chan struct{}
	used bool
}

func (l *oneConn) Accept() (net.Conn, error) {
	if !l.used {
		l.used = true
		return &closeNotify{Conn: l.conn, l: l}, nil
	}
	<-l.done
	return nil, errors.New("the intercepted tunnel is closed")
}

func (l *oneConn) Close() error   { return nil }
func (l *oneConn) Addr() net.Addr { return l.conn.LocalAddr() }

type closeNotify struct {
	net.Conn
	l *oneConn
}

func (c *closeNotify) Close() error {
	err := c.Conn.Close()
	c.l.once.Do(func() { close(c.l.done) })
	return err
}
