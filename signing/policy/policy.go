// Package policy holds the sign capability's stages: what a sandboxed agent
// may have warden sign. They run after the global stages (kill switch, daily
// spend cap, per-transaction max, tier gate), which see the USD value the
// service computed (params.amount_usd), and judge what is actually signed:
//
//   - shape: only EIP-1559 transactions (legacy when enabled) and readable
//     personal_sign messages; never raw hashes, typed data, contract creation,
//     EIP-7702 delegations, a missing or foreign chain id;
//   - limits: native value and fee caps in wei, and the human-confirmation
//     threshold;
//   - calls: the selector allowlist, the strict calldata decoder, allow-listed
//     contracts, recipients and spenders, unlimited approvals;
//   - messages: Sign-In with Ethereum for allow-listed domains;
//   - rate: signatures per hour and per day, and request ids used once.
//
// The rate stage reads the slots; the authoritative check is the store's
// atomic take when the decision is recorded (Slot gives the gate what to
// take). Every stage fails closed: a request it cannot parse is denied.
package policy

import (
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/signing"
)

// Kind is the rate-slot kind of signatures.
const Kind = "signing"

// Settings are the signing policy (the signing section of warden.yaml).
// Addresses and selectors are lower-case hex. The zero value allows no chain,
// no value and no fee, and refuses every slot: build one with Defaults or from
// the policy file.
type Settings struct {
	ChainIDs []int64
	// MaxValue is the most native value per transaction, inclusive;
	// ApprovalAbove the value above which a human confirms; MaxFee the most
	// gas × maxFeePerGas. All in wei.
	MaxValue, ApprovalAbove, MaxFee *big.Int
	PerHour, PerDay                 int
	// PendingPerRequester is how many asks one requester (requested_by and
	// session) may have waiting for a human at once, each holding a rate
	// slot; zero is DefaultPendingPerRequester. Pending asks of all
	// requesters together hold at most half of each limit.
	PendingPerRequester int
	// Recipients may receive value and tokens without a human confirming.
	Recipients []string
	// Contracts may be called and named as spenders; the registry's
	// canonical tokens may always be called for transfers and approvals.
	Contracts []string
	// Selectors are the method selectors calls may use ("0xa9059cbb").
	Selectors []string
	// MessageDomains are the Sign-In with Ethereum domains personal_sign may
	// sign in to without a human.
	MessageDomains []string
	// RequireHuman makes every signing request ask.
	RequireHuman bool
	// Legacy also signs legacy (type 0, EIP-155) transactions.
	Legacy bool
	// UnsafeContractCreation allows transactions without a recipient.
	UnsafeContractCreation bool
}

// DefaultPendingPerRequester is how many signing asks one requester may have
// waiting for a human at once when Settings do not say.
const DefaultPendingPerRequester = 3

// Eth is 10^18 wei.
var Eth = new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)

// Wei is eth/denominator ETH in wei: Wei(1, 10) is 0.1 ETH.
func Wei(eth, denominator int64) *big.Int {
	w := new(big.Int).Mul(big.NewInt(eth), Eth)
	return w.Quo(w, big.NewInt(denominator))
}

// Permit2 is the canonical Permit2 contract, the same on every chain.
const Permit2 = "0x000000000022d473030f116ddee9f6b43ac78ba3"

// Defaults are the signing policy's defaults: chains 1, 8453, 42161 and 10;
// 0.1 ETH per transaction, a human above 0.01 ETH, fees up to 0.01 ETH; 10
// signatures an hour and 50 a day; Permit2 as the only allow-listed
// contract; transfer and approve as the only selectors.
func Defaults() Settings {
	return Settings{
		ChainIDs: []int64{1, 8453, 42161, 10},
		MaxValue: Wei(1, 10), ApprovalAbove: Wei(1, 100), MaxFee: Wei(1, 100),
		PerHour: 10, PerDay: 50,
		Recipients: []string{}, Contracts: []string{Permit2},
		Selectors: []string{"0xa9059cbb", "0x095ea7b3"}, MessageDomains: []string{},
	}
}

// Limits are the rate limits of Settings, for the store's slot check.
func (s *Settings) Limits() []warden.RateLimit {
	return []warden.RateLimit{{Window: time.Hour, Max: s.PerHour}, {Window: 24 * time.Hour, Max: s.PerDay}}
}

// Slot is the rate slot a signing request takes when it is allowed (or held
// while it waits for a human): one of Kind, keyed by the request id so that
// an id is accepted once. Requests of other capabilities take none.
func (s *Settings) Slot(req *warden.Request) *warden.RateSlot {
	if req.Capability != warden.CapSign {
		return nil
	}
	slot := &warden.RateSlot{Kind: Kind, Limits: s.Limits(), MaxHolds: s.PendingPerRequester}
	if slot.MaxHolds <= 0 {
		slot.MaxHolds = DefaultPendingPerRequester
	}
	if r, err := signing.FromWarden(req); err == nil {
		slot.Key = r.RequestID
	}
	return slot
}

func (s *Settings) chainAllowed(id int64) bool { return slices.Contains(s.ChainIDs, id) }

func (s *Settings) recipient(a signing.Address) bool {
	return slices.Contains(s.Recipients, a.Hex())
}

func (s *Settings) contract(a signing.Address) bool { return slices.Contains(s.Contracts, a.Hex()) }

func (s *Settings) selector(sel [4]byte) bool {
	return slices.Contains(s.Selectors, strings.ToLower(signing.SelectorHex(sel)))
}

// eth formats wei as ETH for reasons: "0.05 ETH".
func eth(wei *big.Int) string {
	if wei == nil {
		return "0 ETH"
	}
	r := new(big.Rat).SetFrac(wei, Eth)
	s := r.FloatString(18)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + " ETH"
}

// Debit wraps the gate's spend debit so that a signing request also takes its
// rate slot: spend is the debit of other capabilities (safety.SpendCap.Debit).
func (s *Settings) Debit(spend func(*warden.Request, time.Time) *warden.Debit) func(*warden.Request, time.Time) *warden.Debit {
	return func(req *warden.Request, at time.Time) *warden.Debit {
		var d *warden.Debit
		if spend != nil {
			d = spend(req, at)
		}
		slot := s.Slot(req)
		if slot == nil {
			return d
		}
		if d == nil {
			d = &warden.Debit{}
		}
		d.Slot = slot
		return d
	}
}
