package finance

import (
	"context"
	"errors"
	"time"

	"github.com/agentwarden/warden"
)

// Backend is a trading venue: it prices tokens, reports the portfolio,
// simulates swaps and executes orders. Implementations: package paper (the
// embedded simulated exchange, the default) and the REST adapter
// (httpexchange).
//
// Errors: a non-nil error means the backend could not answer or did not
// execute; an execution that returns an error moved nothing. Every executing
// method refuses a Clearance that the Trader did not issue (ErrNotCleared),
// so nothing executes without the gate's allow.
type Backend interface {
	// Name is the backend's kind ("paper", "http"), for messages and audit.
	Name() string
	// Price returns the token's current USD price and when it was observed.
	Price(ctx context.Context, t Token) (Price, error)
	// Portfolio returns the wallet's holdings and open positions, valued now.
	Portfolio(ctx context.Context) (Portfolio, error)
	// Simulate quotes a swap without executing it.
	Simulate(ctx context.Context, q SwapQuote) (Simulation, error)
	// Swap executes a swap, filling at no less than q's minimum output.
	Swap(ctx context.Context, q SwapQuote, c Clearance) (Fill, error)
	// OpenPerp opens a perpetual position.
	OpenPerp(ctx context.Context, p PerpOrder, c Clearance) (Fill, error)
	// ClosePerp closes an open position by id.
	ClosePerp(ctx context.Context, positionID string, c Clearance) (Fill, error)
	// Transfer sends tokens from the wallet to a recipient.
	Transfer(ctx context.Context, t TransferOrder, c Clearance) (Fill, error)
}

// ErrNotCleared is returned by a Backend asked to execute without a
// Clearance from the Trader.
var ErrNotCleared = errors.New("execution refused: the order carries no clearance from warden's gate")

// ErrOutcomeUnknown is wrapped by a Backend when an execution was sent but
// no readable answer came back: the venue may have executed it. The Trader
// then keeps the reservation (the money may be gone) and records the
// outcome as unknown, for a human to check.
var ErrOutcomeUnknown = errors.New("the venue may have executed the order: check it before retrying")

// Clearance is the Trader's proof, handed to a Backend's executing methods,
// that the gate allowed this order. Only the Trader issues one; the zero
// value is refused by every backend.
type Clearance struct {
	traceID string
}

// TraceID is the trace id of the decision that allowed the order.
func (c Clearance) TraceID() string { return c.traceID }

// Check returns ErrNotCleared unless the clearance was issued by the Trader.
func (c Clearance) Check() error {
	if c.traceID == "" {
		return ErrNotCleared
	}
	return nil
}

// Price is a token's USD price at a moment.
type Price struct {
	USD float64   `json:"usd"`
	At  time.Time `json:"at"`
}

// Holding is an amount of one token in the wallet.
type Holding struct {
	Token    Token      `json:"token"`
	Amount   float64    `json:"amount"`
	ValueUSD warden.USD `json:"value_usd"`
}

// Position is an open perpetual position.
type Position struct {
	ID         string     `json:"id"`
	Token      Token      `json:"token"` // the market's asset
	Side       string     `json:"side"`  // long or short
	Leverage   float64    `json:"leverage"`
	MarginUSD  warden.USD `json:"margin_usd"`
	Size       float64    `json:"size"` // units of the asset
	EntryPrice float64    `json:"entry_price"`
	OpenedAt   time.Time  `json:"opened_at"`
	// MarkPrice is the current price the position is valued at.
	MarkPrice float64 `json:"mark_price"`
}

// NotionalUSD is the position's exposure at its mark price.
func (p Position) NotionalUSD() warden.USD {
	return usdOf(p.Size * p.MarkPrice)
}

// ValueUSD is the margin plus the unrealised profit or loss, never below 0.
func (p Position) ValueUSD() warden.USD {
	pnl := (p.MarkPrice - p.EntryPrice) * p.Size
	if p.Side == Short {
		pnl = -pnl
	}
	v := p.MarginUSD + usdOf(pnl)
	if v < 0 {
		return 0
	}
	return v
}

// Portfolio is the wallet's state.
type Portfolio struct {
	Wallet    string     `json:"wallet"`
	Holdings  []Holding  `json:"holdings"`
	Positions []Position `json:"positions"`
	At        time.Time  `json:"at"`
}

// ValueUSD is the portfolio's total value: holdings plus positions' values.
func (p *Portfolio) ValueUSD() warden.USD {
	var v warden.USD
	for _, h := range p.Holdings {
		v += h.ValueUSD
	}
	for _, pos := range p.Positions {
		v += pos.ValueUSD()
	}
	return v
}

// SwapQuote asks for a swap of AmountUSD worth of In into Out on Chain.
type SwapQuote struct {
	In, Out   Token
	AmountUSD warden.USD
	// MaxSlippage is the tolerance below the expected output the order
	// accepts: MinOut = ExpectedOut × (1 − MaxSlippage).
	MaxSlippage float64
	// Recipient receives Out; the own wallet when empty.
	Recipient string
}

// Simulation is a backend's quote for a swap.
type Simulation struct {
	// ExpectedOut is the amount of Out the swap is expected to return.
	ExpectedOut float64 `json:"expected_out"`
	// PriceImpact is how far the execution price is from the market price,
	// as a fraction (0.01 is 1 %).
	PriceImpact float64 `json:"price_impact"`
	// InputValueUSD and OutputValueUSD value the input and the expected
	// output at oracle prices.
	InputValueUSD  warden.USD `json:"input_value_usd"`
	OutputValueUSD warden.USD `json:"output_value_usd"`
}

// OutputRatio is the output's value over the input's, at oracle prices.
func (s Simulation) OutputRatio() float64 {
	if s.InputValueUSD <= 0 {
		return 0
	}
	return float64(s.OutputValueUSD) / float64(s.InputValueUSD)
}

// PerpOrder opens a position with MarginUSD at Leverage.
type PerpOrder struct {
	Token     Token
	Side      string
	MarginUSD warden.USD
	Leverage  float64
}

// TransferOrder sends AmountUSD worth of Token to Recipient.
type TransferOrder struct {
	Token     Token
	AmountUSD warden.USD
	Recipient string
}

// Fill is what an execution did.
type Fill struct {
	ID      string    `json:"id"`
	TraceID string    `json:"trace_id"`
	Action  string    `json:"action"`
	At      time.Time `json:"at"`
	// In and Out are the amounts paid and received, in units of their tokens.
	InToken   string     `json:"in_token,omitempty"`
	InAmount  float64    `json:"in_amount,omitempty"`
	OutToken  string     `json:"out_token,omitempty"`
	OutAmount float64    `json:"out_amount,omitempty"`
	Price     float64    `json:"price,omitempty"`
	ValueUSD  warden.USD `json:"value_usd"`
	// Position is the position opened or closed, for perps.
	Position string `json:"position,omitempty"`
}

// usdOf converts a float dollar figure to USD, saturating at ±2^62 and
// mapping NaN to 0.
func usdOf(f float64) warden.USD {
	const limit = float64(1 << 62)
	switch {
	case f != f:
		return 0
	case f*warden.MicrosPerDollar >= limit:
		return warden.USD(1 << 62)
	case f*warden.MicrosPerDollar <= -limit:
		return -warden.USD(1 << 62)
	}
	return warden.USD(f*warden.MicrosPerDollar + copysignHalf(f))
}

func copysignHalf(f float64) float64 {
	if f < 0 {
		return -0.5
	}
	return 0.5
}

// USDOf converts a float dollar figure (a price times an amount) to USD,
// rounding to the micro-dollar; NaN is 0 and huge values saturate.
func USDOf(f float64) warden.USD { return usdOf(f) }
