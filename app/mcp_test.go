package app

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestLoopbackOrigin(t *testing.T) {
	for origin, want := range map[string]bool{
		"http://localhost:3000":     true,
		"http://127.0.0.1":          true,
		"http://[::1]:8080":         true,
		"https://evil.example":      false,
		"http://127.0.0.1.evil.com": false,
		"null":                      false,
		"":                          false,
	} {
		if got := loopbackOrigin(origin); got != want {
			t.Errorf("loopbackOrigin(%q) = %v, want %v", origin, got, want)
		}
	}
}

func TestCheckMCPName(t *testing.T) {
	for name, ok := range map[string]bool{
		"fs": true, "github": true, "my-server": true, "a_b": true,
		"": false, "a__b": false, "_x": false, "x_": false, "../etc": false, "a b": false, "a/b": false,
	} {
		if err := CheckMCPName(name); (err == nil) != ok {
			t.Errorf("CheckMCPName(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}

// TestMCPUpstreamHeaders: --header-env's headers reach the upstream server
// with every request, and a server that needs them works through the proxy.
func TestMCPUpstreamHeaders(t *testing.T) {
	a := openTestApp(t)
	srv := sdk.NewServer(&sdk.Implementation{Name: "authed", Version: "1"}, nil)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	var refused atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			refused.Add(1)
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- a.RunMCP(ctx, MCPOptions{Name: "authed", Upstream: ts.URL, Headers: http.Header{"Authorization": {"Bearer s3cret"}}}, inR, outW, io.Discard)
	}()
	c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect through the proxy: %v", err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("ListTools through the proxy to a server that needs the header: %v", err)
	}
	cs.Close()
	if n := refused.Load(); n != 0 {
		t.Errorf("the upstream refused %d requests without the header", n)
	}
}

// TestMCPListenEndsIdleSessions: a client that goes away without ending
// its session does not keep it (and its upstream session) forever.
func TestMCPListenEndsIdleSessions(t *testing.T) {
	a := openTestApp(t)
	srv := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
	up := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer up.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := make(chan string, 1)
	go a.RunMCP(ctx, MCPOptions{Name: "up", Upstream: up.URL, Listen: "127.0.0.1:0", IdleSession: 300 * time.Millisecond,
		Ready: func(s string) { addr <- s }}, nil, io.Discard, io.Discard)
	listen := <-addr
	c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: "http://" + listen + "/", MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// The client goes quiet without ending its session.
	time.Sleep(2 * time.Second)
	if _, err := cs.ListTools(ctx, nil); err == nil {
		t.Error("a request on a session idle past IdleSession succeeded; want it ended")
	}
}
