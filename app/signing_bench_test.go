package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/httpapi"
	"github.com/agentwarden/warden/signing/keystore"
)

// BenchmarkSignAPI measures one allowed signing request over the daemon's
// Unix socket: HTTP, decision, durable audit row with its rate slot, events
// and the keystore signature. It reports the p50 and p99 latency.
func BenchmarkSignAPI(b *testing.B) {
	ctx := context.Background()
	home := Home(filepath.Join(b.TempDir(), "h"))
	if _, err := Init(ctx, home, false); err != nil {
		b.Fatal(err)
	}
	pass := filepath.Join(b.TempDir(), "pass")
	if err := os.WriteFile(pass, []byte("bench"), 0o600); err != nil {
		b.Fatal(err)
	}
	for _, kv := range [][2]string{{"signing.passphraseFile", pass}, {"signing.perDay", "100000"}, {"signing.perHour", "10000"},
		{"signing.recipients", "[0x1111111111111111111111111111111111111111]"}} {
		if err := config.Set(home.PolicyPath(), kv[0], kv[1]); err != nil {
			b.Fatal(kv[0], err)
		}
	}
	if _, _, err := keystore.Create(filepath.Join(string(home), "keys"), []byte("bench"), keystore.Light); err != nil {
		b.Fatal(err)
	}
	d, err := NewDaemon(ctx, home, Options{})
	if err != nil {
		b.Fatal(err)
	}
	d.ProxyListen = "" // this test needs no egress proxy
	sctx, stop := context.WithCancel(ctx)
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- d.Serve(sctx, func(at Listening) { ready <- at.Socket }) }()
	c := httpapi.UnixClient(<-ready, "")
	defer func() { stop(); <-done; d.Close() }()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		body := fmt.Sprintf(`{"method":"eth_signTransaction","requestId":"b-%d","tx":{"type":2,"chainId":8453,"to":"0x1111111111111111111111111111111111111111","value":"1000000000000000","data":"0x","gas":"21000","maxFeePerGas":"2000000000","maxPriorityFeePerGas":"100000000","nonce":%d}}`, i, i)
		start := time.Now()
		res, err := c.Sign(ctx, []byte(body), 0)
		lat = append(lat, time.Since(start))
		if err != nil || !res.Success {
			b.Fatalf("%+v %v", res, err)
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
