package paper

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
)

// warden.USD encodes as a JSON number of dollars ("9990.5") and has no
// matching decoder: decoded plainly, that number would be read as
// micro-dollars, or refused for its fraction. So the Book and the fills
// decode their USD fields here, through mirrors of finance.Position and
// finance.Fill. A test round-trips both with every field set, so a field
// added to either type and missing here fails it.

// dollars decodes a JSON number of dollars, as warden.USD encodes it, exactly.
type dollars warden.USD

func (d *dollars) UnmarshalJSON(b []byte) error {
	u, err := parseDollars(string(b))
	if err != nil {
		return err
	}
	*d = dollars(u)
	return nil
}

// parseDollars reads "-12.345678": an optional sign, digits and up to six
// decimals.
func parseDollars(s string) (warden.USD, error) {
	bad := fmt.Errorf("%w %q: want a number of dollars with at most 6 decimals", warden.ErrBadAmount, s)
	neg := strings.HasPrefix(s, "-")
	whole, frac, dot := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	if len(frac) > 6 || dot && frac == "" { // ParseUint below refuses signs, exponents and an empty whole part
		return 0, bad
	}
	w, err := strconv.ParseUint(whole, 10, 63)
	if err != nil || w > (1<<62)/warden.MicrosPerDollar {
		return 0, bad
	}
	var f uint64
	if frac != "" {
		if f, err = strconv.ParseUint(frac+strings.Repeat("0", 6-len(frac)), 10, 32); err != nil {
			return 0, bad
		}
	}
	u := warden.USD(w*warden.MicrosPerDollar + f)
	if neg {
		u = -u
	}
	return u, nil
}

// position mirrors finance.Position for decoding.
type position struct {
	ID         string        `json:"id"`
	Token      finance.Token `json:"token"`
	Side       string        `json:"side"`
	Leverage   float64       `json:"leverage"`
	MarginUSD  dollars       `json:"margin_usd"`
	Size       float64       `json:"size"`
	EntryPrice float64       `json:"entry_price"`
	OpenedAt   time.Time     `json:"opened_at"`
	MarkPrice  float64       `json:"mark_price"`
}

func (p *position) value() finance.Position {
	return finance.Position{ID: p.ID, Token: p.Token, Side: p.Side, Leverage: p.Leverage, MarginUSD: warden.USD(p.MarginUSD),
		Size: p.Size, EntryPrice: p.EntryPrice, OpenedAt: p.OpenedAt, MarkPrice: p.MarkPrice}
}

// UnmarshalJSON decodes a Book as json.Marshal encodes it. Decoding is
// strict: an unknown field anywhere in the book is an error, so that a book
// written by a newer warden is refused rather than saved again without what
// this one does not know.
func (b *Book) UnmarshalJSON(data []byte) error {
	var w struct {
		Funded    bool                     `json:"funded"`
		Cash      dollars                  `json:"cash"`
		Balances  map[string]float64       `json:"balances"`
		Tokens    map[string]finance.Token `json:"tokens"`
		Positions map[string]position      `json:"positions"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return fmt.Errorf("decode paper book: %w", err)
	}
	*b = Book{Funded: w.Funded, Cash: warden.USD(w.Cash), Balances: w.Balances, Tokens: w.Tokens}
	if w.Positions != nil {
		b.Positions = make(map[string]finance.Position, len(w.Positions))
		for id, p := range w.Positions {
			b.Positions[id] = p.value()
		}
	}
	return nil
}

// fill mirrors finance.Fill for decoding.
type fill struct {
	ID        string    `json:"id"`
	TraceID   string    `json:"trace_id"`
	Action    string    `json:"action"`
	At        time.Time `json:"at"`
	InToken   string    `json:"in_token"`
	InAmount  float64   `json:"in_amount"`
	OutToken  string    `json:"out_token"`
	OutAmount float64   `json:"out_amount"`
	Price     float64   `json:"price"`
	ValueUSD  dollars   `json:"value_usd"`
	Position  string    `json:"position"`
}

// DecodeFill decodes a finance.Fill as json.Marshal encodes it, reading its
// ValueUSD exactly. Unknown fields are ignored: a fill is history, never
// written back.
func DecodeFill(data []byte) (finance.Fill, error) {
	var f fill
	if err := json.Unmarshal(data, &f); err != nil {
		return finance.Fill{}, fmt.Errorf("decode fill: %w", err)
	}
	return finance.Fill{ID: f.ID, TraceID: f.TraceID, Action: f.Action, At: f.At, InToken: f.InToken, InAmount: f.InAmount,
		OutToken: f.OutToken, OutAmount: f.OutAmount, Price: f.Price, ValueUSD: warden.USD(f.ValueUSD), Position: f.Position}, nil
}
