package httpexchange

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentwarden/warden/finance"
)

// The answers as they arrive: numbers, amounts and times stay raw until the
// checker reads them, so a missing field is told from a zero one.

type priceAnswer struct {
	USD json.RawMessage `json:"usd"`
	At  json.RawMessage `json:"at"`
}

type chainAnswer struct {
	Name string `json:"name"`
	ID   int64  `json:"id"`
}

type tokenAnswer struct {
	Symbol   string       `json:"symbol"`
	Chain    *chainAnswer `json:"chain"`
	Address  string       `json:"address"`
	AssetID  string       `json:"asset_id"`
	Decimals int          `json:"decimals"`
}

type holdingAnswer struct {
	Token    *tokenAnswer    `json:"token"`
	Amount   json.RawMessage `json:"amount"`
	ValueUSD json.RawMessage `json:"value_usd"`
}

type positionAnswer struct {
	ID         string          `json:"id"`
	Token      *tokenAnswer    `json:"token"`
	Side       string          `json:"side"`
	Leverage   json.RawMessage `json:"leverage"`
	MarginUSD  json.RawMessage `json:"margin_usd"`
	Size       json.RawMessage `json:"size"`
	EntryPrice json.RawMessage `json:"entry_price"`
	MarkPrice  json.RawMessage `json:"mark_price"`
	OpenedAt   json.RawMessage `json:"opened_at"`
}

type portfolioAnswer struct {
	Wallet    string            `json:"wallet"`
	At        json.RawMessage   `json:"at"`
	Holdings  *[]holdingAnswer  `json:"holdings"`
	Positions *[]positionAnswer `json:"positions"`
}

type simulationAnswer struct {
	ExpectedOut    json.RawMessage `json:"expected_out"`
	PriceImpact    json.RawMessage `json:"price_impact"`
	InputValueUSD  json.RawMessage `json:"input_value_usd"`
	OutputValueUSD json.RawMessage `json:"output_value_usd"`
}

type fillAnswer struct {
	ID        string          `json:"id"`
	TraceID   string          `json:"trace_id"`
	At        json.RawMessage `json:"at"`
	InToken   string          `json:"in_token"`
	InAmount  json.RawMessage `json:"in_amount"`
	OutToken  string          `json:"out_token"`
	OutAmount json.RawMessage `json:"out_amount"`
	Price     json.RawMessage `json:"price"`
	ValueUSD  json.RawMessage `json:"value_usd"`
	Position  string          `json:"position"`
}

// decodePrice reads a price answer: a positive, finite usd and its time.
func decodePrice(data []byte) (finance.Price, error) {
	var a priceAnswer
	if err := decodeObject(data, &a); err != nil {
		return finance.Price{}, err
	}
	var c checker
	p := finance.Price{USD: c.positive("usd", a.USD)}
	p.At, _ = c.time("at", a.At, true)
	if c.err != nil {
		return finance.Price{}, c.err
	}
	return p, nil
}

// decodeSimulation reads a simulation answer; every field is required and
// none may be negative.
func decodeSimulation(data []byte) (finance.Simulation, error) {
	var a simulationAnswer
	if err := decodeObject(data, &a); err != nil {
		return finance.Simulation{}, err
	}
	var c checker
	s := finance.Simulation{
		ExpectedOut:    c.number("expected_out", a.ExpectedOut, true),
		PriceImpact:    c.number("price_impact", a.PriceImpact, true),
		InputValueUSD:  c.usd("input_value_usd", a.InputValueUSD, true),
		OutputValueUSD: c.usd("output_value_usd", a.OutputValueUSD, true),
	}
	if c.err != nil {
		return finance.Simulation{}, c.err
	}
	return s, nil
}

// decodePortfolio reads a portfolio answer. The wallet and the holdings
// (possibly []) are required, positions are optional; the time defaults to
// now. Its gross value (holdings, and each position's margin and larger
// notional) is at most a trillion dollars, so its ValueUSD and Exposure
// cannot overflow.
func decodePortfolio(data []byte, now time.Time) (finance.Portfolio, error) {
	var a portfolioAnswer
	if err := decodeObject(data, &a); err != nil {
		return finance.Portfolio{}, err
	}
	var c checker
	p := finance.Portfolio{Wallet: c.text("wallet", a.Wallet, true), At: now}
	if at, ok := c.time("at", a.At, false); ok {
		p.At = at
	}
	if a.Holdings == nil {
		c.fail("holdings", "is missing; send [] for none")
		return finance.Portfolio{}, c.err
	}
	gross := 0.0
	p.Holdings = make([]finance.Holding, 0, len(*a.Holdings))
	for i, h := range *a.Holdings {
		path := fmt.Sprintf("holdings[%d]", i)
		hd := finance.Holding{
			Token:    c.token(path+".token", h.Token),
			Amount:   c.number(path+".amount", h.Amount, true),
			ValueUSD: c.usd(path+".value_usd", h.ValueUSD, true),
		}
		gross += hd.ValueUSD.Dollars()
		p.Holdings = append(p.Holdings, hd)
	}
	if a.Positions != nil {
		p.Positions = make([]finance.Position, 0, len(*a.Positions))
	}
	for i, pa := range deref(a.Positions) {
		path := fmt.Sprintf("positions[%d]", i)
		pos := finance.Position{
			ID:         c.text(path+".id", pa.ID, true),
			Token:      c.token(path+".token", pa.Token),
			Side:       pa.Side,
			Leverage:   c.positive(path+".leverage", pa.Leverage),
			MarginUSD:  c.usd(path+".margin_usd", pa.MarginUSD, true),
			Size:       c.number(path+".size", pa.Size, true),
			EntryPrice: c.positive(path+".entry_price", pa.EntryPrice),
			MarkPrice:  c.positive(path+".mark_price", pa.MarkPrice),
		}
		if pos.Side != finance.Long && pos.Side != finance.Short {
			c.fail(path+".side", `is neither "long" nor "short"`)
		}
		pos.OpenedAt, _ = c.time(path+".opened_at", pa.OpenedAt, false)
		gross += pos.MarginUSD.Dollars() + max(pos.Size*pos.MarkPrice, pos.Size*pos.EntryPrice)
		p.Positions = append(p.Positions, pos)
	}
	if c.err == nil && !(gross <= maxDollars) {
		c.fail("portfolio", "is worth more than a trillion dollars (holdings, margins and notionals)")
	}
	if c.err != nil {
		return finance.Portfolio{}, c.err
	}
	return p, nil
}

func deref[T any](p *[]T) []T {
	if p == nil {
		return nil
	}
	return *p
}

// fillWant is what an execution's fill must agree with.
type fillWant struct {
	action string
	trace  string
	// position is the position a perp_close closed; a perp_open's fill
	// must name the one it opened.
	position string
}

// decodeFill reads an execution's fill. The id and value_usd are required;
// a trace_id, when sent, must be the execution's own. The fill's action and
// trace id are the execution's, and its time defaults to now.
func decodeFill(data []byte, want fillWant, now time.Time) (finance.Fill, error) {
	var a fillAnswer
	if err := decodeObject(data, &a); err != nil {
		return finance.Fill{}, err
	}
	var c checker
	f := finance.Fill{
		ID:        c.text("id", a.ID, true),
		TraceID:   want.trace,
		Action:    want.action,
		At:        now,
		InToken:   c.text("in_token", a.InToken, false),
		InAmount:  c.number("in_amount", a.InAmount, false),
		OutToken:  c.text("out_token", a.OutToken, false),
		OutAmount: c.number("out_amount", a.OutAmount, false),
		Price:     c.number("price", a.Price, false),
		ValueUSD:  c.usd("value_usd", a.ValueUSD, true),
		Position:  c.text("position", a.Position, want.action == finance.PerpOpen),
	}
	if at, ok := c.time("at", a.At, false); ok {
		f.At = at
	}
	if a.TraceID != "" && a.TraceID != want.trace {
		c.fail("trace_id", "names another execution than the one sent")
	}
	if want.position != "" {
		if f.Position == "" {
			f.Position = want.position
		} else if f.Position != want.position {
			c.fail("position", "is not the position asked to close")
		}
	}
	if c.err != nil {
		return finance.Fill{}, c.err
	}
	return f, nil
}

// token reads a token in an answer and classifies it (see classify).
func (c *checker) token(path string, a *tokenAnswer) finance.Token {
	if a == nil {
		c.fail(path, "is missing")
		return finance.Token{}
	}
	if a.Chain == nil {
		c.fail(path+".chain", "is missing")
		return finance.Token{}
	}
	t := finance.Token{
		Symbol:   c.text(path+".symbol", a.Symbol, false),
		Chain:    finance.Chain{Name: c.text(path+".chain.name", a.Chain.Name, true), ID: a.Chain.ID},
		Address:  c.text(path+".address", a.Address, false),
		AssetID:  c.text(path+".asset_id", a.AssetID, false),
		Decimals: a.Decimals,
	}
	if t.Symbol == "" && t.Address == "" {
		c.fail(path, "has neither a symbol nor an address")
	}
	if a.Decimals < 0 || a.Decimals > 255 {
		c.fail(path+".decimals", "is outside 0–255")
	}
	return classify(t)
}

// classify trusts the registry, not the venue: a token the registry lists
// on the same chain (name and id) at the same address ("" for a native
// coin) becomes the registry's token; any other keeps the venue's fields
// with class unknown and is not canonical, so a venue cannot pass a token
// off as a stablecoin or a major.
func classify(t finance.Token) finance.Token {
	var r finance.Resolver
	if chain, err := r.Chain(t.Chain.Name); err == nil && (t.Chain.ID == 0 || t.Chain.ID == chain.ID) {
		ref := finance.TokenRef{Symbol: t.Symbol, Address: t.Address}
		if rt, err := r.Token(chain, ref); err == nil && rt.Canonical && finance.SameAddress(rt.Address, t.Address) {
			return rt
		}
	}
	t.Class, t.Canonical = finance.ClassUnknown, false
	if t.AssetID == "" {
		t.AssetID = t.Key()
	}
	return t
}
