package egress

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"time"

	"github.com/agentwarden/warden/netguard"
)

// ServeDirect serves l, a listener on a sandbox's loopback that receives
// the connections of clients that ignored the proxy variables and
// connected to an address names knows (one fakedns gave them: names is
// fakedns.Table.Name, false for an address that stands for no name). Each
// connection is a tunnel to the name its address stands for, at the port
// it reached, judged as a CONNECT to that name is, never by the address.
// A connection to an address that stands for no name, and one the policy
// refuses, is closed: a tunnel has no way to say why (the request log and
// the audit log have it). ServeDirect returns when l is closed or the
// proxy is. ServeDirectHTTP serves plain HTTP.
func (p *Proxy) ServeDirect(l net.Listener, names func(netip.Addr) (string, bool)) error {
	p.init()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.Close()
		return http.ErrServerClosed
	}
	p.directs = append(p.directs, l)
	p.mu.Unlock()
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return err
		}
		go p.directTunnel(c, names)
	}
}

// directName returns the name and port c was connected to, by the
// address it reached.
func directName(c net.Conn, names func(netip.Addr) (string, bool)) (string, uint16, bool) {
	ap, err := netip.ParseAddrPort(c.LocalAddr().String())
	if err != nil {
		return "", 0, false
	}
	name, ok := names(ap.Addr())
	return name, ap.Port(), ok
}

// directTunnel serves one connection of a client that ignored the proxy
// variables as a CONNECT to the name its address stands for.
func (p *Proxy) directTunnel(client net.Conn, names func(netip.Addr) (string, bool)) {
	defer client.Close()
	name, port, ok := directName(client, names)
	if !ok {
		return
	}
	if !p.track(client) {
		return
	}
	defer p.untrack(client)
	// The request's context ends when the client hangs up (or the proxy
	// closes the connection) while it is judged, which may wait for a
	// human: a watcher reads the client's first byte meanwhile, and it is
	// sent upstream first.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := make(chan []byte, 1)
	go func() {
		b := make([]byte, 1)
		n, err := client.Read(b)
		var ne net.Error
		if err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
			cancel()
		}
		first <- b[:n]
	}()
	authority := net.JoinHostPort(name, strconv.Itoa(int(port)))
	e := &entry{start: time.Now(), method: http.MethodConnect, raw: authority, note: "direct"}
	defer p.record(ctx, e)
	t, err := netguard.ParseAuthority(authority)
	e.target = t
	e.v = p.decide(ctx, netguard.ActionConnect, authority, t, http.MethodConnect, err)
	_ = client.SetReadDeadline(time.Now()) // the watcher returns
	sent := <-first
	_ = client.SetReadDeadline(time.Time{})
	if ctx.Err() != nil {
		e.status, e.note = 499, "direct: the client hung up while it was judged"
		return
	}
	if !e.v.allowed() {
		e.status = e.v.status
		p.log().Debug("refused a direct connection", slog.String("authority", authority), slog.String("rule", e.v.Rule))
		return
	}
	if p.Secrets.bound(t.Host) {
		// Its placeholders are swapped only in what the proxy reads, which
		// a tunnel it cannot open is not.
		e.status, e.note = http.StatusForbidden, "direct: a host with bound secrets is reached through the proxy variables only"
		return
	}
	upstream, err := p.dial(ctx, e.v.pinned)
	if err != nil {
		e.status, e.note = http.StatusBadGateway, "direct: "+err.Error()
		return
	}
	defer upstream.Close()
	if !p.track(upstream) {
		return
	}
	defer p.untrack(upstream)
	e.status, e.answered = http.StatusOK, true
	if len(sent) > 0 {
		n, err := upstream.Write(sent)
		e.up.Add(int64(n))
		if err != nil {
			return
		}
	}
	splice(client, upstream, &e.up, &e.down)
}

type directKey struct{}

// ServeDirectHTTP serves l as ServeDirect does, for plain HTTP (port 80):
// each request is judged and forwarded as if it had come in absolute form
// for the name its connection's address stands for, at the port it
// reached, so that the policy sees its method and URL as it sees those of
// a client that uses the proxy. A refusal is an HTTP answer saying why.
func (p *Proxy) ServeDirectHTTP(l net.Listener, names func(netip.Addr) (string, bool)) error {
	p.init()
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			authority, _ := r.Context().Value(directKey{}).(string)
			if authority == "" {
				refuse(w, http.StatusMisdirectedRequest, "network.direct_unknown", "this address stands for no name this sandbox looked up")
				return
			}
			if r.Method == http.MethodConnect {
				refuse(w, http.StatusMethodNotAllowed, "network.malformed", "CONNECT goes to the egress proxy at its address, not to a host")
				return
			}
			if r.URL.IsAbs() && r.URL.Host != authority && net.JoinHostPort(r.URL.Host, "80") != authority {
				refuse(w, http.StatusMisdirectedRequest, "network.direct_mismatch", fmt.Sprintf("this connection reached %s, not %s", authority, r.URL.Host))
				return
			}
			r.RequestURI = "http://" + authority + r.URL.RequestURI()
			u, err := url.ParseRequestURI(r.RequestURI)
			if err != nil {
				refuse(w, http.StatusBadRequest, "network.malformed", "the request's path cannot be read")
				return
			}
			r.URL = u
			p.forward(w, r)
		}),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if name, port, ok := directName(c, names); ok {
				return context.WithValue(ctx, directKey{}, net.JoinHostPort(name, strconv.Itoa(int(port))))
			}
			return ctx
		},
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(p.log().Handler(), slog.LevelDebug),
	}
	return p.serveWith(l, srv, false)
}
