// Command proxyload times HTTP forward proxies side by side in one
// interleaved run: small GETs over kept-alive connections from many clients
// in a closed loop (requests/s, p50, p99), and one large download over
// plain HTTP (forwarded) and over TLS (a CONNECT tunnel), each as a share of
// the same download made directly. It serves the upstreams itself, on the
// addresses given, so every proxy must already allow them. Each proxy's
// resident memory is read from /proc when its pid is given.
//
//	proxyload -small 127.0.0.1:18080 -bulk 127.0.0.1:18081 -tls 127.0.0.1:18443 \
//		-proxy warden=127.0.0.1:4750,pid=123 -proxy smokescreen=127.0.0.1:4751,pid=124
//
// It is run by scripts/bench_proxy.sh (make bench).
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type proxy struct {
	name string
	url  *url.URL // nil: direct
	pid  int
}

type proxies []proxy

func (p *proxies) String() string { return fmt.Sprint(*p) }

// Set parses NAME=HOST:PORT[,pid=N].
func (p *proxies) Set(s string) error {
	name, rest, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("want NAME=HOST:PORT[,pid=N], got %q", s)
	}
	addr, opt, _ := strings.Cut(rest, ",")
	x := proxy{name: name, url: &url.URL{Scheme: "http", Host: addr}}
	if opt != "" {
		v, ok := strings.CutPrefix(opt, "pid=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil {
			return fmt.Errorf("want pid=N after the address, got %q", opt)
		}
		x.pid = n
	}
	*p = append(*p, x)
	return nil
}

func main() {
	var (
		list     proxies
		small    = flag.String("small", "127.0.0.1:18080", "address to serve the small answers on")
		bulk     = flag.String("bulk", "127.0.0.1:18081", "address to serve the large download on (plain HTTP)")
		tlsAddr  = flag.String("tls", "127.0.0.1:18443", "address to serve the large download on (TLS)")
		clients  = flag.String("clients", "16,64", "numbers of concurrent clients for the small requests")
		duration = flag.Duration("duration", 3*time.Second, "how long each small-request measurement runs")
		rounds   = flag.Int("rounds", 3, "rounds; each measures every proxy once, in a rotated order")
		size     = flag.Int64("size", 100<<20, "bytes of the large download")
		bulkOnly = flag.Bool("bulk-only", false, "skip the small requests")
		bulkN    = flag.Int("bulk-rounds", 7, "rounds of the large downloads")
	)
	flag.Var(&list, "proxy", "NAME=HOST:PORT[,pid=N] (repeatable)")
	flag.Parse()
	if err := run(list, *small, *bulk, *tlsAddr, *clients, *duration, *rounds, *bulkN, *size, *bulkOnly); err != nil {
		fmt.Fprintln(os.Stderr, "proxyload:", err)
		os.Exit(1)
	}
}

func run(list proxies, small, bulk, tlsAddr, clientList string, d time.Duration, rounds, bulkRounds int, size int64, bulkOnly bool) error {
	var counts []int
	for _, f := range strings.Split(clientList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-clients: %q is not a positive number", f)
		}
		counts = append(counts, n)
	}
	smallSrv, err := serve(small, answer(16), false)
	if err != nil {
		return err
	}
	defer smallSrv.Close()
	bulkSrv, err := serve(bulk, answer(size), false)
	if err != nil {
		return err
	}
	defer bulkSrv.Close()
	tlsSrv, err := serve(tlsAddr, answer(size), true)
	if err != nil {
		return err
	}
	defer tlsSrv.Close()
	roots := tlsSrv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs

	all := append(proxies{{name: "direct"}}, list...)
	type key struct {
		name    string
		clients int
	}
	results := map[key][]smallResult{}
	rss, anon := map[string]int64{}, map[string]int64{} // the peak VmRSS seen, and RssAnon with it
	if !bulkOnly {
		for r := range rounds {
			for i := range all {
				p := all[(i+r)%len(all)]
				for _, c := range counts {
					res, err := smallRun(p, smallSrv.URL+"/small", c, d)
					if err != nil {
						return fmt.Errorf("%s, %d clients: %w", p.name, c, err)
					}
					results[key{p.name, c}] = append(results[key{p.name, c}], res)
					if p.pid != 0 {
						if kb := residentKB(p.pid); kb > rss[p.name] {
							rss[p.name], anon[p.name] = kb, statusKB(p.pid, "RssAnon:")
						}
					}
				}
			}
		}
		fmt.Printf("small GETs (16 bytes) over kept-alive connections, %d rounds of %v each, interleaved\n", rounds, d)
		fmt.Printf("%-12s %8s %24s %22s %22s %22s\n", "proxy", "clients", "req/s (each round)", "p50 ms", "p99 ms", "proxy CPU µs/req")
		for _, c := range counts {
			for _, p := range all {
				rs := results[key{p.name, c}]
				fmt.Printf("%-12s %8d %24s %22s %22s %22s\n", p.name, c,
					join(rs, func(r smallResult) string { return fmt.Sprintf("%.0f", r.rate) }),
					join(rs, func(r smallResult) string { return fmt.Sprintf("%.2f", ms(r.p50)) }),
					join(rs, func(r smallResult) string { return fmt.Sprintf("%.2f", ms(r.p99)) }),
					join(rs, func(r smallResult) string { return fmt.Sprintf("%.0f", float64(r.cpu)/float64(time.Microsecond)) }))
			}
		}
		fmt.Println()
		fmt.Printf("resident memory, the most seen right after any small-request run\n")
		for _, p := range list {
			if p.pid != 0 {
				// The rest of VmRSS is the program's own file pages
				// (mostly its binary's), shared with every process
				// that maps them; the anonymous part is its heap and stacks.
				fmt.Printf("%-12s VmRSS %6.1f MB (anonymous %5.1f MB, files %5.1f MB), VmHWM %6.1f MB\n", p.name,
					float64(rss[p.name])/1024, float64(anon[p.name])/1024, float64(rss[p.name]-anon[p.name])/1024, float64(peakKB(p.pid))/1024)
			}
		}
		fmt.Println()
	}

	if bulkRounds <= 0 {
		return nil
	}
	type bulkKey struct {
		name string
		tls  bool
	}
	rates := map[bulkKey][]float64{}
	cpus := map[bulkKey][]time.Duration{}
	for r := range bulkRounds {
		for i := range all {
			p := all[(i+r)%len(all)]
			for _, overTLS := range []bool{false, true} {
				u := bulkSrv.URL + "/bulk"
				if overTLS {
					u = tlsSrv.URL + "/bulk"
				}
				cpu0 := cpuTime(p.pid)
				rate, err := download(p, u, size, roots)
				if err != nil {
					return fmt.Errorf("%s download %s: %w", p.name, u, err)
				}
				k := bulkKey{p.name, overTLS}
				rates[k] = append(rates[k], rate)
				cpus[k] = append(cpus[k], cpuTime(p.pid)-cpu0)
			}
		}
	}
	fmt.Printf("one %d MiB download per round, %d rounds, interleaved; share = rate / direct's rate in the same round\n", size>>20, bulkRounds)
	fmt.Printf("%-12s %-16s %30s %30s %8s %24s\n", "proxy", "how", "MB/s (each round)", "share of direct", "median", "proxy CPU ms (median)")
	for _, overTLS := range []bool{false, true} {
		how := "plain HTTP"
		if overTLS {
			how = "CONNECT (TLS)"
		}
		direct := rates[bulkKey{"direct", overTLS}]
		for _, p := range all {
			rs := rates[bulkKey{p.name, overTLS}]
			var mbs, share []string
			var shares []float64
			for i, v := range rs {
				mbs = append(mbs, fmt.Sprintf("%.0f", v/1e6))
				share = append(share, fmt.Sprintf("%.2f", v/direct[i]))
				shares = append(shares, v/direct[i])
			}
			slices.Sort(shares)
			cpu := "" // the proxy's CPU time for the download: the relay's cost, steadier than its rate on a shared machine
			if p.pid != 0 {
				c := slices.Clone(cpus[bulkKey{p.name, overTLS}])
				slices.Sort(c)
				cpu = fmt.Sprintf("%.0f", float64(c[len(c)/2])/float64(time.Millisecond))
			}
			fmt.Printf("%-12s %-16s %30s %30s %8.2f %24s\n", p.name, how, strings.Join(mbs, " "), strings.Join(share, " "), shares[len(shares)/2], cpu)
		}
	}
	return nil
}

// answer serves n bytes with a Content-Length.
func answer(n int64) http.Handler {
	chunk := make([]byte, 256<<10)
	for i := range chunk {
		chunk[i] = byte(i)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		for left := n; left > 0; {
			k, err := w.Write(chunk[:min(left, int64(len(chunk)))])
			if err != nil {
				return
			}
			left -= int64(k)
		}
	})
}

// serve starts h on addr, over TLS when asked.
func serve(addr string, h http.Handler, overTLS bool) (*httptest.Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: h}}
	if overTLS {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	return srv, nil
}

type smallResult struct {
	rate     float64
	p50, p99 time.Duration
	cpu      time.Duration // the proxy's CPU time per request (0: no pid)
}

// smallRun has n clients, each with its own kept-alive connection, GET u
// through p in a closed loop for d; every answer must be a 200 with 16
// bytes.
func smallRun(p proxy, u string, n int, d time.Duration) (smallResult, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: n, IdleConnTimeout: time.Minute}
	if p.url != nil {
		tr.Proxy = http.ProxyURL(p.url)
	}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	// Warm up: open the connections.
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { _ = get(c, u, 16) })
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var (
		mu    sync.Mutex
		lats  []time.Duration
		first atomic.Pointer[error]
	)
	cpu0 := cpuTime(p.pid)
	start := time.Now()
	for range n {
		wg.Go(func() {
			mine := make([]time.Duration, 0, 4096)
			for ctx.Err() == nil {
				t0 := time.Now()
				if err := get(c, u, 16); err != nil {
					first.CompareAndSwap(nil, &err)
					return
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lats = append(lats, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime(p.pid) - cpu0
	if err := first.Load(); err != nil {
		return smallResult{}, *err
	}
	slices.Sort(lats)
	if len(lats) == 0 {
		return smallResult{}, errors.New("no request completed")
	}
	return smallResult{
		rate: float64(len(lats)) / elapsed.Seconds(),
		p50:  lats[len(lats)/2],
		p99:  lats[len(lats)*99/100],
		cpu:  cpu / time.Duration(len(lats)),
	}, nil
}

func get(c *http.Client, u string, want int64) error {
	resp, err := c.Get(u)
	if err != nil {
		return err
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || n != want {
		return fmt.Errorf("GET %s = %s with %d bytes, want 200 with %d", u, resp.Status, n, want)
	}
	return nil
}

// download fetches u once through p and returns bytes per second.
func download(p proxy, u string, size int64, roots *x509.CertPool) (float64, error) {
	tr := &http.Transport{}
	if p.url != nil {
		tr.Proxy = http.ProxyURL(p.url)
	}
	if strings.HasPrefix(u, "https:") {
		tr.TLSClientConfig = &tls.Config{RootCAs: roots}
	}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	start := time.Now()
	if err := get(c, u, size); err != nil {
		return 0, err
	}
	return float64(size) / time.Since(start).Seconds(), nil
}

func join(rs []smallResult, f func(smallResult) string) string {
	var out []string
	for _, r := range rs {
		out = append(out, f(r))
	}
	return strings.Join(out, " ")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// cpuTime is the user and system CPU time pid has used (0 for pid 0 or
// when it cannot be read), from /proc/PID/stat in clock ticks of 10 ms.
func cpuTime(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b)[i+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// residentKB is the process's VmRSS in KiB (0 when it cannot be read).
func residentKB(pid int) int64 { return statusKB(pid, "VmRSS:") }

// peakKB is the process's VmHWM (peak resident) in KiB.
func peakKB(pid int) int64 { return statusKB(pid, "VmHWM:") }

func statusKB(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
