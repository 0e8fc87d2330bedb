package stoploss

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/internal/clip"
)

// RequestedBy is the RequestedBy of every exit the Monitor sends.
const RequestedBy = "stoploss"

// DefaultBy is the By of a rule the Monitor records for a holding from its
// Default rule.
const DefaultBy = "stoploss.default"

// DefaultRetry is how long the Monitor waits, after an exit that did not
// execute, before it sends that target's exit again.
const DefaultRetry = 5 * time.Minute

// Monitor watches the portfolio and closes what its rules say to close.
// Every exit is a warden.Request (a sell of a holding for USDC to the own
// wallet, or a perp_close of a position) marked Protective and sent through
// Trader.Execute: the same gate, stages, audit log and approvals as the
// agent's own orders; the only exemptions are the ones the gate grants a
// protective exit. Backend, Rules and Trader are required; every other
// field's zero value is described beside it.
type Monitor struct {
	Backend finance.Backend
	Rules   Store
	Trader  *finance.Trader
	// Default applies to holdings and positions that have no rule of their
	// own; nil applies none. A position uses it as it is (its entry is the
	// position's). A holding, which has no entry of its own, gets a copy
	// recorded in Rules (By DefaultBy) the first time the Monitor sees it
	// with a fresh price: its entry is that price, its clock starts then.
	// The copy is removed once the holding leaves the portfolio.
	Default *Rule
	// MaxPriceAge is how old a price may be; 0 is DefaultMaxPriceAge.
	MaxPriceAge time.Duration
	// MinOutputRatio is the least a holding's exit may return, at oracle
	// prices, relative to its value; 0 is DefaultMinOutputRatio.
	MinOutputRatio float64
	// Wait lets an exit the gate answers with ask wait for a human's answer
	// (see finance.DecideOptions). Without it the ask is parked as an
	// approval and RunOnce moves on.
	Wait bool
	// Retry is how long to wait after an exit that did not execute (denied,
	// asked, or failed) before sending that target's exit again, unless the
	// target holds in between; 0 is DefaultRetry.
	Retry time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Escalate records an outcome a human must decide (a warn event); nil
	// ignores escalations. It is called once per target and trigger until
	// the target's outcome changes, not on every run.
	Escalate func(ctx context.Context, target, reason string) error
	// Log receives what the Monitor did and why it could not; nil discards.
	Log *slog.Logger

	run       sync.Mutex           // one RunOnce at a time
	mu        sync.Mutex           // guards escalated and retryAt
	escalated map[string]string    // target → trigger last escalated
	retryAt   map[string]time.Time // target → when its exit may be sent again
}

// Result is what RunOnce did about one target.
type Result struct {
	// Target is a holding's "chain:SYMBOL" or a position's id.
	Target string
	// Rule is the id of the rule whose outcome decided; empty for a
	// Default without an id, applied to a position.
	Rule    string
	Outcome Outcome
	// Decision is the gate's answer to the exit; nil when none was sent.
	Decision *warden.Decision
	// Fill is what the exit executed; nil when nothing was.
	Fill *finance.Fill
	// Deferred is true when the outcome is Exit but the target's last exit
	// did not execute less than Retry ago, so none was sent this time.
	Deferred bool
	// Err is what went wrong for this target (no price, an exit that was
	// allowed but failed, a mark not stored); the other fields say how far
	// it got.
	Err error
}

// HoldingTarget is the Target of a holding of token t: "chain:SYMBOL".
func HoldingTarget(t finance.Token) string { return t.Chain.Name + ":" + t.Symbol }

// target is one holding or position the Monitor watches.
type target struct {
	key      string
	token    finance.Token
	holding  *finance.Holding
	position *finance.Position
}

// watched lists the portfolio's non-stable holdings and its positions.
func watched(pf finance.Portfolio) []target {
	var out []target
	for i := range pf.Holdings {
		h := &pf.Holdings[i]
		if h.Token.Class == finance.ClassStablecoin || !(h.Amount > 0) || h.ValueUSD <= 0 {
			continue
		}
		out = append(out, target{key: HoldingTarget(h.Token), token: h.Token, holding: h})
	}
	for i := range pf.Positions {
		p := &pf.Positions[i]
		if p.ID == "" {
			continue
		}
		out = append(out, target{key: p.ID, token: p.Token, position: p})
	}
	return out
}

func (m *Monitor) check() error {
	if m == nil || m.Backend == nil || m.Rules == nil || m.Trader == nil {
		return warden.Errorf(warden.EInternal, "the stop-loss monitor is not configured (it needs a backend, a rule store and a trader), so it watches nothing")
	}
	if m.Default != nil {
		d := *m.Default
		if d.Target == "" {
			d.Target = "default"
		}
		if err := d.Validate(); err != nil {
			return fmt.Errorf("the default stop-loss rule: %w", err)
		}
	}
	return nil
}

// RunOnce reads the portfolio, the rules and the marks, and evaluates every
// watched target: each of its rules (or Default) against the current price,
// raising its high-water mark as the price rises. A target exits at most
// once per run: when any rule says Exit, the exit of the first such rule is
// sent through Trader.Execute (a holding's exit is quoted first, and a bad
// quote escalates instead). Otherwise, when any rule escalates, Escalate is
// called. After an exit fills, the target's rules are removed: they were
// for the holding or position that is now closed.
//
// An error means RunOnce could not read what it needs and evaluated
// nothing; a problem with one target is in its Result's Err.
func (m *Monitor) RunOnce(ctx context.Context) ([]Result, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	m.run.Lock()
	defer m.run.Unlock()
	pf, err := m.Backend.Portfolio(ctx)
	if err != nil {
		return nil, fmt.Errorf("stop-loss: read the portfolio: %w", err)
	}
	rules, err := m.Rules.Rules(ctx)
	if err != nil {
		return nil, fmt.Errorf("stop-loss: read the rules: %w", err)
	}
	marks, err := m.Rules.Marks(ctx)
	if err != nil {
		return nil, fmt.Errorf("stop-loss: read the high-water marks: %w", err)
	}
	if marks == nil {
		marks = map[string]float64{}
	}
	targets := watched(pf)
	m.retire(ctx, rules, targets, pf)
	var results []Result
	for _, t := range targets {
		if err := ctx.Err(); err != nil {
			return results, err
		}
		var own []Rule
		for _, r := range rules {
			if strings.EqualFold(r.Target, t.key) {
				own = append(own, r)
			}
		}
		if len(own) == 0 && m.Default == nil {
			continue
		}
		results = append(results, m.watch(ctx, t, own, marks))
	}
	return results, nil
}

// retire removes the Default copies of holdings no longer in the portfolio,
// so that buying the token again starts from a new entry. A portfolio with
// no holdings at all (not even a stablecoin) is more likely a backend's
// glitch than an emptied wallet, and retires nothing.
func (m *Monitor) retire(ctx context.Context, rules []Rule, targets []target, pf finance.Portfolio) {
	if len(pf.Holdings) == 0 {
		return
	}
	present := map[string]bool{}
	for _, t := range targets {
		present[strings.ToLower(t.key)] = true
	}
	for _, r := range rules {
		if r.By != DefaultBy || present[strings.ToLower(r.Target)] {
			continue
		}
		if err := m.Rules.RemoveRule(ctx, r.ID); err != nil && warden.ErrorCodeOf(err) != warden.ENotFound {
			m.log().Warn("stop-loss: could not remove the default rule of a holding that is gone", "target", r.Target, "rule", r.ID, "error", err)
			continue
		}
		m.log().Info("stop-loss: removed the default rule of a holding that is gone", "target", r.Target, "rule", r.ID)
	}
}

// watch evaluates one target's rules and acts on the outcome.
func (m *Monitor) watch(ctx context.Context, t target, rules []Rule, marks map[string]float64) Result {
	res := Result{Target: t.key}
	now := m.now()
	price, err := m.Backend.Price(ctx, t.token)
	if err != nil {
		res.Err = fmt.Errorf("price %s: %w", t.token, err)
		res.Outcome = Outcome{Action: Escalate, Trigger: TriggerStalePrice,
			Reason: fmt.Sprintf("the backend gave no price for %s, so its stop cannot be checked: %v", t.token, clip.String(err.Error(), 40))}
		m.escalate(ctx, t.key, &res)
		return res
	}
	stored := make([]string, 0, len(rules))
	for _, r := range rules {
		stored = append(stored, r.ID)
	}
	if len(rules) == 0 {
		r, id, err := m.defaultFor(ctx, t, price, now)
		if err != nil {
			res.Err = err
		}
		if id != "" {
			stored = append(stored, id)
		}
		rules = []Rule{r}
	}

	short := t.position != nil && t.position.Side == finance.Short
	best, bestOb := -1, Observation{}
	var outs []Outcome
	for i, r := range rules {
		ob := m.observation(t, r, price, now)
		key := MarkKey(t.key, r, t.position != nil)
		old, had := marks[key]
		if had {
			ob.HighWater = markValue(old, short)
		}
		out := Evaluate(r, ob)
		if usableMark(out.HighWater) {
			if v := markValue(out.HighWater, short); !had || v > old {
				if err := m.Rules.SetMark(ctx, key, v); err != nil {
					res.Err = errors.Join(res.Err, fmt.Errorf("record the high-water mark of %s: %w", key, err))
				} else {
					marks[key] = v
				}
			}
		}
		outs = append(outs, out)
		if best < 0 || rank(out.Action) > rank(outs[best].Action) {
			best, bestOb = i, ob
		}
	}
	res.Rule, res.Outcome = rules[best].ID, outs[best]

	var amount warden.USD
	if res.Outcome.Action == Exit && t.holding != nil {
		amount = finance.USDOf(t.holding.Amount * price.USD)
		res.Outcome = m.quoteExit(ctx, t, rules[best], bestOb, res.Outcome, amount)
	}
	switch res.Outcome.Action {
	case Exit:
		m.clearEscalation(t.key)
		m.exit(ctx, t, amount, stored, &res)
	case Escalate:
		m.escalate(ctx, t.key, &res)
	default:
		// Back to holding: a later trigger is reported and sent afresh.
		m.clearEscalation(t.key)
		m.mu.Lock()
		delete(m.retryAt, t.key)
		m.mu.Unlock()
	}
	return res
}

// defaultFor applies Default to t. For a holding with a usable, fresh
// price it records a copy in Rules and returns the copy's id.
func (m *Monitor) defaultFor(ctx context.Context, t target, price finance.Price, now time.Time) (Rule, string, error) {
	r := *m.Default
	r.Target = t.key
	if t.position != nil {
		return r, "", nil
	}
	r.ID, r.CreatedAt, r.By, r.Entry = NewID(), now, DefaultBy, price.USD
	if !usableMark(price.USD) || price.At.IsZero() || now.Sub(price.At) > m.maxPriceAge() {
		// Evaluated as it is, it escalates; it is recorded once the price is usable.
		r.ID, r.Entry = "", 0
		return r, "", nil
	}
	if err := m.Rules.AddRule(ctx, r); err != nil {
		r.ID = "" // not stored: its mark is kept under the target alone
		return r, "", fmt.Errorf("record the default rule for %s: %w", t.key, err)
	}
	m.log().Info("stop-loss: applied the default rule to a holding", "target", t.key, "rule", r.ID, "entry", price.USD)
	return r, r.ID, nil
}

func (m *Monitor) observation(t target, r Rule, price finance.Price, now time.Time) Observation {
	ob := Observation{Current: price.USD, PriceAt: price.At, Now: now, MaxPriceAge: m.maxPriceAge(), MinOutputRatio: m.minOutputRatio()}
	if p := t.position; p != nil {
		ob.Entry, ob.Side, ob.Leverage, ob.OpenedAt = p.EntryPrice, p.Side, p.Leverage, p.OpenedAt
	} else {
		ob.Entry, ob.Side, ob.OpenedAt = r.Entry, finance.Long, r.CreatedAt
	}
	return ob
}

// rank orders actions by precedence within one target: an exit on good
// data beats an escalation from another rule, which beats a hold.
func rank(a Action) int {
	switch a {
	case Exit:
		return 2
	case Escalate:
		return 1
	}
	return 0
}

// quoteExit simulates a holding's exit into USDC and re-evaluates the exit
// with the quote: a fill below MinOutputRatio, or no quote at all, escalates.
func (m *Monitor) quoteExit(ctx context.Context, t target, r Rule, ob Observation, out Outcome, amount warden.USD) Outcome {
	fail := func(why string) Outcome {
		out.Action, out.Trigger = Escalate, TriggerBadFill
		out.Reason = fmt.Sprintf("%s, but %s", out.Reason, why)
		return out
	}
	if amount <= 0 {
		return fail("the holding is worth $0 at that price, so there is nothing to sell")
	}
	res := m.Trader.Resolver
	chain, err := res.Chain(t.token.Chain.Name)
	if err != nil {
		return fail("its chain does not resolve: " + err.Error())
	}
	quote, err := res.Token(chain, finance.TokenRef{Symbol: finance.DefaultQuote})
	if err != nil {
		return fail("there is no canonical " + finance.DefaultQuote + " on " + chain.Name + " to sell into")
	}
	sim, err := m.Backend.Simulate(ctx, finance.SwapQuote{In: t.token, Out: quote, AmountUSD: amount, MaxSlippage: m.Trader.Slippage.Tolerance(amount)})
	if err != nil {
		return fail("the exit could not be quoted (" + clip.String(err.Error(), 40) + "): a human decides whether to sell blind or hold")
	}
	ob.ExitSim = &sim
	return Evaluate(r, ob)
}

// exit sends t's exit through the gate, unless its last one did not
// execute less than Retry ago.
func (m *Monitor) exit(ctx context.Context, t target, amount warden.USD, stored []string, res *Result) {
	now := m.now()
	m.mu.Lock()
	until, waiting := m.retryAt[t.key]
	m.mu.Unlock()
	if waiting && now.Before(until) {
		res.Deferred = true
		return
	}
	req := exitRequest(t, amount, res.Outcome)
	ex, err := m.Trader.Execute(ctx, req, finance.DecideOptions{Wait: m.Wait})
	if err == nil || ex.Decision.TraceID != "" {
		d := ex.Decision
		res.Decision = &d
	}
	res.Fill = ex.Fill
	if err != nil {
		res.Err = errors.Join(res.Err, fmt.Errorf("exit %s: %w", t.key, err))
	}
	log := m.log().With("target", t.key, "trigger", res.Outcome.Trigger, "action", req.Action)
	if res.Decision != nil {
		log = log.With("verdict", res.Decision.Verdict.String(), "rule", res.Decision.Rule, "trace_id", res.Decision.TraceID)
	}
	m.mu.Lock()
	if ex.Fill != nil {
		delete(m.retryAt, t.key)
	} else {
		if m.retryAt == nil {
			m.retryAt = map[string]time.Time{}
		}
		m.retryAt[t.key] = now.Add(m.retry())
	}
	m.mu.Unlock()
	if ex.Fill == nil {
		log.Warn("stop-loss: the exit did not execute; it will be sent again after the retry delay", "error", err, "retry", m.retry())
		return
	}
	log.Info("stop-loss: exit executed", "value_usd", ex.Fill.ValueUSD.String())
	for _, id := range stored {
		if err := m.Rules.RemoveRule(ctx, id); err != nil && warden.ErrorCodeOf(err) != warden.ENotFound {
			res.Err = errors.Join(res.Err, fmt.Errorf("remove rule %s after the exit: %w", id, err))
		}
	}
}

// exitRequest is the protective order that closes t.
func exitRequest(t target, amount warden.USD, out Outcome) *warden.Request {
	params := map[string]json.RawMessage{
		finance.ParamChain:      jsonString(t.token.Chain.Name),
		finance.ParamExitReason: jsonString(out.Trigger),
	}
	req := &warden.Request{Capability: warden.CapTrade, Params: params, Context: out.Reason,
		RequestedBy: RequestedBy, Autonomous: true, Protective: true}
	if p := t.position; p != nil {
		req.Action, req.Resource = finance.PerpClose, p.Token.Symbol
		if req.Resource == "" {
			req.Resource = p.Token.AssetID
		}
		params[finance.ParamPosition] = jsonString(p.ID)
		return req
	}
	req.Action, req.Resource = finance.Sell, t.token.Symbol
	if t.token.Address != "" {
		req.Resource = t.token.Symbol + ":" + t.token.Address
	}
	params[finance.ParamAmountUSD] = json.RawMessage(amount.String())
	return req
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s) // a string always marshals
	return b
}

// escalate reports res's outcome through Escalate, once per target and
// trigger.
func (m *Monitor) escalate(ctx context.Context, key string, res *Result) {
	trig := res.Outcome.Trigger
	m.mu.Lock()
	done := m.escalated[key] == trig
	m.mu.Unlock()
	if done {
		return
	}
	m.log().Warn("stop-loss: a human must decide", "target", key, "trigger", trig, "reason", res.Outcome.Reason)
	if m.Escalate != nil {
		if err := m.Escalate(ctx, key, res.Outcome.Reason); err != nil {
			res.Err = errors.Join(res.Err, fmt.Errorf("escalate %s: %w", key, err))
			return // not recorded: tried again next run
		}
	}
	m.mu.Lock()
	if m.escalated == nil {
		m.escalated = map[string]string{}
	}
	m.escalated[key] = trig
	m.mu.Unlock()
}

func (m *Monitor) clearEscalation(key string) {
	m.mu.Lock()
	delete(m.escalated, key)
	m.mu.Unlock()
}

// AddRule completes r and stores it: an id when it has none, CreatedAt now
// when zero, and for a holding's rule without an entry, the entry at the
// current price (which must be fresh). A target that is neither a holding
// nor an open position needs an explicit Entry; without one it is
// ENotFound. It returns the rule as stored.
func (m *Monitor) AddRule(ctx context.Context, r Rule) (Rule, error) {
	if m == nil || m.Backend == nil || m.Rules == nil {
		return r, warden.Errorf(warden.EInternal, "the stop-loss monitor is not configured")
	}
	if r.ID == "" {
		r.ID = NewID()
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = m.now()
	}
	if err := r.Validate(); err != nil {
		return r, err
	}
	if r.Entry == 0 {
		pf, err := m.Backend.Portfolio(ctx)
		if err != nil {
			return r, fmt.Errorf("stop-loss: read the portfolio: %w", err)
		}
		var found *target
		for _, t := range watched(pf) {
			if strings.EqualFold(t.key, r.Target) {
				found = &t
				break
			}
		}
		switch {
		case found == nil:
			return r, warden.Errorf(warden.ENotFound, "no holding or open position %q to set an entry price from", r.Target).
				WithHint(`name a position id or a non-stable holding as "chain:SYMBOL" (such as "base:WETH"), or give the entry price`)
		case found.holding != nil:
			p, err := m.Backend.Price(ctx, found.token)
			if err != nil {
				return r, fmt.Errorf("stop-loss: price %s: %w", found.token, err)
			}
			if !usableMark(p.USD) || p.At.IsZero() || m.now().Sub(p.At) > m.maxPriceAge() {
				return r, warden.Errorf(warden.EUnavailable, "the price of %s is stale or unusable, so it cannot be the rule's entry", found.token).
					WithHint("try again once the backend prices it, or give the entry price")
			}
			r.Entry = p.USD
		}
		r.Target = found.key
	}
	if err := m.Rules.AddRule(ctx, r); err != nil {
		return r, err
	}
	return r, nil
}

// Run calls RunOnce every interval until ctx ends, then returns nil. A
// failed run, a failed target or a panic is logged and the next run goes
// ahead; a non-positive interval is EInvalid.
func (m *Monitor) Run(ctx context.Context, interval time.Duration) error {
	if interval <= 0 {
		return warden.Errorf(warden.EInvalid, "the stop-loss interval is %s; want a positive duration", interval)
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if ctx.Err() != nil {
			return nil
		}
		m.runLogged(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

func (m *Monitor) runLogged(ctx context.Context) {
	defer func() {
		if p := recover(); p != nil {
			m.log().Error("stop-loss: a run panicked; the next run goes ahead", "panic", fmt.Sprint(p))
		}
	}()
	results, err := m.RunOnce(ctx)
	if err != nil {
		if ctx.Err() == nil {
			m.log().Error("stop-loss: the run failed", "error", err)
		}
		return
	}
	for _, r := range results {
		if r.Err != nil {
			m.log().Warn("stop-loss: a target had a problem", "target", r.Target, "action", r.Outcome.Action.String(), "error", r.Err)
		}
	}
}

func (m *Monitor) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func (m *Monitor) maxPriceAge() time.Duration {
	if m.MaxPriceAge > 0 {
		return m.MaxPriceAge
	}
	return DefaultMaxPriceAge
}

func (m *Monitor) minOutputRatio() float64 {
	if m.MinOutputRatio > 0 {
		return m.MinOutputRatio
	}
	return DefaultMinOutputRatio
}

func (m *Monitor) retry() time.Duration {
	if m.Retry > 0 {
		return m.Retry
	}
	return DefaultRetry
}

func (m *Monitor) log() *slog.Logger {
	if m.Log != nil {
		return m.Log
	}
	return slog.New(slog.DiscardHandler)
}
