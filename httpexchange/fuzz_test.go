package httpexchange

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
)

// The decoders' properties, whatever the venue sends: they never panic; an
// error wraps ErrMalformed and comes with the zero value; a value has no
// negative, non-finite or oversized number, and no string that could forge a
// log line.

var fuzzNow = time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC)

func seed(f *testing.F, file string, more ...string) {
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	for _, m := range more {
		f.Add([]byte(m))
	}
}

func finiteNonNegative(x float64) bool { return x >= 0 && !math.IsInf(x, 0) }

func maxUSD() warden.USD { return warden.USD(maxDollars * warden.MicrosPerDollar) }

func checkMalformed(t *testing.T, err error, zero bool) {
	t.Helper()
	if !errors.Is(err, ErrMalformed) {
		t.Errorf("error %v does not wrap ErrMalformed", err)
	}
	if !zero {
		t.Error("a value came back with the error")
	}
}

func assertClean(t *testing.T, what, s string) {
	t.Helper()
	if len(s) > maxText || s != clean(s, "") {
		t.Errorf("%s %q: longer than %d bytes or not clean", what, s, maxText)
	}
}

func FuzzDecodeSimulation(f *testing.F) {
	seed(f, "simulation.json",
		`{"expected_out": -0.1, "price_impact": 0, "input_value_usd": "5", "output_value_usd": "5"}`,
		`{"expected_out": "1e308", "price_impact": "1E-400", "input_value_usd": 1e12, "output_value_usd": "0.0000005"}`,
		`{"expected_out": 1, "price_impact": 0, "input_value_usd": "-0", "output_value_usd": "999999999999.9999999"}`,
		`{"expected_out": 1, "price_impact": 0, "input_value_usd": 5, "output_value_usd": 5} trailing`,
		`{"EXPECTED_OUT": 1, "Price_Impact": 0, "input_value_usd": 5, "output_value_usd": 5, "output_value_usd": -5}`,
		`[]`, `null`, ``, `{`)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := decodeSimulation(data)
		if err != nil {
			checkMalformed(t, err, s == finance.Simulation{})
			return
		}
		if !finiteNonNegative(s.ExpectedOut) || !finiteNonNegative(s.PriceImpact) {
			t.Errorf("simulation %+v has a negative or non-finite number", s)
		}
		if s.InputValueUSD < 0 || s.OutputValueUSD < 0 || s.InputValueUSD > maxUSD() || s.OutputValueUSD > maxUSD() {
			t.Errorf("simulation %+v has a value outside $0–$1T", s)
		}
		if r := s.OutputRatio(); !finiteNonNegative(r) {
			t.Errorf("simulation %+v has output ratio %v", s, r)
		}
	})
}

func FuzzDecodePortfolio(f *testing.F) {
	seed(f, "portfolio.json",
		`{"wallet": "w", "holdings": []}`,
		`{"wallet": "w", "holdings": [{"token": {"symbol": "USDC", "chain": {"name": "base", "id": 8453}, "address": "0x00000000000000000000000000000000000000aa"}, "amount": 1, "value_usd": "-1"}]}`,
		`{"wallet": "w", "holdings": [{"token": {"symbol": "USDC", "chain": {"name": "base", "id": 1}}, "amount": 1, "value_usd": "1"}]}`,
		`{"wallet": "w", "holdings": [], "positions": [{"id": "p", "token": {"symbol": "ETH", "chain": {"name": "base"}}, "side": "short", "leverage": 1e-300, "margin_usd": "1000000000000", "size": 1e300, "entry_price": 1e-300, "mark_price": 1e300}]}`,
		`{"wallet": "w\u202e", "holdings": []}`,
		`{"wallet": "w", "holdings": null}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := decodePortfolio(data, fuzzNow)
		if err != nil {
			checkMalformed(t, err, p.Wallet == "" && p.Holdings == nil && p.Positions == nil && p.At.IsZero())
			return
		}
		if p.Wallet == "" || p.Holdings == nil || p.At.IsZero() {
			t.Errorf("portfolio without a wallet, holdings or time: %+v", p)
		}
		assertClean(t, "wallet", p.Wallet)
		checkToken := func(what string, tok finance.Token) {
			if tok.Class != finance.ClassUnknown && !tok.Canonical {
				t.Errorf("%s %v is of class %s without being in the registry", what, tok, tok.Class)
			}
			if tok.Chain.Name == "" || tok.Symbol == "" && tok.Address == "" || tok.Decimals < 0 {
				t.Errorf("%s %+v is not identified", what, tok)
			}
			assertClean(t, what+" symbol", tok.Symbol)
			assertClean(t, what+" address", tok.Address)
		}
		for _, h := range p.Holdings {
			checkToken("holding", h.Token)
			if !finiteNonNegative(h.Amount) || h.ValueUSD < 0 || h.ValueUSD > maxUSD() {
				t.Errorf("holding %+v has a negative, non-finite or oversized number", h)
			}
		}
		for _, pos := range p.Positions {
			checkToken("position", pos.Token)
			assertClean(t, "position id", pos.ID)
			if pos.Side != finance.Long && pos.Side != finance.Short {
				t.Errorf("position side %q", pos.Side)
			}
			if !finiteNonNegative(pos.Size) || !(pos.Leverage > 0) || !(pos.EntryPrice > 0) || !(pos.MarkPrice > 0) ||
				math.IsInf(pos.Leverage+pos.EntryPrice+pos.MarkPrice, 0) || pos.MarginUSD < 0 {
				t.Errorf("position %+v has a negative, zero or non-finite number", pos)
			}
			if pos.NotionalUSD() < 0 || pos.ValueUSD() < 0 {
				t.Errorf("position %+v is worth %s with notional %s", pos, pos.ValueUSD(), pos.NotionalUSD())
			}
		}
		slack := warden.USD(len(p.Positions) + 1) // a micro-dollar of rounding each
		if v := p.ValueUSD(); v < 0 || v > maxUSD()+slack {
			t.Errorf("portfolio worth %s: outside $0–$1T", v)
		}
		if e := p.Exposure(); e.Total < 0 || e.Total > maxUSD()+slack {
			t.Errorf("exposure %s: outside $0–$1T", e.Total)
		}
	})
}

func FuzzDecodePrice(f *testing.F) {
	seed(f, "price.json", `{"usd": 0, "at": "2026-03-01T12:00:00Z"}`, `{"usd": "NaN", "at": "x"}`, `{"usd": 1e-320, "at": "2026-03-01T12:00:00+02:00"}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := decodePrice(data)
		if err != nil {
			checkMalformed(t, err, p == finance.Price{})
			return
		}
		if !(p.USD > 0) || math.IsInf(p.USD, 0) {
			t.Errorf("price %v is not positive and finite", p.USD)
		}
	})
}

func FuzzDecodeFill(f *testing.F) {
	seed(f, "fill.json", `{"id": "f", "value_usd": "5", "trace_id": "other"}`, `{"id": "f\n", "value_usd": "5"}`, `{"id": "f", "value_usd": 5, "position": "p"}`)
	want := fillWant{action: finance.PerpClose, trace: "trace-1", position: "pos-9"}
	f.Fuzz(func(t *testing.T, data []byte) {
		fl, err := decodeFill(data, want, fuzzNow)
		if err != nil {
			checkMalformed(t, err, fl == finance.Fill{})
			return
		}
		if fl.TraceID != want.trace || fl.Action != want.action || fl.Position != want.position || fl.At.IsZero() {
			t.Errorf("fill %+v is not the execution's", fl)
		}
		assertClean(t, "fill id", fl.ID)
		if fl.ID == "" || fl.ValueUSD < 0 || fl.ValueUSD > maxUSD() ||
			!finiteNonNegative(fl.InAmount) || !finiteNonNegative(fl.OutAmount) || !finiteNonNegative(fl.Price) {
			t.Errorf("fill %+v has no id or a negative, non-finite or oversized number", fl)
		}
	})
}
