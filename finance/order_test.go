package finance

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/agentwarden/warden"
)

func TestParseOrder(t *testing.T) {
	cases := []struct {
		name, action, resource string
		params                 string
		ok                     bool
		in, out                string
	}{
		{"buy defaults to USDC", "buy", "ETH", `{"chain":"base","amount_usd":"250"}`, true, "USDC", "ETH"},
		{"sell defaults to USDC", "sell", "WETH", `{"chain":"base","amount_usd":100}`, true, "WETH", "USDC"},
		{"swap needs token_in", "swap", "cbBTC", `{"chain":"base","amount_usd":"100"}`, false, "", ""},
		{"swap", "swap", "cbBTC", `{"chain":"base","amount_usd":"100","token_in":"WETH"}`, true, "WETH", "cbBTC"},
		{"no chain", "buy", "ETH", `{"amount_usd":"250"}`, false, "", ""},
		{"negative amount", "buy", "ETH", `{"chain":"base","amount_usd":"-5"}`, false, "", ""},
		{"NaN leverage", "perp_open", "ETH-PERP", `{"chain":"arb","amount_usd":"5","leverage":"NaN"}`, false, "", ""},
		{"bad side", "perp_open", "ETH-PERP", `{"chain":"arb","amount_usd":"5","side":"sideways"}`, false, "", ""},
		{"transfer needs a recipient", "transfer", "USDC", `{"chain":"base","amount_usd":"5"}`, false, "", ""},
		{"unknown action", "borrow", "ETH", `{"chain":"base"}`, false, "", ""},
		{"no token", "buy", " ", `{"chain":"base"}`, false, "", ""},
		{"control characters", "buy", "ETH", `{"chain":"ba\u0000se"}`, false, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var p map[string]json.RawMessage
			if err := json.Unmarshal([]byte(c.params), &p); err != nil {
				t.Fatal(err)
			}
			o, err := ParseOrder(&warden.Request{Capability: warden.CapTrade, Action: c.action, Resource: c.resource, Params: p})
			if (err == nil) != c.ok {
				t.Fatalf("ParseOrder = %+v, %v; want ok %v", o, err, c.ok)
			}
			if err == nil && (o.TokenIn != c.in || o.TokenOut != c.out) {
				t.Errorf("in %q out %q, want %q %q", o.TokenIn, o.TokenOut, c.in, c.out)
			}
		})
	}
}

// FuzzParseOrder: any request either parses into an order the stages can
// rely on (a known action, a token, a chain, a non-negative amount, finite
// numbers) or is an error; it never panics.
func FuzzParseOrder(f *testing.F) {
	f.Add("buy", "ETH", `{"chain":"base","amount_usd":"250"}`)
	f.Add("perp_open", "ETH-PERP", `{"chain":"arb","amount_usd":"300","leverage":"10","side":"short"}`)
	f.Add("transfer", "USDC:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", `{"chain":"base","amount_usd":50,"recipient":"0x7a3F9e2b5C1d4E6f8A0b2C4d6E8f0A1b3C5d9E21"}`)
	f.Add("swap", "cbBTC", `{"chain":"base","token_in":"WETH","amount_usd":"1e3","max_slippage":"0.01"}`)
	f.Fuzz(func(t *testing.T, action, resource, params string) {
		var p map[string]json.RawMessage
		if json.Unmarshal([]byte(params), &p) != nil {
			return
		}
		o, err := ParseOrder(&warden.Request{Capability: warden.CapTrade, Action: action, Resource: resource, Params: p})
		if err != nil {
			return
		}
		if !isAction(o.Action) || o.Token == "" || o.Chain == "" || o.AmountUSD < 0 {
			t.Fatalf("parsed an unusable order: %+v", o)
		}
		for _, f := range []float64{o.Leverage} {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				t.Fatalf("non-finite number in %+v", o)
			}
		}
		if o.Notional() < 0 {
			t.Fatalf("negative notional in %+v", o)
		}
	})
}
