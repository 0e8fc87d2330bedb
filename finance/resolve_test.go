package finance

import (
	"errors"
	"strings"
	"testing"
)

func mustChain(t testing.TB, name string) Chain {
	t.Helper()
	c, err := Resolver{Testnets: true}.Chain(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func problemOf(err error) TokenProblem {
	var te *TokenError
	if errors.As(err, &te) {
		return te.Problem
	}
	return ""
}

func TestResolveToken(t *testing.T) {
	cases := []struct {
		name, chain, ref string
		want             TokenProblem // "" when the token resolves as canonical
		wantSymbol       string
	}{
		{"symbol", "base", "USDC", "", "USDC"},
		{"symbol any case", "base", "usdc", "", "USDC"},
		{"symbol and its address", "base", "USDC:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "", "USDC"},
		{"address alone", "base", "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", "", "USDC"},
		{"native coin", "arbitrum", "ETH", "", "ETH"},
		{"issue example", "arb", "USDT", "", "USDT"},
		{"solana mint", "solana", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "", "USDC"},
		{"same ticker, other contract", "base", "USDC:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA0291F", Impersonation, ""},
		{"ticker over another listing's address", "base", "USDC:0x4200000000000000000000000000000000000006", Impersonation, ""},
		{"address under another ticker", "base", "DAI:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", Impersonation, ""},
		{"reserved ticker absent on the chain", "solana", "WETH", Impersonation, ""},
		{"ethereum USDC on base", "base", "USDC:0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", WrongChain, ""},
		{"ethereum USDC address on base", "base", "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", WrongChain, ""},
		{"base USDC on a testnet", "base-sepolia", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", WrongChain, ""},
		{"SQUID", "ethereum", "SQUID", Scam, ""},
		{"squid lower case", "bsc", "squid", Scam, ""},
		{"SAFEMARS mixed case", "ethereum", "SafeMars", Scam, ""},
		{"SQUID fullwidth", "ethereum", "ＳＱＵＩＤ", Scam, ""},
		{"SQUID with a real address", "base", "SQUID:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", Scam, ""},
		{"Cyrillic С in USDC", "base", "USD\u0421", Scam, ""},
		{"Cyrillic с in usdc", "base", "usd\u0441", Scam, ""},
		{"fullwidth USDC", "base", "ＵＳＤＣ", Scam, ""},
		{"zero-width space in USDC", "base", "US\u200bDC", Scam, ""},
		{"Greek Ε and Τ in ETH", "ethereum", "\u0395\u03a4H", Scam, ""},
		{"homoglyph with an address", "base", "USD\u0421:0x9a1F0000000000000000000000000000000000aB", Scam, ""},
		{"airdrop URL", "base", "claim-usdc.io", Scam, ""},
		{"airdrop URL with address", "base", "claim-usdc.io:0x9a1F0000000000000000000000000000000000aC", Scam, ""},
		{"visit link", "base", "VISIT-WWW.REWARDS.XYZ", Scam, ""},
		{"fullwidth bait word", "base", "ｃｌａｉｍ", Scam, ""},
		{"free tokens", "base", "FreeETH", Scam, ""},
		{"unlisted", "base", "NEWTKN", Unlisted, ""},
		{"unlisted with address", "base", "NEWTKN:0x4e3F0000000000000000000000000000000000e1", Unlisted, ""},
		{"unlisted address", "base", "0x4e3F0000000000000000000000000000000000e1", Unlisted, ""},
	}
	r := Resolver{Testnets: true}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tok, err := r.Token(mustChain(t, c.chain), ParseTokenRef(c.ref))
			if got := problemOf(err); got != c.want || (err != nil) != (c.want != "") {
				t.Fatalf("Token(%s, %q) = %+v, %v; want problem %q", c.chain, c.ref, tok, err, c.want)
			}
			switch c.want {
			case "":
				if !tok.Canonical || tok.Symbol != c.wantSymbol {
					t.Fatalf("Token(%s, %q) = %+v; want canonical %s", c.chain, c.ref, tok, c.wantSymbol)
				}
			case Unlisted:
				if tok.Canonical || tok.Class != ClassUnknown || tok.AssetID == "" {
					t.Fatalf("Token(%s, %q) = %+v; want an unlisted token of class unknown", c.chain, c.ref, tok)
				}
			default:
				if tok != (Token{}) {
					t.Fatalf("Token(%s, %q) = %+v with a refusal; want the zero Token", c.chain, c.ref, tok)
				}
			}
		})
	}
}

func TestResolveMessages(t *testing.T) {
	cases := []struct {
		chain, ref, want string
	}{
		{"ethereum", "SAFEMARS", "I don't recognize 'SAFEMARS' on 'ethereum' as a canonical token, and it matches our scam list (a honeypot family that blocks selling)"},
		{"base", "NEWTKN", "I don't recognize 'NEWTKN' on 'base' as a canonical token; it is not on our scam list, so a human decides"},
		{"arbitrum", "0x4200000000000000000000000000000000000006", "0x4200000000000000000000000000000000000006 is WETH on base and optimism, not a token on arbitrum"},
		{"base", "USDC:0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48 is USDC on ethereum, not a token on base; the canonical USDC on base is 0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"},
		{"base", "USD\u0421", "the ticker imitates USDC with look-alike characters"},
		{"base", "claim-usdc.io", "airdrop phishing"},
	}
	for _, c := range cases {
		_, err := Resolver{}.Token(mustChain(t, c.chain), ParseTokenRef(c.ref))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Token(%s, %q) = %v; want a message containing %q", c.chain, c.ref, err, c.want)
		}
	}
}

func TestResolveQuote(t *testing.T) {
	o := &Order{Action: Buy, Token: "WETH", TokenIn: "USDC", TokenOut: "WETH", Chain: "arb"}
	q, err := Resolver{}.Quote(o)
	if err != nil || q.In.Address != "0xaf88d065e77c8cC2239327C5EDb3A432268e5831" || q.Out.Address != "0x82aF49447D8a07e3bd95BD0d56f35241523fBab1" {
		t.Fatalf("Quote(%+v) = %+v, %v", o, q, err)
	}
	o.TokenOut = "SQUID"
	if _, err := (Resolver{}).Quote(o); problemOf(err) != Scam {
		t.Fatalf("Quote of SQUID = %v; want a scam refusal", err)
	}
	o.TokenOut, o.Chain = "NEWTKN", "base"
	if q, err := (Resolver{}).Quote(o); err != nil || q.Out.Canonical {
		t.Fatalf("Quote of an unlisted token = %+v, %v; want the unlisted token and no error", q, err)
	}
}

// FuzzResolve holds the resolver to its contract on any input: it never
// panics; a token without an error is canonical and is exactly the listing
// at its chain, symbol and address; an unlisted token is never canonical; a
// refusal returns the zero Token; a scam ticker never resolves.
func FuzzResolve(f *testing.F) {
	for _, c := range chains {
		for _, l := range canonical[c.Name] {
			f.Add(c.Name, l.symbol, l.address)
		}
	}
	for _, s := range []string{"SQUID", "safemars", "USD\u0421", "ＵＳＤＣ", "claim-usdc.io", "NEWTKN", "ETH-PERP", "", " ", "USDC:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"} {
		f.Add("base", s, "")
		f.Add("basee", s, "0x9a1F0000000000000000000000000000000000aB")
	}
	f.Fuzz(func(t *testing.T, chainName, symbol, address string) {
		r := Resolver{Testnets: len(chainName)%2 == 0}
		chain, err := r.Chain(chainName)
		if err != nil {
			if problemOf(err) != UnknownChain && problemOf(err) != TestnetChain {
				t.Fatalf("Chain(%q) = %v; want an unknown_chain or testnet TokenError", chainName, err)
			}
			chain = mustChain(t, "base")
		}
		for _, ref := range []TokenRef{{Symbol: symbol, Address: address}, ParseTokenRef(symbol)} {
			tok, err := r.Token(chain, ref)
			switch {
			case err == nil:
				want, ok := canonicalBySymbol(chain, tok.Symbol)
				if !tok.Canonical || !ok || want != tok {
					t.Fatalf("Token(%s, %+v) = %+v: not the listing %+v", chain.Name, ref, tok, want)
				}
				if tok.Address != "" {
					if byAddr, ok := canonicalByAddress(chain, tok.Address); !ok || byAddr != tok {
						t.Fatalf("Token(%s, %+v) = %+v: its address is not listed", chain.Name, ref, tok)
					}
				}
			case IsUnlisted(err):
				if tok.Canonical || tok.Class != ClassUnknown {
					t.Fatalf("Token(%s, %+v) = %+v, %v: an unlisted token must not be canonical", chain.Name, ref, tok, err)
				}
			default:
				if problemOf(err) == "" || tok != (Token{}) {
					t.Fatalf("Token(%s, %+v) = %+v, %v: a refusal is a TokenError with the zero Token", chain.Name, ref, tok, err)
				}
			}
			if _, isScam := scamTickers[strings.ToUpper(strings.TrimSpace(ref.Symbol))]; isScam && problemOf(err) != Scam {
				t.Fatalf("Token(%s, %+v) = %+v, %v: a scam ticker must be refused as a scam", chain.Name, ref, tok, err)
			}
		}
	})
}
