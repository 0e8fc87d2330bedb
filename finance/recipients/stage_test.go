package recipients

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/internal/corpustest"
)

const (
	wallet      = "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23" // the corpus's wallet
	friend      = "0x7a3F9e2b5C1d4E6f8A0b2C4d6E8f0A1b3C5d9E21" // the corpus's allowlisted recipient
	stranger    = "0x5B38Da6a701c568545dCfcB03FcB875f56beddC4"
	poisoned    = "0x7a3F0d1c2b3a4f5e6d7c8b9a0f1e2d3c4b5a9E21" // friend's first and last 4
	walletTwin  = "0x2C75000000000000000000000000000000005C23" // the wallet's first and last 4, other case
	baseUSDC    = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	baseWETH    = "0x4200000000000000000000000000000000000006"
	solanaUSDC  = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	solanaOwner = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"
)

// trade builds a trade request from string parameters; amount (if not "")
// is amount_usd as a JSON number.
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

func protective(r *warden.Request) *warden.Request {
	r.Protective = true
	return r
}

func TestCheck(t *testing.T) {
	std := Stage{Wallet: wallet, Allowlist: []string{friend}}
	cases := []struct {
		name       string
		stage      *Stage // nil: the corpus's wallet and allowlist
		req        *warden.Request
		want       warden.Verdict
		rule       string
		wantReason string // a part the reason must contain; "" not checked
	}{
		{name: "not a trade", req: &warden.Request{Capability: warden.CapNetwork, Action: "get", Resource: "https://example.com"}, want: warden.Allow, rule: "recipient.not_trade"},
		{name: "transfer without recipient", req: trade("transfer", "USDC", "10", "chain", "base"), want: warden.Deny, rule: "trade.invalid"},
		{name: "malformed param", req: trade("buy", "WETH", `"ten"`, "chain", "base"), want: warden.Deny, rule: "trade.invalid"},

		// Swaps, perps and protective exits pay the own wallet.
		{name: "buy, no recipient", req: trade("buy", "WETH", "200", "chain", "base"), want: warden.Allow, rule: "recipient.self"},
		{name: "buy to the own wallet, other case", req: trade("buy", "WETH", "200", "chain", "base", "recipient", strings.ToLower(wallet)), want: warden.Allow, rule: "recipient.self"},
		{name: "buy to a third party", req: trade("buy", "WETH", "200", "chain", "base", "recipient", stranger), want: warden.Deny, rule: "recipient.not_self",
			wantReason: "a third-party recipient (\"" + stranger + "\") turns it into a transfer of $200"},
		{name: "buy to an allowlisted friend", req: trade("buy", "WETH", "200", "chain", "base", "recipient", friend), want: warden.Deny, rule: "recipient.not_self"},
		{name: "sell to a third party", req: trade("sell", "WETH", "50", "chain", "base", "recipient", stranger), want: warden.Deny, rule: "recipient.not_self"},
		{name: "swap to a third party", req: trade("swap", "WETH", "50", "chain", "base", "token_in", "USDC", "recipient", stranger), want: warden.Deny, rule: "recipient.not_self"},
		{name: "perp open to a third party", req: trade("perp_open", "ETH-PERP", "50", "chain", "arbitrum", "recipient", stranger), want: warden.Deny, rule: "recipient.not_self"},
		{name: "perp close to a third party", req: trade("perp_close", "ETH-PERP", "", "chain", "arbitrum", "position", "p1", "recipient", stranger), want: warden.Deny, rule: "recipient.not_self",
			wantReason: "a transfer of funds"},
		{name: "swap to a garbage recipient", req: trade("buy", "WETH", "50", "chain", "base", "recipient", "me"), want: warden.Deny, rule: "recipient.not_self"},
		{name: "no wallet, no recipient", stage: &Stage{}, req: trade("buy", "WETH", "50", "chain", "base"), want: warden.Allow, rule: "recipient.self"},
		{name: "no wallet, any recipient", stage: &Stage{}, req: trade("buy", "WETH", "50", "chain", "base", "recipient", wallet), want: warden.Deny, rule: "recipient.not_self",
			wantReason: "no own wallet is configured"},
		{name: "protective exit to the own wallet", req: protective(trade("sell", "WETH", "3000", "chain", "base", "recipient", wallet)), want: warden.Allow, rule: "recipient.self"},
		{name: "protective exit elsewhere", req: protective(trade("sell", "WETH", "3000", "chain", "base", "recipient", stranger)), want: warden.Deny, rule: "recipient.not_self",
			wantReason: "a protective sell's output goes to the own wallet"},
		{name: "protective transfer to the allowlist", req: protective(trade("transfer", "USDC", "3000", "chain", "base", "recipient", friend)), want: warden.Deny, rule: "recipient.not_self"},

		// Transfers.
		{name: "allowlisted", req: trade("transfer", "USDC", "50", "chain", "base", "recipient", friend), want: warden.Allow, rule: "recipient.allowlisted"},
		{name: "allowlisted, lower case", req: trade("transfer", "USDC", "50", "chain", "base", "recipient", strings.ToLower(friend)), want: warden.Allow, rule: "recipient.allowlisted"},
		{name: "allowlist entry in other case", stage: &Stage{Wallet: wallet, Allowlist: []string{" " + strings.ToUpper(friend[2:]) + " ", strings.ToLower(friend)}}, req: trade("transfer", "USDC", "50", "chain", "base", "recipient", friend), want: warden.Allow, rule: "recipient.allowlisted"},
		{name: "to the own wallet", req: trade("transfer", "USDC", "50", "chain", "base", "recipient", wallet), want: warden.Allow, rule: "recipient.self"},
		{name: "new recipient", req: trade("transfer", "USDC", "50", "chain", "base", "recipient", stranger), want: warden.Ask, rule: "recipient.new",
			wantReason: "first payment to " + stranger + ": a human confirms the full address"},
		{name: "no wallet, no allowlist", stage: &Stage{}, req: trade("transfer", "USDC", "50", "chain", "base", "recipient", stranger), want: warden.Ask, rule: "recipient.new"},
		{name: "poisoned look-alike of the allowlist", req: trade("transfer", "USDC", "50", "chain", "base", "recipient", poisoned), want: warden.Deny, rule: "recipient.lookalike",
			wantReason: "looks like the allowlisted address " + friend},
		{name: "look-alike in other case", req: trade("transfer", "USDC", "50", "chain", "base", "recipient", strings.ToUpper("0x"+poisoned[2:])), want: warden.Deny, rule: "recipient.lookalike"},
		{name: "look-alike of the own wallet", req: trade("transfer", "USDC", "50", "chain", "base", "recipient", walletTwin), want: warden.Deny, rule: "recipient.lookalike",
			wantReason: "the own wallet"},
		{name: "same prefix only", req: trade("transfer", "USDC", "50", "chain", "base", "recipient", "0x7a3F000000000000000000000000000000000000"), want: warden.Ask, rule: "recipient.new"},
		{name: "same suffix only", req: trade("transfer", "USDC", "50", "chain", "base", "recipient", "0x0000000000000000000000000000000000009E21"), want: warden.Ask, rule: "recipient.new"},
		{name: "to the token's contract", req: trade("transfer", "USDC:"+baseUSDC, "50", "chain", "base", "recipient", baseUSDC), want: warden.Deny, rule: "recipient.token_contract",
			wantReason: "burned"},
		{name: "to the token's contract, by symbol", req: trade("transfer", "usdc", "50", "chain", "base", "recipient", strings.ToLower(baseUSDC)), want: warden.Deny, rule: "recipient.token_contract"},
		{name: "to an unlisted token's own contract", req: trade("transfer", "NEWTKN:0x4e3F0000000000000000000000000000000000e1", "50", "chain", "base", "recipient", "0x4e3F0000000000000000000000000000000000e1"), want: warden.Deny, rule: "recipient.token_contract"},
		{name: "to another token's contract", req: trade("transfer", "USDC", "50", "chain", "base", "recipient", baseWETH), want: warden.Deny, rule: "recipient.token_contract",
			wantReason: "the WETH token contract on base"},
		{name: "ENS name", req: trade("transfer", "USDC", "50", "chain", "base", "recipient", "alice.eth"), want: warden.Deny, rule: "recipient.invalid"},
		{name: "short address", req: trade("transfer", "USDC", "50", "chain", "base", "recipient", "0xe8e47a686b"), want: warden.Deny, rule: "recipient.invalid"},
		{name: "41 hex digits", req: trade("transfer", "USDC", "50", "chain", "base", "recipient", friend+"1"), want: warden.Deny, rule: "recipient.invalid"},
		{name: "non-hex digit", req: trade("transfer", "USDC", "50", "chain", "base", "recipient", "0x7a3F9e2b5C1d4E6f8A0b2C4d6E8f0A1b3C5d9E2g"), want: warden.Deny, rule: "recipient.invalid"},
		{name: "Solana address on an EVM chain", req: trade("transfer", "USDC", "50", "chain", "base", "recipient", solanaOwner), want: warden.Deny, rule: "recipient.invalid"},
		{name: "Solana transfer", req: trade("transfer", "USDC", "50", "chain", "solana", "recipient", solanaOwner), want: warden.Ask, rule: "recipient.new"},
		{name: "EVM address on Solana", req: trade("transfer", "USDC", "50", "chain", "sol", "recipient", friend), want: warden.Deny, rule: "recipient.invalid"},
		{name: "Solana base58 excludes 0OIl", req: trade("transfer", "USDC", "50", "chain", "solana", "recipient", "0OIl"+solanaOwner[4:]), want: warden.Deny, rule: "recipient.invalid"},
		{name: "Solana mint as recipient", req: trade("transfer", "USDC", "50", "chain", "solana", "recipient", solanaUSDC), want: warden.Deny, rule: "recipient.token_contract"},
		{name: "Solana allowlisted", stage: &Stage{Allowlist: []string{solanaOwner}}, req: trade("transfer", "SOL", "50", "chain", "solana", "recipient", solanaOwner), want: warden.Allow, rule: "recipient.allowlisted"},
		{name: "Solana look-alike", stage: &Stage{Allowlist: []string{solanaOwner}}, req: trade("transfer", "SOL", "50", "chain", "solana", "recipient", "9WzDaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaAWWM"), want: warden.Deny, rule: "recipient.lookalike"},
		{name: "Solana case differs: not a look-alike", stage: &Stage{Allowlist: []string{solanaOwner}}, req: trade("transfer", "SOL", "50", "chain", "solana", "recipient", "9wzdaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaAWWM"), want: warden.Ask, rule: "recipient.new"},
		{name: "unknown chain: the address is still judged", req: trade("transfer", "USDC", "50", "chain", "basee", "recipient", stranger), want: warden.Ask, rule: "recipient.new"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := std
			if c.stage != nil {
				st = *c.stage
			}
			d, err := st.Check(context.Background(), c.req)
			if err != nil || d.Verdict != c.want || d.Rule != c.rule {
				t.Fatalf("Check(%s %s %s) = %v %s (%s), %v; want %v %s", c.req.Action, c.req.Resource, c.req.Params, d.Verdict, d.Rule, d.Reason, err, c.want, c.rule)
			}
			if c.wantReason != "" && !strings.Contains(d.Reason, c.wantReason) {
				t.Fatalf("Check(%s %s).Reason = %q\nwant it to contain %q", c.req.Action, c.req.Resource, d.Reason, c.wantReason)
			}
		})
	}
}

func TestName(t *testing.T) {
	if got := (Stage{}).Name(); got != "recipients" {
		t.Fatalf("Name() = %q", got)
	}
}

// FuzzLookalike: a look-alike is never the same address, and the relation
// is symmetric.
func FuzzLookalike(f *testing.F) {
	f.Add(friend, poisoned, false)
	f.Add(wallet, walletTwin, false)
	f.Add(friend, strings.ToLower(friend), false)
	f.Add(solanaOwner, "9WzDaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaAWWM", true)
	f.Fuzz(func(t *testing.T, a, b string, solana bool) {
		got := lookalike(a, b, solana)
		if got && finance.SameAddress(a, b) {
			t.Fatalf("lookalike(%q, %q) for the same address", a, b)
		}
		if got != lookalike(b, a, solana) {
			t.Fatalf("lookalike(%q, %q) = %v but not the other way round", a, b, got)
		}
	})
}

// corpusCase is one line of the shared finance corpus, as far as this stage
// reads it.
type corpusCase struct {
	Case  string `json:"case"`
	Input struct {
		Action    string      `json:"action"`
		Chain     string      `json:"chain"`
		Wallet    string      `json:"wallet"`
		Token     corpusToken `json:"token"`
		TokenIn   corpusToken `json:"token_in"`
		TokenOut  corpusToken `json:"token_out"`
		Recipient string      `json:"recipient"`
		To        string      `json:"to"`
		Allowlist []string    `json:"allowlist"`
		AmountUSD json.Number `json:"amount_usd"`
	} `json:"input"`
	Expect string `json:"expect"`
	Why    string `json:"why"`
}

type corpusToken struct {
	Symbol  string `json:"symbol"`
	Address string `json:"address"`
}

// ref writes the token in finance.ParseTokenRef's "SYMBOL:ADDRESS" form; a
// corpus "address" that is a description, not an address, is left out.
func (t corpusToken) ref() string {
	if !finance.IsEVMAddress(t.Address) {
		return t.Symbol
	}
	return t.Symbol + ":" + t.Address
}

// request turns a corpus input into the trade request the agent would make.
func (c corpusCase) request(t *testing.T) *warden.Request {
	in := c.Input
	recipient := in.Recipient
	if recipient == "" {
		recipient = in.To
	}
	params := []string{"chain", in.Chain, "recipient", recipient}
	switch in.Action {
	case "trade.buy":
		return trade("buy", in.TokenOut.ref(), in.AmountUSD.String(), append(params, "token_in", in.TokenIn.ref())...)
	case "transfer.erc20":
		return trade("transfer", in.Token.ref(), in.AmountUSD.String(), params...)
	case "monitor.exit_order":
		// The stop-loss monitor's exit: a protective sell into a stablecoin.
		return protective(trade("sell", in.TokenIn.ref(), in.AmountUSD.String(), append(params, "token_out", in.TokenOut.ref())...))
	}
	t.Fatalf("action %q has no trade request here", in.Action)
	return nil
}

// corpusRules lists the corpus cases this stage decides alone, with the rule
// that must decide each.
var corpusRules = map[string]string{
	"xfer-allowlisted":          "recipient.allowlisted",
	"xfer-new-recipient":        "recipient.new",
	"xfer-address-poisoning":    "recipient.lookalike",
	"xfer-to-token-contract":    "recipient.token_contract",
	"swap-recipient-not-self":   "recipient.not_self",
	"sl-exit-wrong-recipient":   "recipient.not_self",
	"incident-lobstar-decimals": "recipient.invalid",
	"incident-bankr-grok-morse": "recipient.invalid",
}

// TestCorpus runs the recipient cases of the shared corpus through this
// stage alone, with the corpus's wallet and allowlist.
func TestCorpus(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range corpustest.Load[corpusCase](t, "finance-signing-cases.jsonl") {
		rule, ok := corpusRules[c.Case]
		if !ok {
			continue
		}
		seen[c.Case] = true
		t.Run(c.Case, func(t *testing.T) {
			want, err := warden.ParseVerdict(c.Expect)
			if err != nil {
				t.Fatal(err)
			}
			w := c.Input.Wallet
			if w == "" {
				w = wallet
			}
			st := Stage{Wallet: w, Allowlist: c.Input.Allowlist}
			req := c.request(t)
			d, err := st.Check(context.Background(), req)
			if err != nil || d.Verdict != want || d.Rule != rule {
				t.Fatalf("Check(%s %s %s) = %v %s (%s), %v; want %v %s: %s", req.Action, req.Resource, req.Params, d.Verdict, d.Rule, d.Reason, err, want, rule, c.Why)
			}
		})
	}
	for name := range corpusRules {
		if !seen[name] {
			t.Errorf("the corpus has no case %s", name)
		}
	}
}

func BenchmarkCheck(b *testing.B) {
	st := Stage{Wallet: wallet, Allowlist: []string{friend, stranger}}
	req := trade("transfer", "USDC:"+baseUSDC, "50", "chain", "base", "recipient", poisoned)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if d, err := st.Check(ctx, req); err != nil || d.Verdict != warden.Deny {
			b.Fatalf("Check = %v (%s), %v", d.Verdict, d.Reason, err)
		}
	}
}
