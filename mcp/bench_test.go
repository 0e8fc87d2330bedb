package mcp_test

import (
	"context"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwarden/warden/app"
)

// benchCalls calls echo b.N times and reports the p50 and p99 latency of
// one call, in microseconds.
func benchCalls(b *testing.B, cs *sdk.ClientSession) {
	ctx := context.Background()
	params := &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}
	if _, err := cs.CallTool(ctx, params); err != nil { // warm up
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		res, err := cs.CallTool(ctx, params)
		lat = append(lat, time.Since(start))
		if err != nil || res.IsError {
			b.Fatalf("CallTool = %v, %v", res, err)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds()), "p99-µs")
}

// BenchmarkCallDirect: the SDK client calls the in-process SDK server
// directly (the baseline).
func BenchmarkCallDirect(b *testing.B) {
	ts := newTestServer("Echo the text back.")
	st, ct := sdk.NewInMemoryTransports()
	ss, err := ts.Connect(context.Background(), st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	benchCalls(b, cs)
}

// BenchmarkCallProxied: the same calls through the proxy, each decided by
// the gate, recorded in the audit log (its decision and its action_result
// event, in SQLite), and its result scanned and fenced.
func BenchmarkCallProxied(b *testing.B) {
	a := openAppB(b, testPolicy)
	ts := newTestServer("Echo the text back.")
	st, pt := sdk.NewInMemoryTransports()
	ss, err := ts.Connect(context.Background(), st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	conn, err := pt.Connect(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	pr := connectB(b, a.MCPProxy(app.MCPOptions{Name: "test"}), conn)
	benchCalls(b, pr)
}
