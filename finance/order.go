// Package finance is the trade capability's domain: an Order parsed from a
// warden.Request, the trading Backend interface that prices, simulates and
// executes orders, and the Trader, the one path that executes an order (only
// after the gate, and with it every stage of the FullRiskManager, allowed it).
//
// The stages that judge an order live in their own packages below this one
// (tokens and tokensafety, recipients, sizing, exposure, slippage, risk), the
// stop-loss monitor in stoploss, and the embedded paper exchange in paper.
// Money is warden.USD (integer micro-dollars); token quantities and prices are
// float64, which is what exchanges quote.
package finance

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/clip"
)

// Trade actions (warden.Request.Action of a trade request).
const (
	Buy       = "buy"       // buy Token with TokenIn (default USDC)
	Sell      = "sell"      // sell Token for TokenOut (default USDC)
	Swap      = "swap"      // swap TokenIn for Token
	PerpOpen  = "perp_open" // open a perpetual position on Token's market
	PerpClose = "perp_close"
	Transfer  = "transfer" // send Token to Recipient
)

// Actions lists the trade actions, in the order the CLI shows them.
var Actions = []string{Buy, Sell, Swap, PerpOpen, PerpClose, Transfer}

// DefaultQuote is the token a buy pays with and a sell is paid in when the
// request does not say.
const DefaultQuote = "USDC"

// Request parameters of a trade.
const (
	ParamChain          = "chain"
	ParamAmountUSD      = warden.ParamAmountUSD
	ParamTokenIn        = "token_in"
	ParamTokenOut       = "token_out"
	ParamLeverage       = "leverage"
	ParamSide           = "side"
	ParamWinProbability = "win_probability"
	ParamPayoffRatio    = "payoff_ratio"
	ParamRecipient      = "recipient"
	ParamMaxSlippage    = "max_slippage"
	ParamPosition       = "position"
	ParamExitReason     = "exit_reason"
)

// Perp sides.
const (
	Long  = "long"
	Short = "short"
)

// Order is a trade request as the finance stages read it. The zero value is
// not a valid order.
type Order struct {
	Action string
	// Token is the request's resource: what is bought, sold, swapped into,
	// transferred, or the asset of a perp market ("ETH" for ETH-PERP).
	Token string
	// TokenIn is what pays: the quote for a buy, Token for a sell, the
	// token_in param for a swap. TokenOut is what is received.
	TokenIn, TokenOut string
	// Chain is the chain as the request named it (an alias is resolved by
	// the tokens registry).
	Chain string
	// AmountUSD is the cash committed: the value sold or paid, the margin of a
	// perp, the value transferred. HasAmount is false when the request gave
	// none.
	AmountUSD warden.USD
	HasAmount bool
	// Leverage of a perp_open; 1 when not given.
	Leverage float64
	Side     string
	// WinProbability and PayoffRatio feed half-Kelly sizing; NaN when not given.
	WinProbability, PayoffRatio float64
	// Recipient is where the output goes: the own wallet when empty.
	Recipient string
	// MaxSlippage is the tolerance the order accepts (1 − amountOutMin /
	// expected output); NaN when not given, which takes the tier's maximum.
	MaxSlippage float64
	// Position names the position a perp_close closes.
	Position string
	// ExitReason is set on orders the stop-loss monitor issues.
	ExitReason string
}

// Increases reports whether the order can add exposure: buys, swaps and perp
// opens do; sells, closes and transfers out do not.
func (o *Order) Increases() bool {
	return o.Action == Buy || o.Action == Swap || o.Action == PerpOpen
}

// IsSwap reports whether the order trades one token for another on the
// backend (and so needs a simulation).
func (o *Order) IsSwap() bool {
	return o.Action == Buy || o.Action == Sell || o.Action == Swap
}

// Notional is the exposure the order adds: AmountUSD, times the leverage of
// a perp. It saturates instead of overflowing.
func (o *Order) Notional() warden.USD {
	if o.Action != PerpOpen || o.Leverage <= 1 {
		return o.AmountUSD
	}
	n := float64(o.AmountUSD) * o.Leverage
	if n >= math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return warden.USD(n)
}

// ParseOrder reads a trade request. A parameter that is present but
// malformed is an *warden.Error (EInvalid) naming it: the stages deny such a
// request rather than guess.
func ParseOrder(req *warden.Request) (*Order, error) {
	if req.Capability != warden.CapTrade {
		return nil, warden.Errorf(warden.EInvalid, "not a trade request (capability %q)", req.Capability)
	}
	o := &Order{Action: req.Action, Token: strings.TrimSpace(req.Resource), WinProbability: math.NaN(), PayoffRatio: math.NaN(), MaxSlippage: math.NaN()}
	if !isAction(o.Action) {
		return nil, warden.Errorf(warden.EInvalid, "unknown trade action %q", o.Action).
			WithHint("use one of " + strings.Join(Actions, ", "))
	}
	if o.Token == "" {
		return nil, warden.Errorf(warden.EInvalid, "a %s names no token", o.Action).WithHint("give the token as the resource, e.g. `warden check trade buy ETH`")
	}
	p := params{req.Params}
	var err error
	if o.Chain, err = p.str(ParamChain); err != nil {
		return nil, err
	}
	if o.Chain == "" {
		return nil, warden.Errorf(warden.EInvalid, "the %s names no chain", o.Action).WithHint("add --param chain=ethereum (or base, arbitrum, optimism, polygon, solana, bsc)")
	}
	if o.AmountUSD, o.HasAmount, err = req.AmountUSD(); err != nil {
		return nil, warden.Errorf(warden.EInvalid, "param amount_usd: %v", err).WithHint("give a plain dollar amount such as 250 or 99.50")
	}
	tokenIn, err := p.str(ParamTokenIn)
	if err != nil {
		return nil, err
	}
	tokenOut, err := p.str(ParamTokenOut)
	if err != nil {
		return nil, err
	}
	switch o.Action {
	case Buy:
		o.TokenIn, o.TokenOut = orDefault(tokenIn, DefaultQuote), o.Token
	case Sell:
		o.TokenIn, o.TokenOut = o.Token, orDefault(tokenOut, DefaultQuote)
	case Swap:
		if tokenIn == "" {
			return nil, warden.Errorf(warden.EInvalid, "a swap names no token_in").WithHint("add --param token_in=USDC (the token you pay with)")
		}
		o.TokenIn, o.TokenOut = tokenIn, o.Token
	case Transfer:
		o.TokenIn = o.Token
	}
	if o.Leverage, err = p.number(ParamLeverage, 1); err != nil {
		return nil, err
	}
	if o.Side, err = p.str(ParamSide); err != nil {
		return nil, err
	}
	if o.Action == PerpOpen {
		if o.Side == "" {
			o.Side = Long
		}
		if o.Side != Long && o.Side != Short {
			return nil, warden.Errorf(warden.EInvalid, "param side is %q; a perp side is long or short", o.Side)
		}
	}
	if o.WinProbability, err = p.number(ParamWinProbability, math.NaN()); err != nil {
		return nil, err
	}
	if o.PayoffRatio, err = p.number(ParamPayoffRatio, math.NaN()); err != nil {
		return nil, err
	}
	if o.MaxSlippage, err = p.number(ParamMaxSlippage, math.NaN()); err != nil {
		return nil, err
	}
	if o.Recipient, err = p.str(ParamRecipient); err != nil {
		return nil, err
	}
	if o.Action == Transfer && o.Recipient == "" {
		return nil, warden.Errorf(warden.EInvalid, "a transfer names no recipient").WithHint("add --param recipient=0x…")
	}
	if o.Position, err = p.str(ParamPosition); err != nil {
		return nil, err
	}
	if o.ExitReason, err = p.str(ParamExitReason); err != nil {
		return nil, err
	}
	return o, nil
}

func isAction(a string) bool {
	for _, x := range Actions {
		if a == x {
			return true
		}
	}
	return false
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

type params struct{ m map[string]json.RawMessage }

// str reads a string parameter ("" when absent). A JSON number is accepted
// as its text, since `--param k=v` cannot say which was meant.
func (p params) str(key string) (string, error) {
	raw, ok := p.m[key]
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		var n json.Number
		if json.Unmarshal(raw, &n) != nil {
			return "", warden.Errorf(warden.EInvalid, "param %s must be a string", key)
		}
		s = n.String()
	}
	s = strings.TrimSpace(s)
	if len(s) > 256 || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", warden.Errorf(warden.EInvalid, "param %s is longer than 256 bytes or holds control characters", key)
	}
	return s, nil
}

// number reads a finite number given as a JSON number or string; def when
// absent.
func (p params) number(key string, def float64) (float64, error) {
	raw, ok := p.m[key]
	if !ok {
		return def, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		s = strings.TrimSpace(string(raw))
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, warden.Errorf(warden.EInvalid, "param %s is %q; want a finite number", key, clip.String(string(raw), 40))
	}
	return f, nil
}

// PerpAsset is the asset of a perp market: "ETH-PERP" and "eth-perp" are ETH.
func PerpAsset(market string) string {
	m := strings.TrimSpace(market)
	if len(m) > 5 && strings.EqualFold(m[len(m)-5:], "-PERP") {
		m = m[:len(m)-5]
	}
	return m
}
