package fleet

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/httpapi"
)

// daemon is one `warden serve` of the fleet.
type daemon struct {
	home   string
	cmd    *exec.Cmd
	client *httpapi.Client
	done   chan error
}

// fleetHomes makes n homes on dsn sharing one checkpoint key, a $2,000
// daily cap and a paper exchange with a fresh ETH price.
func fleetHomes(t testing.TB, dsn string, n int) []string {
	t.Helper()
	dir := t.TempDir()
	prices := filepath.Join(dir, "prices.json")
	b, _ := json.Marshal(map[string]any{"ETH": map[string]any{"usd": 3000, "at": time.Now().Format(time.RFC3339Nano)}})
	if err := os.WriteFile(prices, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var homes []string
	var key string
	for i := range n {
		settings := [][2]string{
			{"safety.dailySpendCap", "2000"}, {"safety.maxTransactionAmount", "100"},
			{"trade.paper.pricesFile", prices},
		}
		home := newHome(t, settings...)
		if i == 0 {
			// Every daemon of a fleet holds the same checkpoint key.
			raw, err := os.ReadFile(filepath.Join(home, "audit.key"))
			if err != nil {
				t.Fatal(err)
			}
			key = filepath.Join(dir, "fleet.key")
			if err := os.WriteFile(key, raw, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		must(t, nil, "--home", home, "config", "set", "store.dsn", dsn)
		must(t, nil, "--home", home, "config", "set", "store.keyFile", key)
		homes = append(homes, home)
	}
	return homes
}

// serve starts `warden serve` on home and waits until it listens.
func serve(t testing.TB, home string) *daemon {
	t.Helper()
	cmd := exec.Command(wardenBinary(t), "--home", home, "serve", "--no-proxy")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemon{home: home, cmd: cmd, done: make(chan error, 1)}
	ready := make(chan string, 1)
	var log strings.Builder
	var mu sync.Mutex
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if rest, ok := strings.CutPrefix(sc.Text(), "warden: serving on "); ok {
				select {
				case ready <- strings.Fields(rest)[0]:
				default:
				}
			}
		}
	}()
	go func() { d.done <- cmd.Wait() }()
	select {
	case sock := <-ready:
		d.client = httpapi.UnixClient(sock, "")
	case err := <-d.done:
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("warden serve on %s exited before it listened: %v\n%s", home, err, log.String())
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("warden serve on %s did not listen within 60s", home)
	}
	t.Cleanup(func() { d.stop(t) })
	return d
}

// stop ends the daemon as an operator would (SIGTERM) and waits for it.
func (d *daemon) stop(t testing.TB) {
	if d.cmd.ProcessState != nil {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(30 * time.Second):
		d.cmd.Process.Kill()
		t.Errorf("warden serve on %s did not stop within 30s of SIGTERM", d.home)
	}
}

func tradeRequest(i int) *warden.Request {
	return &warden.Request{Capability: warden.CapTrade, Action: "buy", Resource: "WETH", RequestedBy: "agent",
		Session: fmt.Sprintf("s%d", i%7), Params: map[string]json.RawMessage{"chain": json.RawMessage(`"base"`), "amount_usd": json.RawMessage(`"10"`)}}
}

// TestThreeDaemonsShareOneCap: three `warden serve` on one PostgreSQL take
// 300 concurrent $10 trades against a $2,000 daily cap: exactly 200 are
// allowed and the ledger holds $2,000; an approval given through daemon A
// releases a request waiting on daemon B; the emergency stop turned on
// through A stops B; and audit verify is clean after all of it.
func TestThreeDaemonsShareOneCap(t *testing.T) {
	dsn := migrated(t)
	homes := fleetHomes(t, dsn, 3)
	var ds []*daemon
	for _, h := range homes {
		ds = append(ds, serve(t, h))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	var (
		wg              sync.WaitGroup
		mu              sync.Mutex
		allowed, denied int
		reasons         = map[string]int{}
	)
	for i := range 300 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dec, err := ds[i%3].client.Check(ctx, tradeRequest(i))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				reasons["error: "+err.Error()]++
			case dec.Verdict == warden.Allow || dec.Verdict == warden.Sandbox:
				allowed++
			default:
				denied++
				reasons[dec.Rule]++
			}
		}()
	}
	wg.Wait()
	if allowed != 200 || denied != 100 {
		t.Errorf("300 concurrent $10 trades on three daemons against a $2,000 cap: %d allowed, %d denied (%v); want exactly 200 and 100", allowed, denied, reasons)
	}
	if n := count(t, dsn, `SELECT coalesce(sum(amount_micros), 0) FROM spend_ledger`); n != 2000*warden.MicrosPerDollar {
		t.Errorf("the ledger holds $%s, want $2,000", warden.USD(n))
	}
	if n := count(t, dsn, `SELECT count(*) FROM audit WHERE capability = 'trade'`); n != 300 {
		t.Errorf("%d trade decisions in the fleet's audit log, want 300", n)
	}

	// An approval answered through daemon A releases a request waiting on B.
	req := &warden.Request{Capability: warden.CapShell, Action: "exec", Resource: "git push origin main", Session: "fleet", RequestedBy: "agent"}
	type answer struct {
		d   warden.Decision
		err error
	}
	waited := make(chan answer, 1)
	go func() {
		d, err := ds[1].client.CheckWait(ctx, req)
		waited <- answer{d, err}
	}()
	var id string
	tok, err := os.ReadFile(filepath.Join(homes[0], "api", "operator.token"))
	if err != nil {
		t.Fatal(err)
	}
	operatorA := httpapi.UnixClient(filepath.Join(homes[0], "warden.sock"), strings.TrimSpace(string(tok)))
	for deadline := time.Now().Add(30 * time.Second); id == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		as, err := operatorA.Approvals(ctx, true)
		if err != nil {
			t.Fatalf("list approvals through daemon A: %v", err)
		}
		for _, a := range as {
			if a.Request.Resource == req.Resource {
				id = a.ID
			}
		}
	}
	if id == "" {
		select {
		case a := <-waited:
			t.Fatalf("the request on daemon B never waited for a human: %+v, %v", a.d, a.err)
		default:
			t.Fatal("daemon A never saw the approval daemon B opened")
		}
	}
	must(t, nil, "--home", homes[0], "approvals", "approve", id)
	select {
	case a := <-waited:
		if a.err != nil || (a.d.Verdict != warden.Allow && a.d.Verdict != warden.Sandbox) {
			t.Errorf("the request waiting on daemon B after A approved it: %+v, %v; want it let through", a.d, a.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("approving through daemon A did not release the request waiting on daemon B")
	}

	// The emergency stop turned on through A stops B and C.
	must(t, nil, "--home", homes[0], "kill", "--reason", "fleet drill")
	for _, d := range ds[1:] {
		dec, err := d.client.Check(ctx, tradeRequest(0))
		if err != nil || dec.Verdict != warden.Deny || !strings.Contains(dec.Rule, "kill") {
			t.Errorf("a trade on %s after the stop was turned on through A: %+v, %v; want denied by the kill switch", d.home, dec, err)
		}
	}

	for _, d := range ds {
		d.stop(t)
	}
	r := run(t, nil, "--home", homes[2], "audit", "verify")
	if r.code != 0 {
		t.Errorf("audit verify after the fleet's run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := count(t, dsn, `SELECT count(*) FROM chain_checkpoints`); n < 3 {
		t.Errorf("%d keyed checkpoints after 300+ rows and three daemons closing, want at least 3", n)
	}
}
