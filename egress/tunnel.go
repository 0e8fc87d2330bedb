package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/netguard"
)

// entry is one line of the request log.
type entry struct {
	start    time.Time
	method   string
	target   netguard.Target
	raw      string // the target as asked, for a refused unparseable one
	v        verdict
	status   int
	up, down atomic.Int64
	note     string
	answered bool // the answer went out before the request log is written
	recorded bool // record has run: a later call does nothing
}

// record appends the request's egress_request event, or, for a request
// whose answer went out, adds its line to the next group (requestlog.go).
// The path appears only as a hash; no header or body is ever recorded.
// It records e once: the call deferred by every handler does nothing after
// refuseRecorded.
func (p *Proxy) record(ctx context.Context, e *entry) {
	if p.Events == nil || e.recorded {
		return
	}
	e.recorded = true
	host, port := e.target.Host, e.target.Port
	if host == "" {
		host = e.raw
	}
	up, down := e.up.Load(), e.down.Load()
	meta := e.meta(p, host, port, up, down)
	sev := warden.SevInfo
	if e.v.Verdict != warden.Allow {
		sev = warden.SevWarn
	}
	summary := e.summary(host, port, up, down)
	if e.answered && p.Queue != nil {
		p.group(logLine{sev: sev, summary: summary, meta: meta})
		return
	}
	ctx = context.WithoutCancel(ctx)
	p.logged(p.Events(ctx, warden.EventEgressRequest, sev, summary, meta))
}

// tunnel serves CONNECT: judge the authority, dial the pinned address, and
// copy bytes both ways until either side is done.
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	e := &entry{start: time.Now(), method: http.MethodConnect, raw: r.Host}
	defer p.record(r.Context(), e)
	t, err := netguard.ParseAuthority(r.Host)
	e.target = t
	e.v = p.decide(r.Context(), netguard.ActionConnect, r.Host, t, http.MethodConnect, err)
	if !e.v.allowed() {
		p.refuseRecorded(r.Context(), w, e, e.v.status, e.v.Rule, e.v.Reason)
		return
	}
	if p.Secrets.bound(t.Host) {
		p.intercept(w, r, e)
		return
	}
	upstream, err := p.dial(r.Context(), e.v.pinned)
	if err != nil {
		e.note = err.Error()
		p.refuseRecorded(r.Context(), w, e, http.StatusBadGateway, "network.connect_failed", fmt.Sprintf("could not connect to %s (%s): %v", t.Authority(), e.v.pinned, err))
		return
	}
	defer upstream.Close()
	if !p.track(upstream) {
		return
	}
	defer p.untrack(upstream)
	client, rw, release, ok := p.openTunnel(r.Context(), w, e)
	if !ok {
		return
	}
	defer release()
	// Bytes the client sent after the CONNECT line are already buffered:
	// they go first, so that the relay after them is connection to
	// connection, which the kernel splices (a reader in front would make
	// io.Copy copy through user space).
	if n := rw.Reader.Buffered(); n > 0 {
		buffered, _ := rw.Reader.Peek(n)
		w, err := upstream.Write(buffered)
		e.up.Add(int64(w))
		if err != nil {
			return
		}
	}
	splice(client, upstream, &e.up, &e.down)
}

// openTunnel takes over the client's connection, tracked so Close ends it,
// and tells the client the tunnel is open. release untracks and closes it.
func (p *Proxy) openTunnel(ctx context.Context, w http.ResponseWriter, e *entry) (client net.Conn, rw *bufio.ReadWriter, release func(), ok bool) {
	client, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		e.note = err.Error()
		p.refuseRecorded(ctx, w, e, http.StatusInternalServerError, "network.internal", "cannot take over the connection: "+err.Error())
		return nil, nil, nil, false
	}
	if !p.track(client) {
		client.Close()
		return nil, nil, nil, false
	}
	release = func() { p.untrack(client); client.Close() }
	e.status, e.answered = http.StatusOK, true
	if _, err := client.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n")); err != nil {
		release()
		return nil, nil, nil, false
	}
	return client, rw, release, true
}

// splice copies client→upstream and upstream→client, half-closing each
// direction as it ends, and returns when both are done. It hands io.Copy
// the connections themselves: between two TCP connections it uses
// splice(2), so the bytes never enter the proxy's memory.
func splice(client, upstream net.Conn, up, down *atomic.Int64) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		n, _ := io.Copy(upstream, client)
		up.Add(n)
		closeWrite(upstream)
	}()
	go func() {
		defer wg.Done()
		n, _ := io.Copy(client, upstream)
		down.Add(n)
		closeWrite(client)
	}()
	wg.Wait()
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}
