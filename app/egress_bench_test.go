package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// The egress benchmarks compare a client talking to a loopback server
// directly with the same client going through the egress proxy of a real
// home: the default pipeline deciding every request, its durable audit
// append, and the egress_request event. Run them with
//
//	go test -run XXX -bench 'BenchmarkEgressDownload' -benchtime 3x ./app/
//	go test -run XXX -bench 'BenchmarkEgress(Request|Connections)' -benchtime 2s ./app/
//
// The proxy's cost is the difference between the sub-benchmarks.

// downloadSize is the body BenchmarkEgressDownload fetches.
const downloadSize = 100 << 20

// serveBytes answers every request with size bytes and a Content-Length.
func serveBytes(size int) http.Handler {
	chunk := make([]byte, 64<<10)
	for i := range chunk {
		chunk[i] = byte(i)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(size))
		for left := size; left > 0; {
			n, err := w.Write(chunk[:min(left, len(chunk))])
			if err != nil {
				return
			}
			left -= n
		}
	})
}

// startUpstream starts a loopback server (TLS when useTLS is set) that
// answers with size bytes, closed when the benchmark ends.
func startUpstream(b *testing.B, size int, useTLS bool) *httptest.Server {
	b.Helper()
	srv := httptest.NewUnstartedServer(serveBytes(size))
	if useTLS {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	b.Cleanup(srv.Close)
	return srv
}

// startEgress opens a real home whose policy lets the proxy reach srv only,
// with no rate limit, and serves its egress proxy on a loopback port. It
// returns the proxy's URL; the proxy and the home close when the benchmark
// ends.
func startEgress(b *testing.B, srv *httptest.Server) *url.URL {
	b.Helper()
	a := openTestApp(b, Options{OpenDatabase: true})
	a.Policy.Network.AllowPrivate = []string{"127.0.0.1"}
	a.Policy.Network.PerMinute, a.Policy.Network.PerHour = 0, 0
	p, err := a.Egress(nil, []string{srv.Listener.Addr().String()}, nil)
	if err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	// Runs after the proxy closes (cleanups run last first): the requests
	// were decided and audited by the gate, and none was refused.
	b.Cleanup(func() {
		rows, err := a.Store.Entries(context.Background(), warden.AuditFilter{Capability: warden.CapNetwork})
		if err != nil {
			b.Errorf("read the audit log: %v", err)
			return
		}
		if len(rows) == 0 {
			b.Errorf("no network decision in the audit log: the requests did not go through the proxy")
		}
		for _, r := range rows {
			if r.Verdict != warden.Allow {
				b.Errorf("audit: %s %s = %v (%s); want allow", r.Action, r.Resource, r.Verdict, r.Rule)
			}
		}
	})
	served := make(chan error, 1)
	go func() { served <- p.Serve(l) }()
	b.Cleanup(func() {
		p.Close()
		l.Close()
		if err := <-served; err != nil {
			b.Errorf("Serve: %v", err)
		}
	})
	return &url.URL{Scheme: "http", Host: l.Addr().String()}
}

// newClient is a client for srv, through proxy when it is not nil. For a TLS
// server it trusts the server's certificate, so through a proxy it tunnels
// with CONNECT.
func newClient(b *testing.B, srv *httptest.Server, proxy *url.URL, keepAlive bool) *http.Client {
	b.Helper()
	tr := &http.Transport{
		DisableKeepAlives:   !keepAlive,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
	}
	if proxy != nil {
		tr.Proxy = http.ProxyURL(proxy)
	}
	if srv.TLS != nil {
		tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	}
	b.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// get fetches u with c and reads the whole answer, failing unless it is a
// 200 with want bytes.
func get(b *testing.B, c *http.Client, u string, want int64) {
	resp, err := c.Get(u)
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || n != want {
		b.Fatalf("GET %s = %s with %d bytes; want 200 OK with %d (rule %q)", u, resp.Status, n, want, resp.Header.Get("X-Warden-Rule"))
	}
}

// egressMode is a way a benchmark's client reaches its server: directly or
// through the proxy; over TLS, through the proxy means a CONNECT tunnel.
type egressMode struct {
	name       string
	tls, proxy bool
}

// plainModes are plain HTTP, directly and forwarded by the proxy.
var plainModes = []egressMode{
	{name: "direct"},
	{name: "proxy", proxy: true},
}

// BenchmarkEgressDownload is one 100 MB download over loopback, directly
// (plain and TLS), through the proxy forwarding it, and through the proxy's
// CONNECT tunnel (TLS end to end; compare with direct-tls).
func BenchmarkEgressDownload(b *testing.B) {
	modes := append(slices.Clone(plainModes),
		egressMode{name: "direct-tls", tls: true},
		egressMode{name: "proxy-connect", tls: true, proxy: true},
	)
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			srv := startUpstream(b, downloadSize, m.tls)
			var proxy *url.URL
			if m.proxy {
				proxy = startEgress(b, srv)
			}
			c := newClient(b, srv, proxy, true)
			b.SetBytes(downloadSize)
			for b.Loop() {
				get(b, c, srv.URL+"/blob", downloadSize)
			}
		})
	}
}

// BenchmarkEgressRequest is small GETs one after another on a kept-alive
// connection; p50-µs/op and p99-µs/op are the latency percentiles, and the
// proxy's added latency is the proxy's minus the direct one's.
func BenchmarkEgressRequest(b *testing.B) {
	for _, m := range plainModes {
		b.Run(m.name, func(b *testing.B) {
			srv := startUpstream(b, 16, false)
			var proxy *url.URL
			if m.proxy {
				proxy = startEgress(b, srv)
			}
			c := newClient(b, srv, proxy, true)
			get(b, c, srv.URL+"/warm", 16)
			var took []time.Duration
			for b.Loop() { // the first call resets the timer, after the warm-up
				start := time.Now()
				get(b, c, srv.URL+"/small", 16)
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(micros(percentile(took, 50)), "p50-µs/op")
			b.ReportMetric(micros(percentile(took, 99)), "p99-µs/op")
		})
	}
}

// BenchmarkEgressConnections is small GETs each on a new connection, so
// through the proxy every one is a fresh TCP connection to it and a fresh
// decision; conns/s is the rate.
func BenchmarkEgressConnections(b *testing.B) {
	for _, m := range plainModes {
		b.Run(m.name, func(b *testing.B) {
			srv := startUpstream(b, 16, false)
			var proxy *url.URL
			if m.proxy {
				proxy = startEgress(b, srv)
			}
			c := newClient(b, srv, proxy, false)
			n := 0
			for b.Loop() {
				get(b, c, srv.URL+"/small", 16)
				n++
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "conns/s")
		})
	}
}

// percentile is the p-th percentile of sorted (nearest rank).
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[max(i-1, 0)]
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// BenchmarkEgressParallel is small GETs over kept-alive connections from 16
// and 64 concurrent clients in a closed loop, each with its own connection,
// directly and through the proxy; it reports requests/s and the p50/p99
// latency. Every proxied request is decided, audited and logged durably.
//
//	go test -run XXX -bench BenchmarkEgressParallel -benchtime 20000x ./app/
func BenchmarkEgressParallel(b *testing.B) {
	for _, m := range plainModes {
		for _, clients := range []int{16, 64} {
			b.Run(fmt.Sprintf("%s/clients=%d", m.name, clients), func(b *testing.B) {
				srv := startUpstream(b, 16, false)
				var proxy *url.URL
				if m.proxy {
					proxy = startEgress(b, srv)
				}
				c := newClient(b, srv, proxy, true)
				c.Transport.(*http.Transport).MaxIdleConnsPerHost = clients
				var (
					mu   sync.Mutex
					lats []time.Duration
				)
				b.SetParallelism(max(1, clients/runtime.GOMAXPROCS(0)))
				b.ResetTimer()
				start, cpu0 := time.Now(), cpuTime()
				b.RunParallel(func(pb *testing.PB) {
					var mine []time.Duration
					for pb.Next() {
						t0 := time.Now()
						get(b, c, srv.URL+"/small", 16)
						mine = append(mine, time.Since(t0))
					}
					mu.Lock()
					lats = append(lats, mine...)
					mu.Unlock()
				})
				elapsed, cpu := time.Since(start), cpuTime()-cpu0
				b.StopTimer()
				slices.Sort(lats)
				b.ReportMetric(float64(len(lats))/elapsed.Seconds(), "req/s")
				// CPU of the whole process (client, proxy and upstream
				// alike) a request: steadier than req/s on a shared machine.
				b.ReportMetric(float64(cpu.Microseconds())/float64(len(lats)), "cpu-µs/op")
				b.ReportMetric(micros(percentile(lats, 50)), "p50-µs")
				b.ReportMetric(micros(percentile(lats, 99)), "p99-µs")
			})
		}
	}
}
