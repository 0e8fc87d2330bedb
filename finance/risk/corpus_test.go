package risk

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/finance/exposure"
	"github.com/agentwarden/warden/finance/recipients"
	"github.com/agentwarden/warden/finance/sizing"
	"github.com/agentwarden/warden/finance/slippage"
	"github.com/agentwarden/warden/finance/tokensafety"
	"github.com/agentwarden/warden/internal/corpustest"
	"github.com/agentwarden/warden/pipeline"
	"github.com/agentwarden/warden/safety"
)

// corpusCase is one line of the shared finance and signing test vectors.
type corpusCase struct {
	Case   string          `json:"case"`
	Input  json.RawMessage `json:"input"`
	Expect string          `json:"expect"`
	Why    string          `json:"why"`
}

type tokenIn struct {
	Symbol  string `json:"symbol"`
	Address string `json:"address"`
}

func (t *tokenIn) ref() string {
	if t == nil {
		return ""
	}
	if t.Address != "" && finance.IsEVMAddress(t.Address) {
		return t.Symbol + ":" + t.Address
	}
	return t.Symbol
}

// financeInput is the part of a case's input the trade stack reads.
type financeInput struct {
	Module     string   `json:"module"`
	Action     string   `json:"action"`
	Chain      string   `json:"chain"`
	Wallet     string   `json:"wallet"`
	TokenIn    *tokenIn `json:"token_in"`
	TokenOut   *tokenIn `json:"token_out"`
	Token      *tokenIn `json:"token"`
	KillSwitch bool     `json:"kill_switch"`
	State      struct {
		DailySpent float64            `json:"daily_spent_usd_24h"`
		Exposure   map[string]float64 `json:"exposure_usd"`
		Portfolio  float64            `json:"portfolio_value_usd"`
	} `json:"state"`
	Simulation *struct {
		OK          bool    `json:"ok"`
		Error       string  `json:"error"`
		Tolerance   float64 `json:"slippage_tolerance"`
		OutputRatio float64 `json:"output_value_ratio"`
	} `json:"simulation"`
	Recipient  string   `json:"recipient"`
	To         string   `json:"to"`
	AmountUSD  float64  `json:"amount_usd"`
	MarginUSD  float64  `json:"margin_usd"`
	Leverage   *float64 `json:"leverage"`
	Market     string   `json:"market"`
	Side       string   `json:"side"`
	ExitReason string   `json:"exit_reason"`
	Allowlist  []string `json:"allowlist"`
	Sizing     *struct {
		Mode     string  `json:"mode"`
		USD      float64 `json:"usd"`
		Fraction float64 `json:"fraction"`
		Equity   float64 `json:"equity_usd"`
		WinProb  float64 `json:"win_prob"`
		Payoff   float64 `json:"payoff_ratio"`
	} `json:"sizing"`
	Concurrency *struct {
		InFlight []struct {
			AmountUSD float64 `json:"amount_usd"`
		} `json:"other_in_flight"`
	} `json:"concurrency"`
	Policy *struct {
		Testnets bool `json:"testnets_enabled"`
	} `json:"policy"`
}

// elsewhere lists the finance cases another package runs: the stop-loss
// evaluation (finance/stoploss) and the ERC-20 approval decoding, which is
// signing/service's TestCorpus. Every other finance case runs here, and a
// new case that fits neither fails this test until it is placed.
func elsewhere(in financeInput) string {
	switch {
	case in.Action == "monitor.evaluate_exit":
		return "finance/stoploss"
	case strings.HasPrefix(in.Action, "approve."):
		return "signing/service TestCorpus (approval calldata)"
	}
	return ""
}

func dollars(f float64) warden.USD { return finance.USDOf(f) }

// TestCorpus runs every finance case of the shared corpus through the
// global stages and the FullRiskManager, as the gate's pipeline does, with
// the case's state standing in for the ledger, the portfolio and the
// backend's simulation.
func TestCorpus(t *testing.T) {
	ran := 0
	for _, c := range corpustest.Load[corpusCase](t, "finance-signing-cases.jsonl") {
		var in financeInput
		if err := json.Unmarshal(c.Input, &in); err != nil {
			t.Fatalf("%s: %v", c.Case, err)
		}
		if in.Module != "finance" {
			continue // the signing service's cases
		}
		if where := elsewhere(in); where != "" {
			t.Logf("%s: run by %s", c.Case, where)
			continue
		}
		ran++
		t.Run(c.Case, func(t *testing.T) {
			req, p := build(t, in)
			d := p.Decide(context.Background(), req)
			if string(d.Verdict.String()) != c.Expect {
				t.Errorf("verdict %v by %s (%s); want %s: %s", d.Verdict, d.Rule, d.Reason, c.Expect, c.Why)
				for _, s := range d.Stages {
					t.Logf("  %s: %v %s %s %s", s.Stage, s.Verdict, s.Rule, s.Reason, s.Error)
				}
			}
		})
	}
	if ran < 50 {
		t.Fatalf("ran %d finance cases; the corpus has more", ran)
	}
}

// build turns a case into a request and the pipeline that judges it.
func build(t *testing.T, in financeInput) (*warden.Request, *pipeline.Pipeline) {
	t.Helper()
	req := &warden.Request{Capability: warden.CapTrade, Params: map[string]json.RawMessage{}}
	param := func(k string, v any) {
		b, _ := json.Marshal(v)
		req.Params[k] = b
	}
	param("chain", in.Chain)
	amount := in.AmountUSD
	switch in.Action {
	case "trade.buy":
		req.Action, req.Resource = finance.Buy, in.TokenOut.ref()
		param("token_in", in.TokenIn.ref())
	case "trade.sell", "monitor.exit_order":
		req.Action, req.Resource = finance.Sell, in.TokenIn.ref()
		param("token_out", in.TokenOut.ref())
		if in.Action == "monitor.exit_order" {
			req.Protective, req.RequestedBy = true, "stoploss"
			param("exit_reason", in.ExitReason)
		}
	case "perp.open":
		req.Action, req.Resource = finance.PerpOpen, in.Market
		amount = in.MarginUSD
		if in.Leverage != nil {
			param("leverage", *in.Leverage)
		}
		param("side", in.Side)
	case "transfer.erc20":
		req.Action, req.Resource = finance.Transfer, in.Token.ref()
		param("recipient", in.To)
	default:
		t.Fatalf("action %q has no mapping", in.Action)
	}
	param("amount_usd", fmt.Sprintf("%.2f", amount))
	if in.Recipient != "" && in.Action != "transfer.erc20" {
		param("recipient", in.Recipient)
	}
	if in.Simulation != nil && in.Simulation.Tolerance != 0 {
		param("max_slippage", in.Simulation.Tolerance)
	}
	if s := in.Sizing; s != nil && s.Mode == sizing.HalfKelly {
		param("win_probability", s.WinProb)
		param("payoff_ratio", s.Payoff)
	}

	res := finance.Resolver{Testnets: in.Policy != nil && in.Policy.Testnets}
	const perTx = 500
	pol := sizing.Policy{Strategy: sizing.FixedUSD, FixedAmount: dollars(perTx), Fraction: 0.02, KellyMultiplier: 0.5, PerTxMax: dollars(perTx)}
	equity := dollars(in.State.Portfolio)
	if s := in.Sizing; s != nil {
		pol.Strategy = s.Mode
		pol.FixedAmount = dollars(s.USD)
		if s.Fraction > 0 {
			pol.Fraction = s.Fraction
		}
		if s.Equity > 0 {
			equity = dollars(s.Equity)
		}
	}
	snap := snapshotOf(in)
	m := &FullRiskManager{
		TokenSafety: tokensafety.Stage{Resolver: res},
		Recipients:  recipients.Stage{Wallet: in.Wallet, Allowlist: in.Allowlist, Resolver: res},
		Sizing:      sizing.Stage{Policy: pol, Equity: func(context.Context) (warden.USD, error) { return equity, nil }},
		Exposure: exposure.Stage{Limits: exposure.Limits{MaxPerToken: dollars(5000), MaxPerChain: dollars(15000), MaxClassFraction: 0.40, MaxTotal: dollars(50000)},
			State: func(context.Context) (exposure.Snapshot, error) { return snap, nil }, Resolver: res},
		Slippage: slippage.Stage{Policy: finance.DefaultSlippage(), Simulator: simulator(in), Resolver: res},
	}
	if m.Recipients.Wallet == "" {
		m.Recipients.Wallet = "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23"
	}
	spent := in.State.DailySpent
	if in.Concurrency != nil {
		for _, o := range in.Concurrency.InFlight {
			spent += o.AmountUSD // reserved by the request that won the race
		}
	}
	ledger := spentLedger(dollars(spent))
	p := pipeline.New(pipeline.Config{
		Global: safety.Stages(safety.PolicyIntegrity{}, safety.KillSwitch{Active: in.KillSwitch},
			safety.SpendCap{Cap: dollars(2000), Ledger: ledger}, safety.TxMax{Max: dollars(perTx)}, safety.TierGate{}),
		Capabilities: map[string][]warden.Stage{warden.CapTrade: m.Stages()},
	})
	return req, p
}

// snapshotOf reads the case's exposure map ("token:ETH", "chain:base",
// "class:major", "total"; per-chain token entries like "token:ETH@base" are
// breakdowns and are left out).
func snapshotOf(in financeInput) exposure.Snapshot {
	e := finance.Exposure{ByAsset: map[string]warden.USD{}, ByChain: map[string]warden.USD{}, ByClass: map[finance.AssetClass]warden.USD{}}
	for k, v := range in.State.Exposure {
		kind, key, _ := strings.Cut(k, ":")
		switch {
		case k == "total":
			e.Total = dollars(v)
		case kind == "token" && !strings.Contains(key, "@"):
			e.ByAsset[key] = dollars(v)
		case kind == "chain":
			e.ByChain[key] = dollars(v)
		case kind == "class":
			class := finance.AssetClass(key)
			if key == "memecoin" {
				class = finance.ClassMeme
			}
			e.ByClass[class] = dollars(v)
		}
	}
	return exposure.Snapshot{Exposure: e, Value: dollars(in.State.Portfolio)}
}

type simFunc func(context.Context, finance.SwapQuote) (finance.Simulation, error)

func (f simFunc) Simulate(ctx context.Context, q finance.SwapQuote) (finance.Simulation, error) {
	return f(ctx, q)
}

// simulator answers with the case's simulation, or fails like a backend
// that could not simulate.
func simulator(in financeInput) slippage.Simulator {
	return simFunc(func(_ context.Context, q finance.SwapQuote) (finance.Simulation, error) {
		s := in.Simulation
		if s == nil || !s.OK {
			return finance.Simulation{}, fmt.Errorf("simulation unavailable")
		}
		ratio := s.OutputRatio
		if ratio == 0 || math.IsNaN(ratio) {
			ratio = 1
		}
		return finance.Simulation{ExpectedOut: 1, PriceImpact: 0, InputValueUSD: q.AmountUSD, OutputValueUSD: dollars(q.AmountUSD.Dollars() * ratio)}, nil
	})
}

type spentLedger warden.USD

func (s spentLedger) SpentSince(context.Context, time.Time) (warden.USD, error) {
	return warden.USD(s), nil
}
