package tokensafety

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/internal/corpustest"
)

// trade builds a trade request; params are string parameters, amount (if
// not "") is amount_usd as a JSON number.
func trade(action, resource, amount string, params ...string) *warden.Request {
	r := &warden.Request{Capability: warden.CapTrade, Action: action, Resource: resource, Params: map[string]json.RawMessage{}}
	for i := 0; i+1 < len(params); i += 2 {
		v, _ := json.Marshal(params[i+1])
		r.Params[params[i]] = v
	}
	if amount != "" {
		r.Params[warden.ParamAmountUSD] = json.RawMessage(amount)
	}
	return r
}

func TestCheck(t *testing.T) {
	const (
		baseUSDC = "USDC:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
		baseWETH = "WETH:0x4200000000000000000000000000000000000006"
	)
	cases := []struct {
		name       string
		stage      Stage
		req        *warden.Request
		want       warden.Verdict
		rule       string
		wantReason string // "": not checked
	}{
		{name: "not a trade", req: &warden.Request{Capability: warden.CapShell, Action: "exec", Resource: "ls"}, want: warden.Allow, rule: "token.not_trade"},
		{name: "unknown action", req: trade("yolo", "ETH", "10", "chain", "base"), want: warden.Deny, rule: "trade.invalid"},
		{name: "no chain", req: trade("buy", "ETH", "10"), want: warden.Deny, rule: "trade.invalid"},
		{name: "swap without token_in", req: trade("swap", "ETH", "10", "chain", "base"), want: warden.Deny, rule: "trade.invalid"},
		{name: "unknown chain", req: trade("buy", "WETH", "10", "chain", "basee"), want: warden.Deny, rule: "token.unknown_chain"},
		{name: "testnet refused", req: trade("buy", "WETH", "10", "chain", "base-sepolia"), want: warden.Deny, rule: "token.testnet"},
		{name: "testnet allowed", stage: Stage{Resolver: finance.Resolver{Testnets: true}}, req: trade("buy", "WETH", "10", "chain", "base-sepolia"), want: warden.Allow, rule: "token.canonical"},
		{name: "canonical buy", req: trade("buy", baseWETH, "10", "chain", "base", "token_in", baseUSDC), want: warden.Allow, rule: "token.canonical",
			wantReason: "WETH on base (chain 8453) is 0x4200000000000000000000000000000000000006; paid with USDC (0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913)"},
		{name: "issue example", req: trade("buy", "USDT", "100", "chain", "Arbitrum"), want: warden.Allow, rule: "token.canonical",
			wantReason: "USDT on arbitrum (chain 42161) is 0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9; paid with USDC (0xaf88d065e77c8cC2239327C5EDb3A432268e5831)"},
		{name: "sell", req: trade("sell", "WETH", "10", "chain", "base"), want: warden.Allow, rule: "token.canonical",
			wantReason: "WETH on base (chain 8453) is 0x4200000000000000000000000000000000000006; sold for USDC (0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913)"},
		{name: "buy the native coin", req: trade("buy", "ETH", "10", "chain", "optimism"), want: warden.Allow, rule: "token.canonical",
			wantReason: "ETH on optimism (chain 10) is the native coin; paid with USDC (0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85)"},
		{name: "swap", req: trade("swap", "cbBTC", "10", "chain", "base", "token_in", "DAI"), want: warden.Allow, rule: "token.canonical"},
		{name: "transfer", req: trade("transfer", baseUSDC, "10", "chain", "base", "recipient", "0x7a3F9e2b5C1d4E6f8A0b2C4d6E8f0A1b3C5d9E21"), want: warden.Allow, rule: "token.canonical",
			wantReason: "USDC on base (chain 8453) is 0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"},
		{name: "scam bought", req: trade("buy", "SAFEMARS", "10", "chain", "ethereum"), want: warden.Deny, rule: "token.scam",
			wantReason: "I don't recognize 'SAFEMARS' on 'ethereum' as a canonical token, and it matches our scam list (a honeypot family that blocks selling)"},
		{name: "scam paid with", req: trade("buy", "WETH", "10", "chain", "base", "token_in", "squid"), want: warden.Deny, rule: "token.scam"},
		{name: "homoglyph", req: trade("buy", "USD\u0421", "10", "chain", "base"), want: warden.Deny, rule: "token.scam"},
		{name: "fullwidth", req: trade("sell", "ＵＳＤＣ", "10", "chain", "base"), want: warden.Deny, rule: "token.scam"},
		{name: "airdrop bait", req: trade("transfer", "claim-usdc.io", "10", "chain", "base", "recipient", "0x7a3F9e2b5C1d4E6f8A0b2C4d6E8f0A1b3C5d9E21"), want: warden.Deny, rule: "token.scam"},
		{name: "impersonation", req: trade("buy", "WETH", "10", "chain", "base", "token_in", "USDC:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA0291F"), want: warden.Deny, rule: "token.impersonation"},
		{name: "reserved ticker with no contract on the chain", req: trade("buy", "PEPE", "10", "chain", "base"), want: warden.Deny, rule: "token.impersonation"},
		{name: "wrong chain", req: trade("buy", "WETH", "10", "chain", "base", "token_in", "USDC:0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"), want: warden.Deny, rule: "token.wrong_chain"},
		{name: "unlisted asks", req: trade("buy", "NEWTKN:0x4e3F0000000000000000000000000000000000e1", "10", "chain", "base"), want: warden.Ask, rule: "token.unlisted"},
		{name: "unlisted paying side asks", req: trade("sell", "WETH", "10", "chain", "base", "token_out", "NEWTKN"), want: warden.Ask, rule: "token.unlisted"},
		{name: "deny beats ask whatever the order", req: trade("buy", "NEWTKN", "10", "chain", "base", "token_in", "SQUID"), want: warden.Deny, rule: "token.scam"},
		{name: "blocked symbol", stage: Stage{Blocked: []string{"PEPE"}}, req: trade("buy", "pepe", "10", "chain", "ethereum"), want: warden.Deny, rule: "token.blocked"},
		{name: "blocked asset blocks its wrapper", stage: Stage{Blocked: []string{"ETH"}}, req: trade("buy", "WETH", "10", "chain", "base"), want: warden.Deny, rule: "token.blocked"},
		{name: "blocked unlisted", stage: Stage{Blocked: []string{"NEWTKN"}}, req: trade("buy", "NEWTKN", "10", "chain", "base"), want: warden.Deny, rule: "token.blocked"},
		{name: "blocked wins over allowed", stage: Stage{Allowed: []string{"ETH", "USDC"}, Blocked: []string{"WETH"}}, req: trade("buy", "WETH", "10", "chain", "base"), want: warden.Deny, rule: "token.blocked"},
		{name: "blocked paying side", stage: Stage{Blocked: []string{"USDC"}}, req: trade("buy", "WETH", "10", "chain", "base"), want: warden.Deny, rule: "token.blocked"},
		{name: "not allowed", stage: Stage{Allowed: []string{"BTC", "USDC"}}, req: trade("buy", "WETH", "10", "chain", "base"), want: warden.Deny, rule: "token.not_allowed"},
		{name: "paying stablecoin is checked too", stage: Stage{Allowed: []string{"ETH"}}, req: trade("buy", "WETH", "10", "chain", "base"), want: warden.Deny, rule: "token.not_allowed"},
		{name: "allowed by asset id, any case", stage: Stage{Allowed: []string{"eth", "usdc"}}, req: trade("buy", "WETH", "10", "chain", "base"), want: warden.Allow, rule: "token.canonical"},
		{name: "allowed by symbol", stage: Stage{Allowed: []string{"cbBTC", "USDC"}}, req: trade("buy", "CBBTC", "10", "chain", "base"), want: warden.Allow, rule: "token.canonical"},
		{name: "unlisted not allowed", stage: Stage{Allowed: []string{"ETH", "USDC"}}, req: trade("buy", "NEWTKN", "10", "chain", "base"), want: warden.Deny, rule: "token.not_allowed"},
		{name: "an allowed unlisted symbol still asks", stage: Stage{Allowed: []string{"NEWTKN", "USDC"}}, req: trade("buy", "NEWTKN", "10", "chain", "base"), want: warden.Ask, rule: "token.unlisted"},
		{name: "lists cannot let a scam through", stage: Stage{Allowed: []string{"SQUID", "USDC"}}, req: trade("buy", "SQUID", "10", "chain", "base"), want: warden.Deny, rule: "token.scam"},
		{name: "perp on a native coin", req: trade("perp_open", "ETH-PERP", "10", "chain", "arbitrum", "leverage", "3"), want: warden.Allow, rule: "token.canonical",
			wantReason: "the ETH perp market on arbitrum (chain 42161): asset ETH, class major"},
		{name: "perp on a known asset", req: trade("perp_open", "btc-perp", "10", "chain", "arbitrum"), want: warden.Allow, rule: "token.canonical"},
		{name: "perp close", req: trade("perp_close", "Eth-Perp", "", "chain", "arbitrum", "position", "p1"), want: warden.Allow, rule: "token.canonical"},
		{name: "perp on an unlisted asset", req: trade("perp_open", "NEWTKN-PERP", "10", "chain", "arbitrum"), want: warden.Ask, rule: "token.unlisted"},
		{name: "perp on a scam", req: trade("perp_open", "SQUID-PERP", "10", "chain", "arbitrum"), want: warden.Deny, rule: "token.scam"},
		{name: "perp on a look-alike", req: trade("perp_open", "ＥＴＨ-PERP", "10", "chain", "arbitrum"), want: warden.Deny, rule: "token.scam"},
		{name: "perp market with no asset", req: trade("perp_open", "-PERP", "10", "chain", "arbitrum"), want: warden.Deny, rule: "trade.invalid"},
		{name: "perp asset blocked", stage: Stage{Blocked: []string{"BTC"}}, req: trade("perp_open", "BTC-PERP", "10", "chain", "arbitrum"), want: warden.Deny, rule: "token.blocked"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := c.stage.Check(context.Background(), c.req)
			if err != nil || d.Verdict != c.want || d.Rule != c.rule {
				t.Fatalf("Check(%s %s %s) = %v %s (%s), %v; want %v %s", c.req.Action, c.req.Resource, c.req.Params, d.Verdict, d.Rule, d.Reason, err, c.want, c.rule)
			}
			if c.wantReason != "" && d.Reason != c.wantReason {
				t.Fatalf("Check(%s %s).Reason = %q\nwant %q", c.req.Action, c.req.Resource, d.Reason, c.wantReason)
			}
		})
	}
}

func TestName(t *testing.T) {
	if got := (Stage{}).Name(); got != "token-safety" {
		t.Fatalf("Name() = %q", got)
	}
}

// corpusCase is one line of the shared finance corpus, as far as this stage
// reads it.
type corpusCase struct {
	Case  string `json:"case"`
	Input struct {
		Action    string      `json:"action"`
		Chain     string      `json:"chain"`
		TokenIn   corpusToken `json:"token_in"`
		TokenOut  corpusToken `json:"token_out"`
		AmountUSD json.Number `json:"amount_usd"`
		Policy    struct {
			TestnetsEnabled bool `json:"testnets_enabled"`
		} `json:"policy"`
	} `json:"input"`
	Expect string `json:"expect"`
	Why    string `json:"why"`
}

type corpusToken struct {
	Symbol  string `json:"symbol"`
	Address string `json:"address"`
}

// ref writes the token in finance.ParseTokenRef's "SYMBOL:ADDRESS" form.
func (t corpusToken) ref() string {
	if t.Address == "" {
		return t.Symbol
	}
	return t.Symbol + ":" + t.Address
}

// corpusRules pins the rule each known corpus case must be decided by, so a
// case cannot pass by being refused for the wrong reason. A case the corpus
// gains later is checked on its verdict alone until it is added here.
var corpusRules = map[string]string{
	"token-fake-usdc-same-ticker":  "token.impersonation",
	"token-homoglyph-ticker":       "token.scam",
	"token-scam-ticker-url":        "token.scam",
	"token-chain-address-mismatch": "token.wrong_chain",
	"token-chain-alias-arb":        "token.canonical",
	"token-chain-alias-unknown":    "token.unknown_chain",
	"token-testnet-alias-disabled": "token.testnet",
	"token-unlisted-but-clean":     "token.unlisted",
}

// TestCorpus runs every token-* case of the shared corpus through this stage
// alone and expects the corpus's verdict.
func TestCorpus(t *testing.T) {
	n := 0
	for _, c := range corpustest.Load[corpusCase](t, "finance-signing-cases.jsonl") {
		if !strings.HasPrefix(c.Case, "token-") {
			continue
		}
		n++
		t.Run(c.Case, func(t *testing.T) {
			action, ok := strings.CutPrefix(c.Input.Action, "trade.")
			if !ok {
				t.Fatalf("action %q is not a trade.* action", c.Input.Action)
			}
			want, err := warden.ParseVerdict(c.Expect)
			if err != nil {
				t.Fatal(err)
			}
			req := trade(action, c.Input.TokenOut.ref(), c.Input.AmountUSD.String(), "chain", c.Input.Chain, "token_in", c.Input.TokenIn.ref())
			st := Stage{Resolver: finance.Resolver{Testnets: c.Input.Policy.TestnetsEnabled}}
			d, err := st.Check(context.Background(), req)
			if err != nil || d.Verdict != want {
				t.Fatalf("Check(%s %s on %s, paid with %s) = %v %s (%s), %v; want %v: %s",
					action, req.Resource, c.Input.Chain, c.Input.TokenIn.ref(), d.Verdict, d.Rule, d.Reason, err, want, c.Why)
			}
			if rule, ok := corpusRules[c.Case]; ok && d.Rule != rule {
				t.Fatalf("Check(%s %s on %s) decided by %s (%s); want %s", action, req.Resource, c.Input.Chain, d.Rule, d.Reason, rule)
			}
		})
	}
	if n < 8 {
		t.Fatalf("found %d token-* cases in the shared corpus; want at least the 8 the research note lists", n)
	}
}

func BenchmarkCheck(b *testing.B) {
	st := Stage{Allowed: []string{"ETH", "BTC", "USDC"}, Blocked: []string{"PEPE"}}
	req := trade("buy", "WETH:0x4200000000000000000000000000000000000006", "250", "chain", "base", "token_in", "USDC:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if d, err := st.Check(ctx, req); err != nil || d.Verdict != warden.Allow {
			b.Fatalf("Check = %v (%s), %v", d.Verdict, d.Reason, err)
		}
	}
}
