//go:build amd64 || arm64

package sandbox_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwarden/warden/sandbox"
)

// answerServer stands in for what warden serves on a sandbox's loopback
// (the signer, the egress proxy): every request gets its answer and the
// Host it asked for. It records the address it was given and whether Serve
// returned.
type answerServer struct {
	answer   string
	addr     atomic.Value // string
	returned atomic.Bool
}

func (a *answerServer) Serve(l net.Listener) error {
	a.addr.Store(l.Addr().String())
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s %s", a.answer, r.Host)
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	err := srv.Serve(l)
	a.returned.Store(true)
	return err
}

const signerURL = "http://" + sandbox.SignerAddr + "/sign"

// TestSignerReachable runs a command with a signer and no network: it
// reaches the signer on its loopback, and the listener is closed (Serve
// returns) when the run ends.
func TestSignerReachable(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	signer := &answerServer{answer: "signed"}
	s := guardSpec(t)
	s.Signer = signer
	r := probeIn(t, s, "get", signerURL)
	if r.err != nil || r.res.ExitCode != 0 || !strings.Contains(r.stdout, "200 signed "+sandbox.SignerAddr) {
		t.Fatalf("GET %s with a signer: %v; want the signer's answer", signerURL, r)
	}
	if got, _ := signer.addr.Load().(string); got != sandbox.SignerAddr {
		t.Errorf("the signer was served on %q, want %s", got, sandbox.SignerAddr)
	}
	if !signer.returned.Load() {
		t.Errorf("the signer's Serve had not returned when Run did; want its listener closed at the end of the run")
	}
}

// TestNoSignerRefused makes the same request without a signer: nothing
// listens there.
func TestNoSignerRefused(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	r := probeIn(t, guardSpec(t), "get", signerURL)
	if r.err != nil || r.res.ExitCode != 1 || !strings.Contains(r.stdout, "connection refused") {
		t.Fatalf("GET %s without a signer: %v; want connection refused", signerURL, r)
	}
}

// TestSignerWithEgressProxy runs a command with both the egress proxy and
// the signer: both listeners work in one run, and a client that honours the
// proxy variables (Python's urllib) reaches the signer directly, not
// through the proxy, even when the caller set its own NO_PROXY.
func TestSignerWithEgressProxy(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	signer, egress := &answerServer{answer: "signed"}, &answerServer{answer: "proxied"}
	s := guardSpec(t)
	s.Net, s.Egress, s.Signer = sandbox.NetProxy, egress, signer
	s.Env = append(sandbox.SignerEnv("agent-token"), "NO_PROXY=internal.example")
	script := `import os, urllib.request
for u in (os.environ["WARDEN_SIGNER_URL"] + "/sign", "http://example.invalid/"):
    print(u, "->", urllib.request.urlopen(u, timeout=5).read().decode())
for k in ("NO_PROXY", "no_proxy", "WARDEN_SIGNER_TOKEN"):
    print(k + "=" + os.environ.get(k, ""))
`
	r := runIn(t, s, "python3", "-c", script)
	if r.err != nil || r.res.ExitCode != 0 {
		t.Fatalf("python3 with the proxy and the signer: %v", r)
	}
	for _, want := range []string{
		"http://" + sandbox.SignerAddr + "/sign -> signed " + sandbox.SignerAddr,
		"http://example.invalid/ -> proxied example.invalid",
		"NO_PROXY=internal.example,127.0.0.1\n",
		"no_proxy=127.0.0.1\n",
		"WARDEN_SIGNER_TOKEN=agent-token\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the command's output lacks %q:\n%s", want, r.stdout)
		}
	}
	if got, _ := egress.addr.Load().(string); got != sandbox.ProxyAddr {
		t.Errorf("the egress proxy was served on %q, want %s", got, sandbox.ProxyAddr)
	}
	if !signer.returned.Load() || !egress.returned.Load() {
		t.Errorf("Serve returned: signer %v, egress %v; want both listeners closed at the end of the run", signer.returned.Load(), egress.returned.Load())
	}
}

func TestSignerNeedsNetworkNamespace(t *testing.T) {
	base := sandbox.Spec{Limits: sandbox.Limits{Wall: time.Second}, Signer: &answerServer{}}
	for _, mode := range []sandbox.Mode{sandbox.ModeOff, sandbox.ModeLight} {
		s := base
		s.Mode = mode
		err := s.Validate()
		if err == nil || !strings.Contains(err.Error(), "signer needs a network namespace") {
			t.Errorf("a signer in mode %s: Validate = %v; want it refused for want of a network namespace", mode, err)
		}
		if _, err := (&sandbox.Native{}).Run(context.Background(), s, sandbox.Command{Args: []string{"/bin/true"}}); err == nil {
			t.Errorf("a signer in mode %s: Run ran it; want it refused", mode)
		}
	}
	for _, mode := range []sandbox.Mode{sandbox.ModeStandard, sandbox.ModeMax} {
		s := base
		s.Mode = mode
		if err := s.Validate(); err != nil {
			t.Errorf("a signer in mode %s with network none: %v", mode, err)
		}
		s.Net, s.Egress = sandbox.NetProxy, &answerServer{}
		if err := s.Validate(); err != nil {
			t.Errorf("a signer in mode %s with network proxy: %v", mode, err)
		}
	}
}

func TestSignerEnv(t *testing.T) {
	got := sandbox.SignerEnv("tok")
	want := []string{"WARDEN_SIGNER_URL=http://127.0.0.1:8553", "WARDEN_SIGNER_TOKEN=tok"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("SignerEnv = %q, want %q", got, want)
	}
}

// TestLongLivedSandboxRefusesSigner: a long-lived sandbox cannot serve a
// signer yet, and says so rather than starting without one.
func TestLongLivedSandboxRefusesSigner(t *testing.T) {
	m := testManager(t.TempDir())
	s := guardSpec(t)
	s.Signer = &answerServer{}
	info, err := m.Start(context.Background(), "sb", "guard", s)
	if err == nil || !strings.Contains(err.Error(), "no signer") {
		t.Fatalf("Start with a signer: %v (%+v); want it refused", err, info)
	}
}
