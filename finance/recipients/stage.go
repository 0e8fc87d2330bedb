// Package recipients is the recipients stage of the trade capability: it
// decides where an order's funds may go. A swap, a perp and every protective
// exit pay the own wallet only; a third-party recipient would turn them into
// a transfer. A transfer must name a well-formed address that is not a
// token's contract (funds sent there are lost); an allowlisted recipient
// passes, a look-alike of a known address (address poisoning) is refused,
// and a first payment to anyone else goes to a human, who confirms the full
// address. The stage does no I/O.
package recipients

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/internal/clip"
)

// Stage is the recipients stage.
//
// Wallet is the own wallet swaps pay into; Allowlist lists the transfer
// recipients the operator has confirmed. Both are compared on the full
// address (EVM addresses case-insensitively). The zero value knows no
// wallet, so it refuses any swap that names a recipient, and asks a human
// about every transfer.
type Stage struct {
	Wallet    string
	Allowlist []string
	Resolver  finance.Resolver
}

var _ warden.Stage = Stage{}

// Name implements warden.Stage.
func (Stage) Name() string { return "recipients" }

// Check implements warden.Stage.
func (st Stage) Check(_ context.Context, req *warden.Request) (warden.Decision, error) {
	if req.Capability != warden.CapTrade {
		return warden.Allowf("recipient.not_trade", "not a trade"), nil
	}
	o, err := finance.ParseOrder(req)
	if err != nil {
		return warden.Denyf("trade.invalid", err.Error()), nil
	}
	if o.Action != finance.Transfer || req.Protective {
		return st.self(o, req.Protective), nil
	}
	return st.transfer(o), nil
}

// self holds an order whose output must come back to the own wallet.
func (st Stage) self(o *finance.Order, protective bool) warden.Decision {
	const rule = "recipient.not_self"
	kind := "a " + o.Action
	if protective {
		kind = "a protective " + o.Action
	}
	if o.Recipient == "" {
		return warden.Allowf("recipient.self", kind+" pays the own wallet")
	}
	if st.Wallet != "" && finance.SameAddress(o.Recipient, st.Wallet) {
		return warden.Allowf("recipient.self", fmt.Sprintf("%s pays the own wallet %s", kind, st.Wallet))
	}
	moved := "funds"
	if o.HasAmount {
		moved = "$" + o.AmountUSD.String()
	}
	if st.Wallet == "" {
		return warden.Denyf(rule, fmt.Sprintf("%s names the recipient %q, but no own wallet is configured to compare it with; a swap's output goes to the own wallet, and a third-party recipient turns it into a transfer of %s",
			kind, clip.String(o.Recipient, 64), moved))
	}
	return warden.Denyf(rule, fmt.Sprintf("%s's output goes to the own wallet (%s); a third-party recipient (%q) turns it into a transfer of %s",
		kind, st.Wallet, clip.String(o.Recipient, 64), moved))
}

// transfer holds a transfer's recipient.
func (st Stage) transfer(o *finance.Order) warden.Decision {
	to := o.Recipient
	chain, chainErr := st.Resolver.Chain(o.Chain)
	solana := chainErr == nil && chain.Name == "solana"
	if !wellFormed(to, solana) {
		want := "an EVM address (0x and 40 hex digits)"
		if solana {
			want = "a Solana address (32 to 44 base58 characters)"
		}
		return warden.Denyf("recipient.invalid", fmt.Sprintf("the recipient %q is not %s; a transfer goes to an exact address, never to a name or a description", clip.String(to, 64), want))
	}
	if chainErr == nil {
		if d, ok := st.tokenContract(chain, o.Token, to); ok {
			return d
		}
	}
	if st.Wallet != "" && finance.SameAddress(to, st.Wallet) {
		return warden.Allowf("recipient.self", fmt.Sprintf("%s is the own wallet", to))
	}
	for _, a := range st.Allowlist {
		if finance.SameAddress(to, strings.TrimSpace(a)) {
			return warden.Allowf("recipient.allowlisted", fmt.Sprintf("%s is on the recipient allowlist", to))
		}
	}
	known := append([]string{st.Wallet}, st.Allowlist...)
	for i, a := range known {
		if a = strings.TrimSpace(a); a != "" && lookalike(to, a, solana) {
			what := "the allowlisted address"
			if i == 0 {
				what = "the own wallet"
			}
			return warden.Denyf("recipient.lookalike", fmt.Sprintf("%s looks like %s %s (same first 4 and last 4 characters) but is a different address: that is address poisoning; copy the address from the allowlist, never from history", to, what, a))
		}
	}
	return warden.Askf("recipient.new", fmt.Sprintf("first payment to %s: a human confirms the full address", to))
}

// tokenContract refuses a transfer to the transferred token's own contract,
// or to any canonical token contract on the chain: tokens sent there are
// lost.
func (st Stage) tokenContract(chain finance.Chain, token, to string) (warden.Decision, bool) {
	const rule = "recipient.token_contract"
	ref := finance.ParseTokenRef(token)
	// A token that does not resolve is the token-safety stage's to judge;
	// here it only matters which contract it names.
	tok, _ := st.Resolver.Token(chain, ref)
	for _, addr := range []string{ref.Address, tok.Address} {
		if addr != "" && finance.SameAddress(to, addr) {
			return warden.Denyf(rule, fmt.Sprintf("%s is the contract of the token being sent (%s): tokens transferred to their own contract are burned", to, ref)), true
		}
	}
	if other, err := st.Resolver.Token(chain, finance.TokenRef{Address: to}); err == nil && other.Canonical {
		return warden.Denyf(rule, fmt.Sprintf("%s is the %s token contract on %s, not a wallet: tokens sent to a token contract are lost", to, other.Symbol, chain.Name)), true
	}
	return warden.Decision{}, false
}

// wellFormed reports whether to is an address: an EVM address, or on Solana
// a base58 string of 32 to 44 characters.
func wellFormed(to string, solana bool) bool {
	if solana {
		if len(to) < 32 || len(to) > 44 {
			return false
		}
		for _, c := range to {
			if !strings.ContainsRune(base58, c) {
				return false
			}
		}
		return true
	}
	return finance.IsEVMAddress(to)
}

const base58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// lookalike reports whether a and b are different addresses that share
// their first 4 and last 4 characters (the hex digits after 0x,
// case-insensitively, for EVM; base58 is case-sensitive). That is what an
// address-poisoning attacker grinds for, since wallets show only the ends.
func lookalike(a, b string, solana bool) bool {
	if finance.SameAddress(a, b) {
		return false
	}
	if !solana {
		if !finance.IsEVMAddress(a) || !finance.IsEVMAddress(b) {
			return false
		}
		a, b = strings.ToLower(a[2:]), strings.ToLower(b[2:])
	}
	if len(a) < 8 || len(b) < 8 {
		return false
	}
	return a[:4] == b[:4] && a[len(a)-4:] == b[len(b)-4:]
}
