// Package tokensafety is the token-safety stage of the trade capability, the
// first the FullRiskManager runs: it resolves the order's chain and every
// token the order touches against warden's canonical registry
// (finance.Resolver), and refuses scams, look-alike tickers, impersonating
// contracts, tokens of another chain, unknown chains and testnets. A clean
// token that is not in the registry goes to a human (ask): warden never
// auto-trades an unknown token. The operator's allowed and blocked token
// lists apply on top. The stage does no I/O.
package tokensafety

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
)

// Stage is the token-safety stage.
//
// Allowed and Blocked are the policy's safety.allowedTokens and
// safety.blockedTokens: symbols or asset ids, matched case-insensitively
// against both the token's symbol and its asset id (blocking ETH blocks WETH
// too). An empty Allowed allows every token the registry resolves; a
// non-empty one is a complete list, so every token an order touches must be
// in it — including a stablecoin that is only the paying or receiving side
// of a swap: an operator who allows ETH and pays in USDC lists both. That
// keeps the list's meaning simple (nothing outside it moves) at the cost of
// one more entry. Blocked wins over Allowed. Neither list can let a scam or
// an impersonation through: the registry refuses those first.
//
// The zero value resolves against the registry, refuses testnets, and
// applies no lists.
type Stage struct {
	Resolver         finance.Resolver
	Allowed, Blocked []string
}

var _ warden.Stage = Stage{}

// Name implements warden.Stage.
func (Stage) Name() string { return "token-safety" }

// Check implements warden.Stage. The worst verdict over the tokens the order
// touches wins (deny over ask over allow); among equals, the first token's.
func (st Stage) Check(_ context.Context, req *warden.Request) (warden.Decision, error) {
	if req.Capability != warden.CapTrade {
		return warden.Allowf("token.not_trade", "not a trade"), nil
	}
	o, err := finance.ParseOrder(req)
	if err != nil {
		return warden.Denyf("trade.invalid", err.Error()), nil
	}
	chain, err := st.Resolver.Chain(o.Chain)
	if err != nil {
		return refusal(err), nil
	}
	refs, err := touched(o)
	if err != nil {
		return warden.Denyf("trade.invalid", err.Error()), nil
	}
	worst := warden.Decision{Verdict: warden.Allow}
	resolved := make([]finance.Token, 0, len(refs))
	for i, ref := range refs {
		tok, d := st.judge(chain, ref, o.Action == finance.PerpOpen || o.Action == finance.PerpClose)
		if i == 0 || d.Verdict.Stronger(worst.Verdict) {
			worst = d
		}
		resolved = append(resolved, tok)
	}
	if worst.Verdict != warden.Allow {
		return worst, nil
	}
	return warden.Allowf("token.canonical", describe(o, chain, resolved)), nil
}

// touched lists what the order touches, its main token first: what a buy or
// a swap receives, what a sell gives, the asset of a perp market, the token
// transferred.
func touched(o *finance.Order) ([]finance.TokenRef, error) {
	switch o.Action {
	case finance.Buy, finance.Swap:
		return []finance.TokenRef{finance.ParseTokenRef(o.TokenOut), finance.ParseTokenRef(o.TokenIn)}, nil
	case finance.Sell:
		return []finance.TokenRef{finance.ParseTokenRef(o.TokenIn), finance.ParseTokenRef(o.TokenOut)}, nil
	case finance.PerpOpen, finance.PerpClose:
		asset := finance.PerpAsset(o.Token)
		if asset == "" || strings.EqualFold(asset, "-PERP") {
			return nil, fmt.Errorf("the perp market %q names no asset", o.Token)
		}
		return []finance.TokenRef{finance.ParseTokenRef(asset)}, nil
	}
	return []finance.TokenRef{finance.ParseTokenRef(o.Token)}, nil
}

// judge resolves one token and applies the lists to it. A perp market's
// asset need not be a token on the chain: a known asset id (BTC, DOGE…) is a
// market warden knows, once the scam rules have passed it.
func (st Stage) judge(chain finance.Chain, ref finance.TokenRef, perp bool) (finance.Token, warden.Decision) {
	if ref.Symbol == "" && ref.Address == "" {
		return finance.Token{}, warden.Denyf("trade.invalid", "the order names an empty token")
	}
	tok, err := st.Resolver.Token(chain, ref)
	unlisted := finance.IsUnlisted(err)
	if err != nil && !unlisted {
		return tok, refusal(err)
	}
	if unlisted && perp && ref.Address == "" && finance.Classify(ref.Symbol) != finance.ClassUnknown {
		id := strings.ToUpper(ref.Symbol)
		tok, unlisted = finance.Token{Symbol: id, Chain: chain, AssetID: id, Class: finance.Classify(id)}, false
	}
	name := tok.Symbol
	if name == "" {
		name = tok.AssetID
	}
	if listed(st.Blocked, tok) {
		return tok, warden.Denyf("token.blocked", fmt.Sprintf("%s (asset %s) is on the policy's blocked tokens (safety.blockedTokens)", name, tok.AssetID))
	}
	if len(st.Allowed) > 0 && !listed(st.Allowed, tok) {
		return tok, warden.Denyf("token.not_allowed", fmt.Sprintf("%s (asset %s) is not among the policy's allowed tokens (safety.allowedTokens: %s)", name, tok.AssetID, strings.Join(st.Allowed, ", ")))
	}
	if unlisted {
		return tok, warden.Askf("token.unlisted", err.Error())
	}
	return tok, warden.Allowf("token.canonical", tok.String())
}

// refusal turns a resolver error into a deny under its problem's rule.
func refusal(err error) warden.Decision {
	var te *finance.TokenError
	if errors.As(err, &te) {
		return warden.Denyf("token."+string(te.Problem), te.Message)
	}
	return warden.Denyf("token.unresolved", err.Error())
}

// listed reports whether the token's symbol or asset id is in list.
func listed(list []string, t finance.Token) bool {
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s != "" && (strings.EqualFold(s, t.Symbol) || strings.EqualFold(s, t.AssetID)) {
			return true
		}
	}
	return false
}

// describe records what the order resolved to, for the audit log:
// "USDT on arbitrum (chain 42161) is 0xFd08…; paid with USDC (0xaf88…)".
func describe(o *finance.Order, chain finance.Chain, ts []finance.Token) string {
	main := ts[0]
	var b strings.Builder
	if o.Action == finance.PerpOpen || o.Action == finance.PerpClose {
		fmt.Fprintf(&b, "the %s perp market on %s (chain %d): asset %s, class %s", main.AssetID, chain.Name, chain.ID, main.AssetID, main.Class)
		if main.Address != "" {
			fmt.Fprintf(&b, "; %s is %s", main.Symbol, main.Address)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%s on %s (chain %d) is %s", main.Symbol, chain.Name, chain.ID, where(main))
	if len(ts) > 1 {
		side := "paid with"
		if o.Action == finance.Sell {
			side = "sold for"
		}
		fmt.Fprintf(&b, "; %s %s (%s)", side, ts[1].Symbol, where(ts[1]))
	}
	return b.String()
}

func where(t finance.Token) string {
	if t.Address == "" {
		return "the native coin"
	}
	return t.Address
}
