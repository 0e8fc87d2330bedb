package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/finance/exposure"
	"github.com/agentwarden/warden/finance/paper"
	"github.com/agentwarden/warden/finance/recipients"
	"github.com/agentwarden/warden/finance/risk"
	"github.com/agentwarden/warden/finance/sizing"
	"github.com/agentwarden/warden/finance/slippage"
	"github.com/agentwarden/warden/finance/stoploss"
	"github.com/agentwarden/warden/finance/tokensafety"
	"github.com/agentwarden/warden/gate"
	"github.com/agentwarden/warden/httpexchange"
)

// NewBackend builds the trading backend the policy names: the embedded
// paper exchange (persisted in the home's database) or a REST venue.
func NewBackend(home Home, p *config.Policy, store Store, now func() time.Time) (finance.Backend, error) {
	t := p.Trade
	switch t.Backend {
	case "", "paper":
		var prices paper.PriceSource
		if t.Paper.PricesFile != "" {
			prices = &paper.FilePrices{Path: expandHome(t.Paper.PricesFile)}
		} else {
			// The demo path starts over each day (UTC), so it stays near its
			// start prices, and a process walks at most a day of steps.
			y, m, d := now().UTC().Date()
			prices = &paper.PathPrices{Seed: t.Paper.Seed, Start: paper.DefaultStartPrices(), Step: t.Paper.Step,
				Volatility: t.Paper.Volatility, Epoch: time.Date(y, m, d, 0, 0, 0, 0, time.UTC)}
		}
		return &paper.Exchange{Store: store.PaperBook(), Prices: prices, Wallet: Wallet(home, p),
			StartingCash: t.Paper.StartingCash, PoolDepth: t.Paper.PoolDepth, Now: now, NewID: NewID}, nil
	case "http":
		c := httpexchange.Config{BaseURL: t.HTTP.BaseURL, Timeout: t.HTTP.Timeout, Endpoints: httpEndpoints(t.HTTP.Endpoints)}
		if t.HTTP.TokenEnv != "" {
			c.Token = os.Getenv(t.HTTP.TokenEnv)
			if c.Token == "" {
				return nil, warden.Errorf(warden.EInvalid, "trade.http.tokenEnv names %s, which is not set", t.HTTP.TokenEnv).
					WithHint("export the venue's token in that variable before starting warden")
			}
		}
		b, err := httpexchange.New(c)
		if err != nil {
			return nil, warden.Errorf(warden.EInvalid, "the trade.http backend cannot be used").Wrap(err).WithHint("fix the trade section: `warden config validate`")
		}
		return b, nil
	}
	return nil, warden.Errorf(warden.EInvalid, "unknown trading backend %q", t.Backend).WithHint("set trade.backend to paper or http")
}

func httpEndpoints(m map[string]string) httpexchange.Endpoints {
	return httpexchange.Endpoints{Price: m["price"], Portfolio: m["portfolio"], Simulate: m["simulate"], Swap: m["swap"],
		PerpOpen: m["perpOpen"], PerpClose: m["perpClose"], Transfer: m["transfer"]}
}

// Wallet is the trading wallet: trade.wallet, or for the paper exchange an
// address derived from the home, so each home has its own paper wallet.
func Wallet(home Home, p *config.Policy) string {
	if p.Trade.Wallet != "" {
		return p.Trade.Wallet
	}
	sum := sha256.Sum256([]byte("warden paper wallet\x00" + home.Abs()))
	return "0x" + hex.EncodeToString(sum[:20])
}

func expandHome(path string) string {
	if path == "~" || strings.HasPrefix(path, "~/") {
		if u, err := os.UserHomeDir(); err == nil {
			return filepath.Join(u, path[1:])
		}
	}
	return path
}

// failedBackend stands in for a backend that could not be built: every
// call returns why, so every trade is denied with it.
type failedBackend struct{ err error }

func (f failedBackend) Name() string { return "unavailable" }
func (f failedBackend) Price(context.Context, finance.Token) (finance.Price, error) {
	return finance.Price{}, f.err
}
func (f failedBackend) Portfolio(context.Context) (finance.Portfolio, error) {
	return finance.Portfolio{}, f.err
}
func (f failedBackend) Simulate(context.Context, finance.SwapQuote) (finance.Simulation, error) {
	return finance.Simulation{}, f.err
}
func (f failedBackend) Swap(context.Context, finance.SwapQuote, finance.Clearance) (finance.Fill, error) {
	return finance.Fill{}, f.err
}
func (f failedBackend) OpenPerp(context.Context, finance.PerpOrder, finance.Clearance) (finance.Fill, error) {
	return finance.Fill{}, f.err
}
func (f failedBackend) ClosePerp(context.Context, string, finance.Clearance) (finance.Fill, error) {
	return finance.Fill{}, f.err
}
func (f failedBackend) Transfer(context.Context, finance.TransferOrder, finance.Clearance) (finance.Fill, error) {
	return finance.Fill{}, f.err
}

// backendOrFailed is the policy's backend, or a stand-in that fails every
// call with the reason it could not be built.
func backendOrFailed(home Home, p *config.Policy, store Store, now func() time.Time) finance.Backend {
	b, err := NewBackend(home, p, store, now)
	if err != nil {
		return failedBackend{err}
	}
	return b
}

// RiskManager builds the trade capability's stages for a policy over a
// backend.
func RiskManager(home Home, p *config.Policy, b finance.Backend) *risk.FullRiskManager {
	res := finance.Resolver{Testnets: p.Trade.Testnets}
	portfolio := func(ctx context.Context) (finance.Portfolio, error) { return b.Portfolio(ctx) }
	return &risk.FullRiskManager{
		TokenSafety: tokensafety.Stage{Resolver: res, Allowed: p.Safety.AllowedTokens, Blocked: p.Safety.BlockedTokens},
		Recipients:  recipients.Stage{Wallet: Wallet(home, p), Allowlist: p.Trade.Recipients, Resolver: res},
		Sizing: sizing.Stage{
			Policy: sizing.Policy{Strategy: p.Sizing.Strategy, FixedAmount: p.Sizing.FixedAmount, Fraction: p.Sizing.Fraction,
				KellyMultiplier: p.Sizing.KellyMultiplier, PerTxMax: p.Safety.MaxTransaction},
			Equity: func(ctx context.Context) (warden.USD, error) {
				pf, err := portfolio(ctx)
				return pf.ValueUSD(), err
			},
		},
		Exposure: exposure.Stage{
			Limits: exposure.Limits{MaxPerToken: p.Exposure.MaxPerToken, MaxPerChain: p.Exposure.MaxPerChain,
				MaxClassFraction: p.Exposure.MaxPerAssetClassFraction, MaxTotal: p.Exposure.MaxTotal},
			State: func(ctx context.Context) (exposure.Snapshot, error) {
				pf, err := portfolio(ctx)
				return exposure.FromPortfolio(&pf), err
			},
			Resolver: res,
		},
		Slippage: slippage.Stage{Policy: slippagePolicy(p), Simulator: b, Resolver: res},
	}
}

func slippagePolicy(p *config.Policy) finance.SlippagePolicy {
	s := p.Slippage
	return finance.SlippagePolicy{SmallMax: s.SmallMax, MidMax: s.MidMax, LargeMax: s.LargeMax, SmallBelow: s.SmallBelow,
		LargeAbove: s.LargeAbove, MinOutputRatio: s.MinOutputRatio, MaxLeverage: s.MaxLeverage}
}

// Backend is the home's trading backend, built once.
func (a *App) Backend() (finance.Backend, error) {
	a.tradeOnce.Do(func() { a.backend, a.backendErr = NewBackend(a.Home, a.Policy, a.Store, a.Now) })
	return a.backend, a.backendErr
}

// Trader is the one path that executes trades: through a.Gate, whose
// pipeline runs the FullRiskManager, onto the home's backend.
func (a *App) Trader() (*finance.Trader, error) {
	b, err := a.Backend()
	if err != nil {
		return nil, err
	}
	return a.traderFor(a.Policy, a.Gate, b), nil
}

func (a *App) traderFor(p *config.Policy, g *gate.Gate, b finance.Backend) *finance.Trader {
	return &finance.Trader{
		Backend: b,
		Decide: func(ctx context.Context, req *warden.Request, opt finance.DecideOptions) (warden.Decision, error) {
			// An ask opens an approval a human can answer; the caller waits
			// for it only with Wait (else a once grant lets a retry through).
			co := gate.CheckOptions{DryRun: opt.DryRun, Approval: "trade"}
			if req.Protective {
				co.Approval = "stoploss"
			}
			d, err := g.CheckWith(ctx, req, co)
			if err == nil && opt.Wait && d.Verdict == warden.Ask && d.ApprovalID != "" {
				d, err = g.Await(ctx, req, d)
			}
			return d, err
		},
		Release: func(ctx context.Context, traceID, reason string) error {
			return a.Store.Release(ctx, traceID, reason, a.Now())
		},
		Result: func(ctx context.Context, traceID string, sev warden.Severity, summary string, meta map[string]any) error {
			m, _ := json.Marshal(meta)
			return appendEvent(ctx, g.Store, &warden.SecurityEvent{ID: NewID(), TraceID: traceID, CreatedAt: a.Now(),
				Type: warden.EventActionResult, Severity: sev}, summary, m)
		},
		Slippage: slippagePolicy(p),
		Resolver: finance.Resolver{Testnets: p.Trade.Testnets},
	}
}

// StopLoss is the stop-loss monitor over the home's backend, closing
// positions through the Trader (so through every stage).
func (a *App) StopLoss(wait bool) (*stoploss.Monitor, error) {
	t, err := a.Trader()
	if err != nil {
		return nil, err
	}
	return a.monitorFor(t, wait), nil
}

func (a *App) monitorFor(t *finance.Trader, wait bool) *stoploss.Monitor {
	return a.monitorWith(a.Policy, t, wait)
}

func (a *App) monitorWith(p *config.Policy, t *finance.Trader, wait bool) *stoploss.Monitor {
	sl := p.StopLoss
	m := &stoploss.Monitor{Backend: t.Backend, Rules: a.Store.StopLoss(), Trader: t, MaxPriceAge: sl.MaxPriceAge,
		MinOutputRatio: p.Slippage.MinOutputRatio, Wait: wait, Now: a.Now, Log: a.Log,
		Escalate: func(ctx context.Context, target, reason string) error {
			m, _ := json.Marshal(map[string]any{"target": target})
			return a.Event(ctx, EventStopLossEscalated, warden.SevWarn, fmt.Sprintf("stop-loss needs a human for %s: %s", target, reason), m)
		}}
	if d := sl.Default; d != nil {
		m.Default = &stoploss.Rule{Kind: stoploss.Kind(d.Type), ThresholdPct: d.ThresholdPct, TakeProfitPct: d.TakeProfitPct, MaxAge: d.MaxAge, By: "policy"}
	}
	return m
}

// EventStopLossEscalated records a stop-loss outcome a human must decide
// (a stale price, or an exit that would fill too far below its value).
const EventStopLossEscalated = "stoploss_escalated"
