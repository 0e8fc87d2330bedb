package stoploss_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/finance/stoploss"
)

var ctx = context.Background()

// fakeBackend is a finance.Backend whose answers are func fields; the
// executing methods record their calls and refuse an order without a
// clearance, like every real backend.
type fakeBackend struct {
	price     func(t finance.Token) (finance.Price, error)
	portfolio func() (finance.Portfolio, error)
	simulate  func(q finance.SwapQuote) (finance.Simulation, error)

	mu     sync.Mutex
	swaps  []finance.SwapQuote
	closes []string
}

func (b *fakeBackend) Name() string { return "fake" }
func (b *fakeBackend) Price(_ context.Context, t finance.Token) (finance.Price, error) {
	return b.price(t)
}
func (b *fakeBackend) Portfolio(context.Context) (finance.Portfolio, error) { return b.portfolio() }
func (b *fakeBackend) Simulate(_ context.Context, q finance.SwapQuote) (finance.Simulation, error) {
	return b.simulate(q)
}
func (b *fakeBackend) Swap(_ context.Context, q finance.SwapQuote, c finance.Clearance) (finance.Fill, error) {
	if err := c.Check(); err != nil {
		return finance.Fill{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.swaps = append(b.swaps, q)
	return finance.Fill{ID: fmt.Sprintf("fill-%d", len(b.swaps)), Action: finance.Sell, ValueUSD: q.AmountUSD}, nil
}
func (b *fakeBackend) OpenPerp(context.Context, finance.PerpOrder, finance.Clearance) (finance.Fill, error) {
	return finance.Fill{}, errors.New("the monitor never opens")
}
func (b *fakeBackend) ClosePerp(_ context.Context, id string, c finance.Clearance) (finance.Fill, error) {
	if err := c.Check(); err != nil {
		return finance.Fill{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closes = append(b.closes, id)
	return finance.Fill{ID: "fill-close-" + id, Action: finance.PerpClose, Position: id}, nil
}
func (b *fakeBackend) Transfer(context.Context, finance.TransferOrder, finance.Clearance) (finance.Fill, error) {
	return finance.Fill{}, errors.New("the monitor never transfers")
}

func (b *fakeBackend) calls() (swaps, closes int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.swaps), len(b.closes)
}

// harness is a Monitor over a fake backend, a MemStore and a Trader whose
// Decide answers verdict. Its fields script the world between runs.
type harness struct {
	t *testing.T

	mu       sync.Mutex
	now      time.Time
	price    float64       // of every token
	priceAge time.Duration // how old each price is
	priceErr error
	pf       finance.Portfolio
	ratio    float64 // the exit simulation's output ratio
	verdict  warden.Verdict
	reqs     []*warden.Request
	opts     []finance.DecideOptions
	escs     []string

	backend *fakeBackend
	store   *stoploss.MemStore
	m       *stoploss.Monitor
}

func newHarness(t *testing.T) *harness {
	h := &harness{t: t, now: t0, price: 100, priceAge: 5 * time.Second, ratio: 0.99, verdict: warden.Allow, store: &stoploss.MemStore{}}
	h.backend = &fakeBackend{
		price: func(finance.Token) (finance.Price, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.priceErr != nil {
				return finance.Price{}, h.priceErr
			}
			return finance.Price{USD: h.price, At: h.now.Add(-h.priceAge)}, nil
		},
		portfolio: func() (finance.Portfolio, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			return h.pf, nil
		},
		simulate: func(q finance.SwapQuote) (finance.Simulation, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			return finance.Simulation{InputValueUSD: q.AmountUSD, OutputValueUSD: warden.USD(float64(q.AmountUSD) * h.ratio)}, nil
		},
	}
	n := 0
	trader := &finance.Trader{
		Backend: h.backend,
		Decide: func(_ context.Context, req *warden.Request, opt finance.DecideOptions) (warden.Decision, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			n++
			h.reqs = append(h.reqs, req)
			h.opts = append(h.opts, opt)
			return warden.Decision{Verdict: h.verdict, Reason: "fake gate", Rule: "fake." + h.verdict.String(), TraceID: fmt.Sprintf("trace-%d", n)}, nil
		},
		Release:  func(context.Context, string, string) error { return nil },
		Slippage: finance.DefaultSlippage(),
	}
	h.m = &stoploss.Monitor{Backend: h.backend, Rules: h.store, Trader: trader,
		Now: func() time.Time { h.mu.Lock(); defer h.mu.Unlock(); return h.now },
		Escalate: func(_ context.Context, target, reason string) error {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.escs = append(h.escs, target+": "+reason)
			return nil
		}}
	return h
}

func (h *harness) set(fn func(h *harness)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fn(h)
}

func (h *harness) decided() []*warden.Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*warden.Request(nil), h.reqs...)
}

func (h *harness) escalations() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.escs...)
}

// run calls RunOnce and returns its only result (or a zero Result when
// there is none).
func (h *harness) run() stoploss.Result {
	h.t.Helper()
	res, err := h.m.RunOnce(ctx)
	if err != nil {
		h.t.Fatalf("RunOnce: %v", err)
	}
	switch len(res) {
	case 0:
		return stoploss.Result{}
	case 1:
		return res[0]
	}
	h.t.Fatalf("RunOnce = %d results, want at most 1: %+v", len(res), res)
	return stoploss.Result{}
}

func (h *harness) addRule(r stoploss.Rule) {
	h.t.Helper()
	if r.ID == "" {
		r.ID = stoploss.NewID()
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = h.now
	}
	if err := h.store.AddRule(ctx, r); err != nil {
		h.t.Fatal(err)
	}
}

func token(t *testing.T, chain, symbol string) finance.Token {
	t.Helper()
	var res finance.Resolver
	c, err := res.Chain(chain)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := res.Token(c, finance.TokenRef{Symbol: symbol})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// holding is a portfolio with 2 WETH on base, and some USDC.
func holding(t *testing.T, price float64) finance.Portfolio {
	return finance.Portfolio{Wallet: "0xwallet", Holdings: []finance.Holding{
		{Token: token(t, "base", "WETH"), Amount: 2, ValueUSD: finance.USDOf(2 * price)},
		{Token: token(t, "base", "USDC"), Amount: 500, ValueUSD: 500 * warden.MicrosPerDollar},
	}}
}

// position is a portfolio with one ETH perp position entered at 100.
func position(t *testing.T, side string, leverage float64) finance.Portfolio {
	return finance.Portfolio{Wallet: "0xwallet",
		Holdings: []finance.Holding{{Token: token(t, "base", "USDC"), Amount: 500, ValueUSD: 500 * warden.MicrosPerDollar}},
		Positions: []finance.Position{{ID: "pos-1", Token: token(t, "base", "ETH"), Side: side, Leverage: leverage,
			MarginUSD: 100 * warden.MicrosPerDollar, Size: 1, EntryPrice: 100, OpenedAt: t0.Add(-time.Hour), MarkPrice: 100}}}
}

func param(t *testing.T, req *warden.Request, key string) string {
	t.Helper()
	raw, ok := req.Params[key]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func TestMonitorFixedStopSellsHoldingOnce(t *testing.T) {
	h := newHarness(t)
	h.pf = holding(t, 100)
	h.addRule(stoploss.Rule{ID: "sl-weth", Target: "base:WETH", Kind: stoploss.FixedPercent, ThresholdPct: 0.10, Entry: 100})

	h.set(func(h *harness) { h.price = 95 })
	if res := h.run(); res.Outcome.Action != stoploss.Hold || res.Decision != nil {
		t.Fatalf("at 95: %+v, want a hold and no order", res)
	}
	h.set(func(h *harness) { h.price = 89.5 })
	res := h.run()
	if res.Outcome.Action != stoploss.Exit || res.Outcome.Trigger != stoploss.TriggerStopLoss || res.Fill == nil || res.Err != nil {
		t.Fatalf("at 89.5: %+v, want a filled stop_loss exit", res)
	}
	reqs := h.decided()
	if len(reqs) != 1 {
		t.Fatalf("Decide called %d times, want 1", len(reqs))
	}
	req := reqs[0]
	weth := token(t, "base", "WETH")
	for _, c := range []struct{ what, got, want string }{
		{"capability", req.Capability, warden.CapTrade},
		{"action", req.Action, finance.Sell},
		{"resource", req.Resource, "WETH:" + weth.Address},
		{"requested_by", req.RequestedBy, stoploss.RequestedBy},
		{"chain", param(t, req, finance.ParamChain), "base"},
		{"exit_reason", param(t, req, finance.ParamExitReason), stoploss.TriggerStopLoss},
		{"amount_usd", param(t, req, finance.ParamAmountUSD), "179"},
	} {
		if c.got != c.want {
			t.Errorf("exit request %s = %q, want %q", c.what, c.got, c.want)
		}
	}
	if !req.Protective || !req.Autonomous || !strings.Contains(req.Context, "stop_loss") {
		t.Errorf("exit request = %+v, want protective, autonomous, with the reason as context", req)
	}
	if o, err := finance.ParseOrder(req); err != nil || o.ExitReason != stoploss.TriggerStopLoss || o.TokenOut != finance.DefaultQuote {
		t.Errorf("ParseOrder(exit) = %+v, %v; want a sell for USDC with its exit_reason", o, err)
	}
	if swaps, _ := h.backend.calls(); swaps != 1 {
		t.Errorf("backend swaps = %d, want 1", swaps)
	}

	// The rule is spent: the holding (still in the fake portfolio) is not sold twice.
	h.set(func(h *harness) { h.price = 80 })
	if res := h.run(); res.Target != "" {
		t.Errorf("after the exit: %+v, want nothing watched", res)
	}
	if rules, _ := h.store.Rules(ctx); len(rules) != 0 {
		t.Errorf("rules after the exit = %+v, want none", rules)
	}
	if n := len(h.decided()); n != 1 {
		t.Errorf("Decide called %d times in all, want 1", n)
	}
}

func TestMonitorClosesPosition(t *testing.T) {
	h := newHarness(t)
	h.pf = position(t, finance.Long, 10)
	h.addRule(stoploss.Rule{Target: "pos-1", Kind: stoploss.FixedPercent, ThresholdPct: 0.10, Basis: stoploss.BasisMargin})
	h.set(func(h *harness) { h.price = 99 }) // 1 % at 10x: 10 % of the margin
	res := h.run()
	if res.Outcome.Action != stoploss.Exit || res.Fill == nil {
		t.Fatalf("%+v, want a filled exit", res)
	}
	req := h.decided()[0]
	if req.Action != finance.PerpClose || req.Resource != "ETH" || param(t, req, finance.ParamPosition) != "pos-1" ||
		param(t, req, finance.ParamExitReason) != stoploss.TriggerStopLoss || !req.Protective {
		t.Errorf("exit request = %+v, want a protective perp_close of pos-1", req)
	}
	if _, ok := req.Params[finance.ParamAmountUSD]; ok {
		t.Errorf("a perp_close carries amount_usd %s; it spends nothing", req.Params[finance.ParamAmountUSD])
	}
	if _, closes := h.backend.calls(); closes != 1 {
		t.Errorf("backend closes = %d, want 1", closes)
	}
}

func TestMonitorDenyLeavesPosition(t *testing.T) {
	h := newHarness(t)
	h.pf = position(t, finance.Long, 1)
	h.verdict = warden.Deny
	h.m.Retry = time.Minute
	h.addRule(stoploss.Rule{ID: "sl-1", Target: "pos-1", Kind: stoploss.FixedPercent, ThresholdPct: 0.10})
	h.set(func(h *harness) { h.price = 85 })
	res := h.run()
	if res.Decision == nil || res.Decision.Verdict != warden.Deny || res.Fill != nil || res.Err != nil {
		t.Fatalf("%+v, want a denied exit without a fill", res)
	}
	if swaps, closes := h.backend.calls(); swaps+closes != 0 {
		t.Errorf("backend executed %d orders after a deny, want none", swaps+closes)
	}
	if rules, _ := h.store.Rules(ctx); len(rules) != 1 {
		t.Errorf("rules after a denied exit = %d, want the rule kept", len(rules))
	}
	// Within Retry the exit is not sent again; after it, it is.
	h.set(func(h *harness) { h.now = h.now.Add(30 * time.Second) })
	if res := h.run(); !res.Deferred || res.Decision != nil {
		t.Errorf("30 s later: %+v, want a deferred exit", res)
	}
	h.set(func(h *harness) { h.now = h.now.Add(31 * time.Second); h.verdict = warden.Allow })
	if res := h.run(); res.Fill == nil {
		t.Errorf("after the retry delay: %+v, want the exit sent and filled", res)
	}
	if n := len(h.decided()); n != 2 {
		t.Errorf("Decide called %d times, want 2", n)
	}
}

// TestMonitorRetryResetsOnHold: once the target holds again, a new trigger
// is sent at once rather than waiting out the retry delay.
func TestMonitorRetryResetsOnHold(t *testing.T) {
	h := newHarness(t)
	h.pf = position(t, finance.Long, 1)
	h.verdict = warden.Deny
	h.addRule(stoploss.Rule{Target: "pos-1", Kind: stoploss.FixedPercent, ThresholdPct: 0.10})
	for i, step := range []struct {
		price    float64
		deferred bool
		decided  int
	}{{85, false, 1}, {86, true, 1}, {95, false, 1}, {85, false, 2}} {
		h.set(func(h *harness) { h.price = step.price; h.now = h.now.Add(time.Second) })
		res := h.run()
		if res.Deferred != step.deferred || len(h.decided()) != step.decided {
			t.Fatalf("tick %d at %v: deferred %v after %d decisions, want %v after %d", i, step.price, res.Deferred, len(h.decided()), step.deferred, step.decided)
		}
	}
}

func TestMonitorAskWaits(t *testing.T) {
	h := newHarness(t)
	h.pf = position(t, finance.Long, 1)
	h.verdict = warden.Ask
	h.m.Wait = true
	h.addRule(stoploss.Rule{Target: "pos-1", Kind: stoploss.FixedPercent, ThresholdPct: 0.10})
	h.set(func(h *harness) { h.price = 85 })
	res := h.run()
	if res.Decision == nil || res.Decision.Verdict != warden.Ask || res.Fill != nil {
		t.Fatalf("%+v, want an ask and no fill", res)
	}
	if !h.opts[0].Wait {
		t.Errorf("DecideOptions = %+v, want Wait", h.opts[0])
	}
}

// TestMonitorTrailingPath scripts a price path through several runs: the
// 5 % trailing stop follows the peak to 120 and fires at exactly 113.9.
func TestMonitorTrailingPath(t *testing.T) {
	for _, tc := range []struct {
		name string
		pf   func(t *testing.T) finance.Portfolio
		rule stoploss.Rule
	}{
		{"position", func(t *testing.T) finance.Portfolio { return position(t, finance.Long, 1) },
			stoploss.Rule{Target: "pos-1", Kind: stoploss.Trailing, ThresholdPct: 0.05}},
		{"holding", func(t *testing.T) finance.Portfolio { return holding(t, 100) },
			stoploss.Rule{Target: "base:WETH", Kind: stoploss.Trailing, ThresholdPct: 0.05, Entry: 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.pf = tc.pf(t)
			h.addRule(tc.rule)
			for i, step := range []struct {
				price float64
				want  stoploss.Action
			}{{100, stoploss.Hold}, {110, stoploss.Hold}, {120, stoploss.Hold}, {116, stoploss.Hold}, {114.1, stoploss.Hold}, {113.9, stoploss.Exit}} {
				h.set(func(h *harness) { h.price = step.price; h.now = h.now.Add(10 * time.Second) })
				res := h.run()
				if res.Outcome.Action != step.want {
					t.Fatalf("tick %d at %v: %s (%s), want %s", i, step.price, res.Outcome.Action, res.Outcome.Reason, step.want)
				}
				if step.want == stoploss.Hold && len(h.decided()) != 0 {
					t.Fatalf("tick %d at %v: an order was sent on a hold", i, step.price)
				}
				if i >= 2 && res.Outcome.HighWater != 120 {
					t.Errorf("tick %d: peak %v, want 120", i, res.Outcome.HighWater)
				}
			}
			if n := len(h.decided()); n != 1 || param(t, h.decided()[0], finance.ParamExitReason) != stoploss.TriggerTrailingStop {
				t.Errorf("Decide called %d times, want once with exit_reason trailing_stop", n)
			}
			marks, _ := h.store.Marks(ctx)
			found := false
			for _, v := range marks {
				found = found || v == 120
			}
			if !found {
				t.Errorf("marks = %v, want the peak 120 recorded", marks)
			}
		})
	}
}

// TestMonitorShortTrailing: a short's trough ratchets down and its stop
// sits above it.
func TestMonitorShortTrailing(t *testing.T) {
	h := newHarness(t)
	h.pf = position(t, finance.Short, 1)
	h.m.Default = &stoploss.Rule{Kind: stoploss.Trailing, ThresholdPct: 0.05}
	for i, step := range []struct {
		price float64
		want  stoploss.Action
	}{{100, stoploss.Hold}, {90, stoploss.Hold}, {94.4, stoploss.Hold}, {94.5, stoploss.Exit}} {
		h.set(func(h *harness) { h.price = step.price })
		if res := h.run(); res.Outcome.Action != step.want {
			t.Fatalf("tick %d at %v: %s (%s), want %s", i, step.price, res.Outcome.Action, res.Outcome.Reason, step.want)
		}
	}
	if marks, _ := h.store.Marks(ctx); marks["pos-1"] != -90 {
		t.Errorf("marks = %v, want pos-1 at -90 (the trough, negated)", marks)
	}
}

func TestMonitorStalePriceEscalates(t *testing.T) {
	h := newHarness(t)
	h.pf = position(t, finance.Long, 1)
	h.addRule(stoploss.Rule{Target: "pos-1", Kind: stoploss.FixedPercent, ThresholdPct: 0.10})
	h.set(func(h *harness) { h.price = 50; h.priceAge = 10 * time.Minute })
	for range 3 {
		res := h.run()
		if res.Outcome.Action != stoploss.Escalate || res.Outcome.Trigger != stoploss.TriggerStalePrice || res.Decision != nil {
			t.Fatalf("%+v, want a stale_price escalation and no order", res)
		}
	}
	if n := len(h.decided()); n != 0 {
		t.Errorf("Decide called %d times on a stale price, want 0", n)
	}
	if escs := h.escalations(); len(escs) != 1 || !strings.HasPrefix(escs[0], "pos-1: ") {
		t.Errorf("escalations = %q, want one for pos-1 (repeats are not re-sent)", escs)
	}
	// Fresh again and holding: the escalation clears, so a new stale spell is reported again.
	h.set(func(h *harness) { h.price = 95; h.priceAge = time.Second })
	if res := h.run(); res.Outcome.Action != stoploss.Hold {
		t.Fatalf("fresh: %+v, want a hold", res)
	}
	h.set(func(h *harness) { h.priceAge = time.Hour })
	h.run()
	if escs := h.escalations(); len(escs) != 2 {
		t.Errorf("escalations = %d, want 2", len(escs))
	}
}

func TestMonitorNoPriceEscalates(t *testing.T) {
	h := newHarness(t)
	h.pf = position(t, finance.Long, 1)
	h.addRule(stoploss.Rule{Target: "pos-1", Kind: stoploss.FixedPercent, ThresholdPct: 0.10})
	h.set(func(h *harness) { h.priceErr = errors.New("oracle down") })
	res := h.run()
	if res.Outcome.Action != stoploss.Escalate || res.Err == nil || len(h.decided()) != 0 || len(h.escalations()) != 1 {
		t.Errorf("%+v, want an escalation with the error, and no order", res)
	}
}

func TestMonitorBadFillEscalates(t *testing.T) {
	h := newHarness(t)
	h.pf = holding(t, 100)
	h.addRule(stoploss.Rule{Target: "base:WETH", Kind: stoploss.FixedPercent, ThresholdPct: 0.10, Entry: 100})
	h.set(func(h *harness) { h.price = 70; h.ratio = 0.9 })
	res := h.run()
	if res.Outcome.Action != stoploss.Escalate || res.Outcome.Trigger != stoploss.TriggerBadFill || res.Decision != nil {
		t.Fatalf("%+v, want a bad_fill escalation and no order", res)
	}
	if len(h.decided()) != 0 || len(h.escalations()) != 1 {
		t.Errorf("Decide called %d times and Escalate %d; want 0 and 1", len(h.decided()), len(h.escalations()))
	}
}

// TestMonitorDefaultForHolding: a holding without a rule gets a copy of the
// default with its entry at the first fresh price; the copy goes when the
// holding does.
func TestMonitorDefaultForHolding(t *testing.T) {
	h := newHarness(t)
	h.pf = holding(t, 200)
	h.m.Default = &stoploss.Rule{Kind: stoploss.FixedPercent, ThresholdPct: 0.10}
	h.set(func(h *harness) { h.price = 200 })
	if res := h.run(); res.Outcome.Action != stoploss.Hold || res.Rule == "" {
		t.Fatalf("%+v, want a hold under a recorded default rule", res)
	}
	rules, _ := h.store.Rules(ctx)
	if len(rules) != 1 || rules[0].Entry != 200 || rules[0].By != stoploss.DefaultBy || rules[0].Target != "base:WETH" {
		t.Fatalf("rules = %+v, want one default copy for base:WETH entered at 200", rules)
	}
	h.set(func(h *harness) { h.price = 185 })
	if res := h.run(); res.Outcome.Action != stoploss.Hold {
		t.Fatalf("at 185: %+v, want a hold (stop at 180)", res)
	}
	if rules, _ := h.store.Rules(ctx); len(rules) != 1 {
		t.Fatalf("rules = %d, want the same single copy", len(rules))
	}
	// Sold elsewhere: the copy is retired.
	h.set(func(h *harness) { h.pf.Holdings = h.pf.Holdings[1:] })
	h.run()
	if rules, _ := h.store.Rules(ctx); len(rules) != 0 {
		t.Errorf("rules after the holding left = %+v, want none", rules)
	}
}

func TestMonitorDefaultNotRecordedOnStalePrice(t *testing.T) {
	h := newHarness(t)
	h.pf = holding(t, 200)
	h.m.Default = &stoploss.Rule{Kind: stoploss.FixedPercent, ThresholdPct: 0.10}
	h.set(func(h *harness) { h.priceAge = time.Hour })
	if res := h.run(); res.Outcome.Action != stoploss.Escalate {
		t.Fatalf("%+v, want an escalation", res)
	}
	if rules, _ := h.store.Rules(ctx); len(rules) != 0 {
		t.Errorf("rules = %+v, want none recorded from a stale price", rules)
	}
}

func TestMonitorIgnoresStablecoinsAndUnruled(t *testing.T) {
	h := newHarness(t)
	h.pf = holding(t, 100)
	res, err := h.m.RunOnce(ctx)
	if err != nil || len(res) != 0 {
		t.Errorf("RunOnce without rules = %+v, %v; want nothing", res, err)
	}
	h.addRule(stoploss.Rule{Target: "base:USDC", Kind: stoploss.FixedPercent, ThresholdPct: 0.01, Entry: 1})
	h.set(func(h *harness) { h.price = 0.5 })
	if res, _ := h.m.RunOnce(ctx); len(res) != 0 {
		t.Errorf("RunOnce with a stablecoin rule = %+v; want nothing watched", res)
	}
}

func TestMonitorAddRule(t *testing.T) {
	h := newHarness(t)
	h.pf = holding(t, 100)
	h.set(func(h *harness) { h.price = 250 })
	r, err := h.m.AddRule(ctx, stoploss.Rule{Target: "BASE:weth", Kind: stoploss.Trailing, ThresholdPct: 0.1, By: "operator"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Entry != 250 || r.ID == "" || r.Target != "base:WETH" || !r.CreatedAt.Equal(t0) {
		t.Errorf("AddRule = %+v, want an id, the entry 250, the target base:WETH and CreatedAt now", r)
	}
	if _, err := h.m.AddRule(ctx, stoploss.Rule{Target: "base:PEPE", Kind: stoploss.Trailing, ThresholdPct: 0.1}); warden.ErrorCodeOf(err) != warden.ENotFound {
		t.Errorf("AddRule for a token not held = %v, want ENotFound", err)
	}
	if _, err := h.m.AddRule(ctx, stoploss.Rule{Target: "base:PEPE", Kind: stoploss.Trailing, ThresholdPct: 0.1, Entry: 0.00001}); err != nil {
		t.Errorf("AddRule with an explicit entry = %v, want nil", err)
	}
	if _, err := h.m.AddRule(ctx, stoploss.Rule{Target: "base:WETH", Kind: stoploss.Trailing, ThresholdPct: 5}); warden.ErrorCodeOf(err) != warden.EInvalid {
		t.Errorf("AddRule of an invalid rule = %v, want EInvalid", err)
	}
	h.set(func(h *harness) { h.priceAge = time.Hour })
	if _, err := h.m.AddRule(ctx, stoploss.Rule{Target: "base:WETH", Kind: stoploss.FixedPercent, ThresholdPct: 0.1}); warden.ErrorCodeOf(err) != warden.EUnavailable {
		t.Errorf("AddRule on a stale price = %v, want EUnavailable", err)
	}
	h.pf = position(t, finance.Long, 1)
	if r, err := h.m.AddRule(ctx, stoploss.Rule{Target: "pos-1", Kind: stoploss.FixedPercent, ThresholdPct: 0.1}); err != nil || r.Entry != 0 {
		t.Errorf("AddRule for a position = %+v, %v; want it stored without an entry (the position's is used)", r, err)
	}
}

func TestMonitorNotConfigured(t *testing.T) {
	for _, m := range []*stoploss.Monitor{nil, {}, {Backend: &fakeBackend{}, Rules: &stoploss.MemStore{}}} {
		if _, err := m.RunOnce(ctx); warden.ErrorCodeOf(err) != warden.EInternal {
			t.Errorf("RunOnce of %+v = %v, want EInternal", m, err)
		}
	}
	h := newHarness(t)
	h.m.Default = &stoploss.Rule{Kind: stoploss.FixedPercent, ThresholdPct: 3}
	if _, err := h.m.RunOnce(ctx); warden.ErrorCodeOf(err) != warden.EInvalid {
		t.Errorf("RunOnce with an invalid default = %v, want EInvalid", err)
	}
}

// TestMonitorRun: Run keeps going through a failing and a panicking backend
// and returns nil when its context ends.
func TestMonitorRun(t *testing.T) {
	h := newHarness(t)
	if err := h.m.Run(ctx, 0); warden.ErrorCodeOf(err) != warden.EInvalid {
		t.Errorf("Run with interval 0 = %v, want EInvalid", err)
	}
	var mu sync.Mutex
	calls := 0
	h.backend.portfolio = func() (finance.Portfolio, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		switch calls {
		case 1:
			return finance.Portfolio{}, errors.New("backend down")
		case 2:
			panic("backend bug")
		}
		return position(t, finance.Long, 1), nil
	}
	h.addRule(stoploss.Rule{Target: "pos-1", Kind: stoploss.FixedPercent, ThresholdPct: 0.10})
	h.set(func(h *harness) { h.price = 80 })
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- h.m.Run(runCtx, time.Millisecond) }()
	deadline := time.After(10 * time.Second)
	for len(h.decided()) == 0 {
		select {
		case <-deadline:
			t.Fatal("Run never sent the exit")
		case <-time.After(time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v, want nil when its context ends", err)
	}
	if _, closes := h.backend.calls(); closes != 1 {
		t.Errorf("closes = %d, want 1", closes)
	}
}
