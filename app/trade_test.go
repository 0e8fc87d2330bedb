package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/approval"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/finance/stoploss"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// tradingHome makes a home whose paper exchange reads its prices from a
// file, sets the policy keys given, and opens it on the test clock.
func tradingHome(t testing.TB, clk *clock, settings ...[2]string) (*App, func(eth float64)) {
	t.Helper()
	home := Home(filepath.Join(t.TempDir(), "home"))
	ctx := context.Background()
	if _, err := Init(ctx, home, false); err != nil {
		t.Fatal(err)
	}
	prices := filepath.Join(t.TempDir(), "prices.json")
	setPrice := func(eth float64) {
		b, _ := json.Marshal(map[string]any{"ETH": map[string]any{"usd": eth, "at": clk.Now().Format(time.RFC3339Nano)}, "BTC": 60000.0})
		if err := os.WriteFile(prices, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	setPrice(100)
	for _, kv := range append([][2]string{{"trade.paper.pricesFile", prices}}, settings...) {
		if err := config.Set(home.PolicyPath(), kv[0], kv[1]); err != nil {
			t.Fatalf("config set %s: %v", kv[0], err)
		}
	}
	a, err := Open(ctx, home, Options{Now: clk.Now, OpenDatabase: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, setPrice
}

func tradeReq(action, token string, params map[string]string) *warden.Request {
	r := &warden.Request{Capability: warden.CapTrade, Action: action, Resource: token, Params: map[string]json.RawMessage{}}
	for k, v := range params {
		b, _ := json.Marshal(v)
		r.Params[k] = b
	}
	return r
}

// TestTradingPipelineIsTheFullRiskManager: the gate's trade capability runs
// the global stages and then exactly the FullRiskManager's, in order.
func TestTradingPipelineIsTheFullRiskManager(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	a, _ := tradingHome(t, clk)
	d, err := a.Gate.Check(context.Background(), tradeReq("buy", "WETH", map[string]string{"chain": "base", "amount_usd": "100"}))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range d.Stages {
		got = append(got, s.Stage)
	}
	var want []string
	for _, s := range []string{"policy-integrity", "kill-switch", "daily-spend-cap", "per-transaction-max", "tier-gate", "manual-only"} {
		want = append(want, s)
	}
	b, _ := a.Backend()
	for _, s := range RiskManager(a.Home, a.Policy, b).Stages() {
		want = append(want, s.Name())
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("trade stages = %v\nwant %v", got, want)
	}
	if d.Verdict != warden.Allow {
		t.Fatalf("a $100 WETH buy = %v (%s)", d.Verdict, d.Reason)
	}
}

// A trade the backend refuses gives its reservation back: the ledger is as
// before, and the failure is recorded on the decision's trace.
func TestFailedExecutionReleasesTheReservation(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	a, _ := tradingHome(t, clk)
	tr, err := a.Trader()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Nothing is held, so the paper exchange cannot sell; every stage allows.
	ex, err := tr.Execute(ctx, tradeReq("sell", "WETH", map[string]string{"chain": "base", "amount_usd": "300"}), finance.DecideOptions{})
	if err == nil || ex.Decision.Verdict != warden.Allow || ex.Fill != nil {
		t.Fatalf("selling what is not held: %+v, %v; want allowed, then a backend error", ex, err)
	}
	if spent, err := a.Store.SpentSince(ctx, time.Time{}); err != nil || spent != 0 {
		t.Fatalf("ledger after the failed trade = $%s, %v; want $0", spent, err)
	}
	evs, err := a.Store.Events(ctx, warden.EventFilter{Type: warden.EventActionResult})
	if err != nil || len(evs) != 1 || evs[0].TraceID != ex.Decision.TraceID {
		t.Fatalf("action results = %+v, %v; want one, on the trade's trace", evs, err)
	}
	// The budget is whole again: a $500 buy fits after a $1,600 one.
	for _, amount := range []string{"500", "500", "500", "100"} {
		if ex, err := tr.Execute(ctx, tradeReq("buy", "WETH", map[string]string{"chain": "base", "amount_usd": amount}), finance.DecideOptions{}); err != nil || ex.Fill == nil {
			t.Fatalf("buy $%s: %+v, %v", amount, ex.Decision, err)
		}
	}
	if spent, _ := a.Store.SpentSince(ctx, time.Time{}); spent != 1600*warden.MicrosPerDollar {
		t.Fatalf("ledger = $%s, want $1600", spent)
	}
	dry, err := tr.Execute(ctx, tradeReq("buy", "WETH", map[string]string{"chain": "base", "amount_usd": "400"}), finance.DecideOptions{DryRun: true})
	if err != nil || dry.Decision.Verdict != warden.Allow || dry.Fill != nil {
		t.Fatalf("dry run: %+v, %v", dry, err)
	}
	if spent, _ := a.Store.SpentSince(ctx, time.Time{}); spent != 1600*warden.MicrosPerDollar {
		t.Fatalf("ledger after a dry run = $%s, want $1600 (a dry run reserves nothing)", spent)
	}
}

// holdingWETH is a trading home on the paper exchange that has bought $500
// of WETH on base, with its trader and stop-loss monitor.
func holdingWETH(t *testing.T, clk *clock) (*App, *finance.Trader, *stoploss.Monitor, func(float64)) {
	t.Helper()
	a, setPrice := tradingHome(t, clk)
	tr, err := a.Trader()
	if err != nil {
		t.Fatal(err)
	}
	if ex, err := tr.Execute(context.Background(), tradeReq("buy", "WETH", map[string]string{"chain": "base", "amount_usd": "500"}), finance.DecideOptions{}); err != nil || ex.Fill == nil {
		t.Fatalf("buy: %+v, %v", ex.Decision, err)
	}
	m, err := a.StopLoss(false)
	if err != nil {
		t.Fatal(err)
	}
	return a, tr, m, setPrice
}

// TestTrailingStopFiresAtTheRightTick walks a price path on the paper
// exchange: a 5 % trailing stop holds while the price climbs to 120 and
// pulls back to 114.1, and closes at 113.9 (below 114 = 120 × 0.95)
// through the gate, with every stage recorded in the audit log.
func TestTrailingStopFiresAtTheRightTick(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	a, tr, m, setPrice := holdingWETH(t, clk)
	ctx := context.Background()
	if _, err := m.AddRule(ctx, stoploss.Rule{Target: "base:WETH", Kind: stoploss.Trailing, ThresholdPct: 0.05, By: "test"}); err != nil {
		t.Fatal(err)
	}
	path := []float64{100, 110, 120, 116, 114.1, 113.9}
	fired := -1
	var exit *warden.Decision
	for i, p := range path {
		clk.Add(10 * time.Second)
		setPrice(p)
		results, err := m.RunOnce(ctx)
		if err != nil {
			t.Fatalf("tick %d: %v", i, err)
		}
		for _, r := range results {
			if r.Fill != nil {
				if fired >= 0 {
					t.Fatalf("a second exit at tick %d", i)
				}
				fired, exit = i, r.Decision
			}
		}
	}
	if fired != len(path)-1 {
		t.Fatalf("the trailing stop fired at tick %d, want tick %d (price 113.9)", fired, len(path)-1)
	}
	entries, err := a.Store.Entries(ctx, warden.AuditFilter{TraceID: exit.TraceID})
	if err != nil || len(entries) != 1 {
		t.Fatalf("audit entries of the exit: %d, %v", len(entries), err)
	}
	e := entries[0]
	if e.Verdict != warden.Allow || e.Action != "sell" || e.RequestedBy != "stoploss" || len(e.Stages) != 12 {
		t.Fatalf("exit audited as %v %s by %s with %d stages; want an allowed stoploss sell with all 12 stages", e.Verdict, e.Action, e.RequestedBy, len(e.Stages))
	}
	pf, _ := tr.Backend.Portfolio(ctx)
	if ex := pf.Exposure(); ex.ByAsset["ETH"] != 0 {
		t.Fatalf("ETH exposure after the stop = $%s, want 0", ex.ByAsset["ETH"])
	}
}

// TestStopLossCloseWaitsForAHumanWhileKilled: with the kill switch on, the
// monitor's close is not executed and not dropped: it opens an approval for
// a human, tier-4 style (only a fresh "once").
func TestStopLossCloseWaitsForAHumanWhileKilled(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	a, tr, m, setPrice := holdingWETH(t, clk)
	ctx := context.Background()
	if _, err := m.AddRule(ctx, stoploss.Rule{Target: "base:WETH", Kind: stoploss.FixedPercent, ThresholdPct: 0.10, By: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := config.SetKillSwitch(a.Home.PolicyPath(), true); err != nil {
		t.Fatal(err)
	}
	killed, err := Open(ctx, a.Home, Options{Now: clk.Now, OpenDatabase: true})
	if err != nil {
		t.Fatal(err)
	}
	defer killed.Close()
	// An agent's own sell is refused outright.
	if d, _ := killed.Gate.Check(ctx, tradeReq("sell", "WETH", map[string]string{"chain": "base", "amount_usd": "50"})); d.Verdict != warden.Deny {
		t.Fatalf("agent sell under the kill switch = %v, want deny", d.Verdict)
	}
	km, err := killed.StopLoss(false)
	if err != nil {
		t.Fatal(err)
	}
	clk.Add(10 * time.Second)
	setPrice(85)
	results, err := km.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 || results[0].Decision == nil {
		t.Fatalf("results = %+v; want one exit decision", results)
	}
	d := results[0].Decision
	if d.Verdict != warden.Ask || d.Rule != "safety.kill_switch" || d.ApprovalID == "" || results[0].Fill != nil {
		t.Fatalf("stop-loss close under the kill switch = %v by %s, approval %q, fill %v; want ask with an approval and no fill", d.Verdict, d.Rule, d.ApprovalID, results[0].Fill)
	}
	ap, err := killed.Queue.Get(ctx, d.ApprovalID)
	if err != nil || ap.State != warden.ApprovalPending || ap.Channel != "stoploss" {
		t.Fatalf("approval = %+v, %v; want pending on the stoploss channel", ap, err)
	}
	pf, _ := tr.Backend.Portfolio(ctx)
	if pf.Exposure().ByAsset["ETH"] == 0 {
		t.Fatal("the position was closed although the kill switch is on and no human answered")
	}

	// A monitor that waits (as in warden serve): a human's "once" from the
	// terminal lets this exit through, still under the kill switch.
	clk.Add(6 * time.Minute) // past the retry delay; the first approval has expired
	setPrice(85)
	km.Wait = true
	done := make(chan []stoploss.Result, 1)
	go func() {
		res, err := km.RunOnce(ctx)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	var id string
	for deadline := time.Now().Add(10 * time.Second); id == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		pending, err := killed.Queue.List(ctx, warden.ApprovalFilter{Pending: true, Now: clk.Now()})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pending {
			if p.ID != d.ApprovalID {
				id = p.ID
			}
		}
	}
	if id == "" {
		t.Fatal("the waiting exit opened no approval")
	}
	if ans, err := killed.Queue.Answer(ctx, id, warden.AnswerOnce, approval.Who{Name: "alice", Channel: "terminal"}); err != nil || ans.State != warden.ApprovalApproved {
		t.Fatalf("a human's once = %+v, %v; want approved (the re-check must see a protective exit)", ans, err)
	}
	res := <-done
	if len(res) != 1 || res[0].Fill == nil || res[0].Decision == nil || res[0].Decision.Verdict != warden.Allow {
		t.Fatalf("after the human's answer: %+v; want the exit executed", res)
	}
	if pf, _ := tr.Backend.Portfolio(ctx); pf.Exposure().ByAsset["ETH"] != 0 {
		t.Fatalf("ETH exposure after the approved exit = $%s, want 0", pf.Exposure().ByAsset["ETH"])
	}
}
