package httpexchange

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/internal/clip"
)

// The requests as they leave: tokens with their chain, dollar amounts as
// decimal strings.

type chainRequest struct {
	Name string `json:"name"`
	ID   int64  `json:"id"`
}

type tokenRequest struct {
	Symbol   string       `json:"symbol"`
	Chain    chainRequest `json:"chain"`
	Address  string       `json:"address"`
	AssetID  string       `json:"asset_id"`
	Decimals int          `json:"decimals"`
}

type swapRequest struct {
	TokenIn     tokenRequest `json:"token_in"`
	TokenOut    tokenRequest `json:"token_out"`
	AmountUSD   string       `json:"amount_usd"`
	MaxSlippage *float64     `json:"max_slippage,omitempty"`
	Recipient   string       `json:"recipient,omitempty"`
	TraceID     string       `json:"trace_id,omitempty"`
}

type perpOpenRequest struct {
	Token     tokenRequest `json:"token"`
	Side      string       `json:"side"`
	MarginUSD string       `json:"margin_usd"`
	Leverage  float64      `json:"leverage"`
	TraceID   string       `json:"trace_id"`
}

type perpCloseRequest struct {
	PositionID string `json:"position_id"`
	TraceID    string `json:"trace_id"`
}

type transferRequest struct {
	Token     tokenRequest `json:"token"`
	AmountUSD string       `json:"amount_usd"`
	Recipient string       `json:"recipient"`
	TraceID   string       `json:"trace_id"`
}

func wireToken(t finance.Token) tokenRequest {
	return tokenRequest{Symbol: t.Symbol, Chain: chainRequest{Name: t.Chain.Name, ID: t.Chain.ID},
		Address: t.Address, AssetID: t.AssetID, Decimals: t.Decimals}
}

// badOrder is an order refused before it is sent.
func badOrder(op, format string, args ...any) error {
	return warden.Errorf(warden.EInvalid, "%s not sent to the exchange: %s", op, fmt.Sprintf(format, args...))
}

// checkToken refuses a token the venue could not identify.
func checkToken(op, role string, t finance.Token) error {
	switch {
	case t.Chain.Name == "":
		return badOrder(op, "the %s token names no chain", role)
	case t.Symbol == "" && t.Address == "":
		return badOrder(op, "the %s token has neither a symbol nor an address", role)
	}
	return nil
}

// checkText refuses an id or an address that is empty, long or holds
// control characters.
func checkText(op, what, s string) error {
	if s == "" || len(s) > maxText || s != clean(s, "") {
		return badOrder(op, "the %s is empty, longer than %d bytes or holds control characters or spaces", what, maxText)
	}
	return nil
}

// checkAmount refuses a dollar amount that is not positive.
func checkAmount(op, what string, u warden.USD) error {
	if u <= 0 {
		return badOrder(op, "the %s is $%s; want a positive amount", what, u)
	}
	return nil
}

// Price implements finance.Backend: GET Endpoints.Price?chain=&token=&asset=.
func (b *Backend) Price(ctx context.Context, t finance.Token) (finance.Price, error) {
	const op = "price"
	if err := checkToken(op, "priced", t); err != nil {
		return finance.Price{}, err
	}
	q := url.Values{}
	q.Set("chain", t.Chain.Name)
	q.Set("token", t.Address)
	if t.Address == "" {
		q.Set("token", t.Symbol)
	}
	if t.AssetID != "" {
		q.Set("asset", t.AssetID)
	}
	c := call{op: op, method: http.MethodGet, url: b.endpoints.price + "?" + q.Encode()}
	data, err := b.do(ctx, c)
	if err != nil {
		return finance.Price{}, err
	}
	p, err := decodePrice(data)
	if err != nil {
		return finance.Price{}, b.fail(c, err)
	}
	return p, nil
}

// Portfolio implements finance.Backend: GET Endpoints.Portfolio.
func (b *Backend) Portfolio(ctx context.Context) (finance.Portfolio, error) {
	c := call{op: "portfolio", method: http.MethodGet, url: b.endpoints.portfolio}
	data, err := b.do(ctx, c)
	if err != nil {
		return finance.Portfolio{}, err
	}
	p, err := decodePortfolio(data, b.now())
	if err != nil {
		return finance.Portfolio{}, b.fail(c, err)
	}
	return p, nil
}

// Simulate implements finance.Backend: POST Endpoints.Simulate. A NaN
// MaxSlippage (the order gave none) is left out of the body.
func (b *Backend) Simulate(ctx context.Context, q finance.SwapQuote) (finance.Simulation, error) {
	const op = "simulate"
	body, err := swapBody(op, q, true)
	if err != nil {
		return finance.Simulation{}, err
	}
	c := call{op: op, method: http.MethodPost, url: b.endpoints.simulate, body: body}
	data, err := b.do(ctx, c)
	if err != nil {
		return finance.Simulation{}, err
	}
	s, err := decodeSimulation(data)
	if err != nil {
		return finance.Simulation{}, b.fail(c, err)
	}
	return s, nil
}

func swapBody(op string, q finance.SwapQuote, simulate bool) (*swapRequest, error) {
	if err := checkToken(op, "input", q.In); err != nil {
		return nil, err
	}
	if err := checkToken(op, "output", q.Out); err != nil {
		return nil, err
	}
	if err := checkAmount(op, "amount", q.AmountUSD); err != nil {
		return nil, err
	}
	if q.Recipient != "" {
		if err := checkText(op, "recipient", q.Recipient); err != nil {
			return nil, err
		}
	}
	body := &swapRequest{TokenIn: wireToken(q.In), TokenOut: wireToken(q.Out), AmountUSD: q.AmountUSD.String(), Recipient: q.Recipient}
	switch s := q.MaxSlippage; {
	case math.IsNaN(s) && simulate:
	case math.IsNaN(s) || math.IsInf(s, 0) || s < 0 || s >= 1:
		return nil, badOrder(op, "the maximum slippage %v is not a fraction in [0, 1)", s)
	default:
		body.MaxSlippage = &s
	}
	return body, nil
}

// Swap implements finance.Backend: POST Endpoints.Swap, after c.Check().
func (b *Backend) Swap(ctx context.Context, q finance.SwapQuote, c finance.Clearance) (finance.Fill, error) {
	const op = "swap"
	if err := c.Check(); err != nil {
		return finance.Fill{}, err
	}
	body, err := swapBody(op, q, false)
	if err != nil {
		return finance.Fill{}, err
	}
	body.TraceID = c.TraceID()
	return b.execute(ctx, call{op: op, method: http.MethodPost, url: b.endpoints.swap, body: body, trace: c.TraceID()},
		fillWant{action: finance.Swap, trace: c.TraceID()})
}

// OpenPerp implements finance.Backend: POST Endpoints.PerpOpen, after
// c.Check().
func (b *Backend) OpenPerp(ctx context.Context, p finance.PerpOrder, c finance.Clearance) (finance.Fill, error) {
	const op = "perp open"
	if err := c.Check(); err != nil {
		return finance.Fill{}, err
	}
	if err := checkToken(op, "market's", p.Token); err != nil {
		return finance.Fill{}, err
	}
	if p.Side != finance.Long && p.Side != finance.Short {
		return finance.Fill{}, badOrder(op, "the side %q is neither long nor short", clip.String(p.Side, 64))
	}
	if err := checkAmount(op, "margin", p.MarginUSD); err != nil {
		return finance.Fill{}, err
	}
	if math.IsNaN(p.Leverage) || math.IsInf(p.Leverage, 0) || p.Leverage <= 0 {
		return finance.Fill{}, badOrder(op, "the leverage %v is not a positive number", p.Leverage)
	}
	body := perpOpenRequest{Token: wireToken(p.Token), Side: p.Side, MarginUSD: p.MarginUSD.String(), Leverage: p.Leverage, TraceID: c.TraceID()}
	return b.execute(ctx, call{op: op, method: http.MethodPost, url: b.endpoints.perpOpen, body: body, trace: c.TraceID()},
		fillWant{action: finance.PerpOpen, trace: c.TraceID()})
}

// ClosePerp implements finance.Backend: POST Endpoints.PerpClose, after
// c.Check().
func (b *Backend) ClosePerp(ctx context.Context, positionID string, c finance.Clearance) (finance.Fill, error) {
	const op = "perp close"
	if err := c.Check(); err != nil {
		return finance.Fill{}, err
	}
	if err := checkText(op, "position id", positionID); err != nil {
		return finance.Fill{}, err
	}
	body := perpCloseRequest{PositionID: positionID, TraceID: c.TraceID()}
	return b.execute(ctx, call{op: op, method: http.MethodPost, url: b.endpoints.perpClose, body: body, trace: c.TraceID()},
		fillWant{action: finance.PerpClose, trace: c.TraceID(), position: positionID})
}

// Transfer implements finance.Backend: POST Endpoints.Transfer, after
// c.Check().
func (b *Backend) Transfer(ctx context.Context, t finance.TransferOrder, c finance.Clearance) (finance.Fill, error) {
	const op = "transfer"
	if err := c.Check(); err != nil {
		return finance.Fill{}, err
	}
	if err := checkToken(op, "transferred", t.Token); err != nil {
		return finance.Fill{}, err
	}
	if err := checkAmount(op, "amount", t.AmountUSD); err != nil {
		return finance.Fill{}, err
	}
	if err := checkText(op, "recipient", t.Recipient); err != nil {
		return finance.Fill{}, err
	}
	body := transferRequest{Token: wireToken(t.Token), AmountUSD: t.AmountUSD.String(), Recipient: t.Recipient, TraceID: c.TraceID()}
	return b.execute(ctx, call{op: op, method: http.MethodPost, url: b.endpoints.transfer, body: body, trace: c.TraceID()},
		fillWant{action: finance.Transfer, trace: c.TraceID()})
}

// execute sends an execution and reads its fill. A 2xx whose fill does not
// decode leaves the outcome unknown.
func (b *Backend) execute(ctx context.Context, c call, want fillWant) (finance.Fill, error) {
	if err := checkText(c.op, "trace id", c.trace); err != nil {
		return finance.Fill{}, err
	}
	data, err := b.do(ctx, c)
	if err != nil {
		return finance.Fill{}, err
	}
	f, err := decodeFill(data, want, b.now())
	if err != nil {
		return finance.Fill{}, b.fail(c, b.uncertain(c, err))
	}
	return f, nil
}
