//go:build amd64 || arm64

package sandbox_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden/egress/fakedns"
	"github.com/agentwarden/warden/sandbox"
)

// directServer is an egress proxy that also serves clients that ignore
// the proxy variables: it answers each direct connection with the name
// and port its address stood for.
type directServer struct{ answerServer }

func (d *directServer) ServeDirect(l net.Listener, names func(netip.Addr) (string, bool)) error {
	for {
		c, err := l.Accept()
		if err != nil {
			return nil
		}
		ap := netip.MustParseAddrPort(c.LocalAddr().String())
		name, ok := names(ap.Addr())
		if !ok {
			name = "no name"
		}
		fmt.Fprintf(c, "tunnel %s %d\n", name, ap.Port())
		c.Close()
	}
}

func (d *directServer) ServeDirectHTTP(l net.Listener, names func(netip.Addr) (string, bool)) error {
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ap := netip.MustParseAddrPort(r.Context().Value(http.LocalAddrContextKey).(net.Addr).String())
			name, _ := names(ap.Addr())
			fmt.Fprintf(w, "http %s %d", name, ap.Port())
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	return srv.Serve(l)
}

var _ sandbox.DirectEgress = (*directServer)(nil)

// TestDirectClientsReachTheirNames: under a DirectEgress proxy a command's
// lookups are answered from fakedns's range, and a client that ignores the
// proxy variables reaches the host's direct listeners for the name it
// looked up (HTTPS's port and HTTP's); other ports and addresses no lookup
// gave have no route out.
func TestDirectClientsReachTheirNames(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed: scripts/deps.sh installs it")
	}
	s, home := workspaceSpec(t)
	s.Net, s.Egress = sandbox.NetProxy, &directServer{answerServer{answer: "proxied"}}
	script := `set -u
cat /etc/resolv.conf
getent hosts registry.example.test
exec 3<>/dev/tcp/registry.example.test/443 && head -1 <&3
curl -sS --noproxy '*' -m 5 http://registry.example.test/x; echo
curl -sS --noproxy '*' -m 5 http://registry.example.test:8080/ -o /dev/null 2>/dev/null || echo "8080 refused"
curl -sS --noproxy '*' -m 5 https://203.0.113.9/ -o /dev/null 2>/dev/null || echo "literal refused"
`
	var out, errb bytes.Buffer
	res, err := (&sandbox.Native{}).Run(context.Background(), s, sandbox.Command{
		Args: []string{"/bin/bash", "-c", script}, Dir: s.Project,
		Env:    []string{"PATH=" + systemPath, "HOME=" + home},
		Stdout: &out, Stderr: &errb,
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exit %d, %v:\n%s\n%s", res.ExitCode, err, out.String(), errb.String())
	}
	got := out.String()
	for _, want := range []string{
		"nameserver 127.0.0.1",
		fakedns.Gateway.Next().String() + "      registry.example.test",
		"tunnel registry.example.test 443",
		"http registry.example.test 80",
		"8080 refused",
		"literal refused",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the command's output lacks %q:\n%s\nstderr: %s", want, got, errb.String())
		}
	}
}

// TestLookupsFailAtOnceWithoutDirectEgress: in a sandbox with no network
// nothing answers at DNSAddr, and a lookup fails at once rather than
// waiting for a name server that is not there.
func TestLookupsFailAtOnceWithoutDirectEgress(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	s, home := workspaceSpec(t)
	var out, errb bytes.Buffer
	start := time.Now()
	res, err := (&sandbox.Native{}).Run(context.Background(), s, sandbox.Command{
		Args: []string{"/bin/sh", "-c", "getent hosts registry.example.test; echo status $?"}, Dir: s.Project,
		Env:    []string{"PATH=" + systemPath, "HOME=" + home},
		Stdout: &out, Stderr: &errb,
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exit %d, %v: %s", res.ExitCode, err, errb.String())
	}
	if !strings.Contains(out.String(), "status 2") {
		t.Errorf("getent found a name with nothing to answer it: %s", out.String())
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("the lookup took %v: it waited for a name server", d)
	}
}
