package finance

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/clip"
)

// TokenProblem says why a token reference did not resolve to a canonical
// token. Every kind but Unlisted is a refusal; an unlisted token is one a
// human may still let through.
type TokenProblem string

// Token problems.
const (
	UnknownChain  TokenProblem = "unknown_chain"
	TestnetChain  TokenProblem = "testnet"
	Scam          TokenProblem = "scam"
	Impersonation TokenProblem = "impersonation"
	WrongChain    TokenProblem = "wrong_chain"
	Unlisted      TokenProblem = "unlisted"
)

// TokenError is a token reference that did not resolve. Its message is a
// sentence an LLM can explain to its user.
type TokenError struct {
	Problem TokenProblem
	Message string
}

func (e *TokenError) Error() string { return e.Message }

// IsUnlisted reports whether err is a TokenError for a clean token that is
// not in the registry.
func IsUnlisted(err error) bool {
	var te *TokenError
	return errors.As(err, &te) && te.Problem == Unlisted
}

// Resolver resolves chains and tokens against the registry in source. The
// zero value refuses testnets.
type Resolver struct {
	// Testnets lets testnet chains resolve.
	Testnets bool
}

// Native returns the chain's native coin (ETH on Ethereum, Base, Arbitrum
// and Optimism); ok is false for a chain whose native coin the registry does
// not list.
func (r Resolver) Native(c Chain) (t Token, ok bool) {
	t, ok = registry().native[c.Name]
	return t, ok
}

// Listed returns the canonical token at address on chain c; ok is false for
// an address the registry does not list there.
func (r Resolver) Listed(c Chain, address string) (Token, bool) {
	return canonicalByAddress(c, address)
}

// Chain resolves a chain name or alias ("eth", "mainnet", "arb"…) exactly:
// no fuzzy matching.
func (r Resolver) Chain(name string) (Chain, error) {
	c, ok := chainByAlias(name)
	if !ok {
		return Chain{}, &TokenError{UnknownChain, fmt.Sprintf("I don't recognize the chain %q; use one of %s", clip.String(name, 64), strings.Join(ChainNames(), ", "))}
	}
	if c.Testnet && !r.Testnets {
		return Chain{}, &TokenError{TestnetChain, fmt.Sprintf("%s (chain %d) is a testnet, and this policy trades on mainnets only", c.Name, c.ID)}
	}
	return c, nil
}

// Token resolves ref on chain. A scam ticker or address, a symbol that
// imitates a reserved ticker, or a reserved ticker with an address that is
// not its canonical one on this chain are refused whatever the allow lists
// say. A clean token that is not in the registry returns the token (not
// canonical, class unknown) with an Unlisted error.
func (r Resolver) Token(chain Chain, ref TokenRef) (Token, error) {
	ref = TokenRef{Symbol: strings.TrimSpace(ref.Symbol), Address: strings.TrimSpace(ref.Address)}
	name := clip.String(ref.String(), 64)
	if why, ok := scam(ref); ok {
		return Token{}, &TokenError{Scam, fmt.Sprintf("I don't recognize '%s' on '%s' as a canonical token, and it matches our scam list (%s)", name, chain.Name, why)}
	}
	if ref.Symbol != "" {
		if t, ok := canonicalBySymbol(chain, ref.Symbol); ok {
			if ref.Address != "" && !SameAddress(ref.Address, t.Address) {
				if _, here := canonicalByAddress(chain, ref.Address); !here {
					if other := canonicalElsewhere(chain, ref.Address); len(other) > 0 {
						return Token{}, &TokenError{WrongChain, fmt.Sprintf("%s is %s, not a token on %s; the canonical %s on %s is %s",
							ref.Address, describeListings(other), chain.Name, t.Symbol, chain.Name, orNative(t.Address))}
					}
				}
				return Token{}, &TokenError{Impersonation, fmt.Sprintf("%s claims the ticker %s, but the canonical %s on %s is %s: same ticker, different contract is an impersonation",
					ref.Address, t.Symbol, t.Symbol, chain.Name, orNative(t.Address))}
			}
			return t, nil
		}
	}
	if ref.Address != "" {
		if t, ok := canonicalByAddress(chain, ref.Address); ok {
			if ref.Symbol != "" && !strings.EqualFold(ref.Symbol, t.Symbol) {
				return Token{}, &TokenError{Impersonation, fmt.Sprintf("%s is %s on %s, not %s", t.Address, t.Symbol, chain.Name, clip.String(ref.Symbol, 64))}
			}
			return t, nil
		}
		if other := canonicalElsewhere(chain, ref.Address); len(other) > 0 {
			return Token{}, &TokenError{WrongChain, fmt.Sprintf("%s is %s, not a token on %s", ref.Address, describeListings(other), chain.Name)}
		}
	}
	if ref.Symbol != "" && reservedTicker(ref.Symbol) {
		// A reserved ticker with no canonical contract on this chain.
		return Token{}, &TokenError{Impersonation, fmt.Sprintf("%s has no canonical contract on %s in warden's registry, so any token calling itself that there is not the real one", strings.ToUpper(ref.Symbol), chain.Name)}
	}
	id := strings.ToUpper(ref.Symbol)
	if id == "" {
		id = addrKey(ref.Address) // one id for the address however it is cased
	}
	t := Token{Symbol: ref.Symbol, Chain: chain, Address: ref.Address, AssetID: id, Class: ClassUnknown}
	return t, &TokenError{Unlisted, fmt.Sprintf("I don't recognize '%s' on '%s' as a canonical token; it is not on our scam list, so a human decides", name, chain.Name)}
}

// orNative names a listing's address, or says it is the chain's native coin.
func orNative(address string) string {
	if address == "" {
		return "the native coin"
	}
	return address
}

// Quote resolves a swap order (buy, sell, swap) into the quote a backend
// simulates and executes. MaxSlippage is NaN when the order gave none.
func (r Resolver) Quote(o *Order) (SwapQuote, error) {
	if !o.IsSwap() {
		return SwapQuote{}, warden.Errorf(warden.EInvalid, "a %s is not a swap", o.Action)
	}
	chain, err := r.Chain(o.Chain)
	if err != nil {
		return SwapQuote{}, err
	}
	in, err := r.Token(chain, ParseTokenRef(o.TokenIn))
	if err != nil && !IsUnlisted(err) {
		return SwapQuote{}, err
	}
	out, err := r.Token(chain, ParseTokenRef(o.TokenOut))
	if err != nil && !IsUnlisted(err) {
		return SwapQuote{}, err
	}
	return SwapQuote{In: in, Out: out, AmountUSD: o.AmountUSD, MaxSlippage: o.MaxSlippage, Recipient: o.Recipient}, nil
}

// SlippagePolicy is the slippage stage's settings, shared with the Trader,
// which fills in an order's tolerance from it.
type SlippagePolicy struct {
	// SmallMax applies below SmallBelow, LargeMax above LargeAbove, MidMax
	// between (both boundaries inclusive in the middle tier).
	SmallMax, MidMax, LargeMax float64
	SmallBelow, LargeAbove     warden.USD
	// MinOutputRatio is the least the simulated output may be worth,
	// relative to the input, at oracle prices.
	MinOutputRatio float64
	// MaxLeverage caps perps' leverage.
	MaxLeverage float64
}

// DefaultSlippage is the policy's default: 2 % under $1,000, 1 % up to
// $10,000, 0.5 % above; output worth at least 95 % of the input; leverage
// up to 10.
func DefaultSlippage() SlippagePolicy {
	return SlippagePolicy{SmallMax: 0.02, MidMax: 0.01, LargeMax: 0.005,
		SmallBelow: 1000 * warden.MicrosPerDollar, LargeAbove: 10000 * warden.MicrosPerDollar,
		MinOutputRatio: 0.95, MaxLeverage: 10}
}

// Tolerance is the most slippage (and price impact) an order of amount may
// take.
func (p SlippagePolicy) Tolerance(amount warden.USD) float64 {
	switch {
	case amount < p.SmallBelow:
		return p.SmallMax
	case amount > p.LargeAbove:
		return p.LargeMax
	}
	return p.MidMax
}
