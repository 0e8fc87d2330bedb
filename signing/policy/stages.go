package policy

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/signing"
)

// Stages returns the sign capability's stages in order. signer is the
// address that signs; slots reads the rate slots; now is the clock.
func Stages(s Settings, signer signing.Address, slots warden.SlotReader, now func() time.Time) []warden.Stage {
	return []warden.Stage{
		Shape{Settings: s, Signer: signer},
		Limits{Settings: s},
		Calls{Settings: s},
		Messages{Settings: s, Signer: signer},
		Rate{Settings: s, Slots: slots, Now: now},
	}
}

// parse reads the signing request of req, or the deny that ends it.
func parse(req *warden.Request) (*signing.Request, *warden.Decision) {
	r, err := signing.FromWarden(req)
	if err != nil {
		d := warden.Denyf("signing.invalid", "the signing request is malformed: "+err.Error())
		return nil, &d
	}
	return r, nil
}

func notSign() warden.Decision { return warden.Allowf("signing.not_sign", "not a signing request") }

// Shape refuses what is never signed whatever its value: raw hashes, typed
// data, transaction types other than EIP-1559 (and legacy when enabled),
// contract creation, access lists, a missing or foreign chain id, fees that
// cannot be valid, and a from that is not the signer. Signer is the signing
// address; the zero value refuses every from.
type Shape struct {
	Settings Settings
	Signer   signing.Address
}

// Name implements warden.Stage.
func (Shape) Name() string { return "signing-shape" }

// Check implements warden.Stage.
func (st Shape) Check(_ context.Context, req *warden.Request) (warden.Decision, error) {
	if req.Capability != warden.CapSign {
		return notSign(), nil
	}
	r, deny := parse(req)
	if deny != nil {
		return *deny, nil
	}
	switch r.Method {
	case signing.MethodSign:
		return warden.Denyf("signing.raw_hash", "eth_sign signs a raw 32-byte hash, which can be a transaction's hash signed blind; use personal_sign for messages or eth_signTransaction for transactions"), nil
	case signing.MethodSignTypedData:
		return typedData(r.TypedData), nil
	case signing.MethodPersonalSign:
		return warden.Allowf("signing.shape", "an EIP-191 personal_sign message"), nil
	}
	return st.tx(r)
}

// typedData refuses typed data, naming the approval it would grant when it
// is a permit: a permit is an allowance signed off the transaction path.
func typedData(td *signing.TypedData) warden.Decision {
	const rule = "signing.typed_data"
	p, err := td.Permit()
	switch {
	case err != nil:
		return warden.Denyf(rule, "typed data that claims to be a permit but does not decode as one: "+err.Error())
	case p != nil:
		what := "a bounded allowance"
		for _, t := range p.Tokens {
			if signing.Unlimited(t.Amount) {
				what = "an unlimited allowance"
			}
		}
		return warden.Denyf(rule, fmt.Sprintf("%s typed data granting %s of %s to %s: a signed permit moves tokens without a transaction, and this signer does not sign typed data",
			p.Kind, what, tokensOf(p), signing.Checksum(p.Spender)))
	}
	return warden.Denyf(rule, "this signer does not sign EIP-712 typed data (primary type "+td.PrimaryType+"); only EIP-1559 transactions and readable personal_sign messages")
}

func tokensOf(p *signing.Permit) string {
	var ts []string
	for _, t := range p.Tokens {
		ts = append(ts, signing.Checksum(t.Token))
	}
	return strings.Join(ts, ", ")
}

func (st Shape) tx(r *signing.Request) (warden.Decision, error) {
	const rule = "signing.shape"
	tx := r.Tx
	switch {
	case tx.Type == signing.TypeSetCode || len(tx.Authorizations) > 0:
		return warden.Denyf("signing.delegation", "an EIP-7702 set-code transaction delegates this account's code to a contract, a full takeover of the account; it is never signed"), nil
	case tx.Type == signing.TypeLegacy && !st.Settings.Legacy:
		return warden.Denyf("signing.tx_type", "legacy (type 0) transactions are not signed unless signing.legacyTransactions is on; send an EIP-1559 (type 2) transaction"), nil
	case tx.Type != signing.TypeDynamicFee && tx.Type != signing.TypeLegacy:
		return warden.Denyf("signing.tx_type", fmt.Sprintf("%s transactions are not signed; send an EIP-1559 (type 2) transaction", signing.TypeName(tx.Type))), nil
	case tx.ChainID == nil || tx.ChainID.Sign() <= 0:
		return warden.Denyf("signing.chain_id", "the transaction has no chain id, so its signature would be valid on every chain (no replay protection); set chainId"), nil
	case !tx.ChainID.IsInt64() || !st.Settings.chainAllowed(tx.ChainID.Int64()):
		return warden.Denyf("signing.chain_id", fmt.Sprintf("chain %s is not one signing.chainIds allows (%s)", tx.ChainID, chainList(st.Settings.ChainIDs))), nil
	case tx.To == nil && !st.Settings.UnsafeContractCreation:
		return warden.Denyf("signing.contract_creation", "a transaction without a recipient deploys a contract, which an agent may not do unless signing.unsafeAllowContractCreation is on"), nil
	case tx.AccessList:
		return warden.Denyf(rule, "transactions with an access list are not signed; send it without accessList"), nil
	case r.From != nil && *r.From != st.Signer:
		return warden.Denyf("signing.from", fmt.Sprintf("the transaction names from %s, but this signer signs as %s", signing.Checksum(*r.From), signing.Checksum(st.Signer))), nil
	case tx.Type == signing.TypeDynamicFee && (tx.MaxFeePerGas == nil || tx.MaxPriorityFeePerGas == nil):
		return warden.Denyf(rule, "an EIP-1559 transaction needs maxFeePerGas and maxPriorityFeePerGas"), nil
	case tx.Type == signing.TypeDynamicFee && tx.MaxPriorityFeePerGas.Cmp(tx.MaxFeePerGas) > 0:
		return warden.Denyf(rule, fmt.Sprintf("maxPriorityFeePerGas %s is above maxFeePerGas %s: not a valid EIP-1559 transaction", tx.MaxPriorityFeePerGas, tx.MaxFeePerGas)), nil
	case tx.Type == signing.TypeLegacy && tx.GasPrice == nil:
		return warden.Denyf(rule, "a legacy transaction needs gasPrice"), nil
	case tx.Gas == 0:
		return warden.Denyf(rule, "the transaction has no gas limit; set gas"), nil
	}
	return warden.Allowf(rule, fmt.Sprintf("%s on chain %s", signing.TypeName(tx.Type), tx.ChainID)), nil
}

func chainList(ids []int64) string {
	var s []string
	for _, id := range ids {
		s = append(s, fmt.Sprint(id))
	}
	return strings.Join(s, ", ")
}

// Limits holds a transaction's native value and fees: over the value cap or
// the fee cap is a deny, over the confirmation threshold an ask (and every
// request asks when the policy requires a human).
type Limits struct{ Settings Settings }

// Name implements warden.Stage.
func (Limits) Name() string { return "signing-limits" }

// Check implements warden.Stage.
func (st Limits) Check(_ context.Context, req *warden.Request) (warden.Decision, error) {
	if req.Capability != warden.CapSign {
		return notSign(), nil
	}
	r, deny := parse(req)
	if deny != nil {
		return *deny, nil
	}
	s := st.Settings
	if r.Tx == nil {
		if s.RequireHuman {
			return warden.Askf("signing.require_human", "signing.requireHumanConfirmation: every signature is confirmed by a human"), nil
		}
		return warden.Allowf("signing.value", "a message moves no value by itself"), nil
	}
	value := r.Tx.Value
	if value == nil {
		value = new(big.Int)
	}
	fee := r.Tx.MaxFee()
	_, valued, err := req.AmountUSD()
	if err != nil {
		return warden.Denyf("signing.amount", err.Error()), nil
	}
	switch {
	case value.Sign() < 0:
		return warden.Denyf("signing.value", "a negative value is not a transaction"), nil
	case s.MaxValue == nil || value.Cmp(s.MaxValue) > 0:
		return warden.Denyf("signing.max_value", fmt.Sprintf("value %s is above signing.maxValueEth (%s per transaction)", eth(value), eth(s.MaxValue))), nil
	case s.MaxFee == nil || fee.Cmp(s.MaxFee) > 0:
		return warden.Denyf("signing.max_fee", fmt.Sprintf("the fee can reach %s (gas %d × maxFeePerGas), above signing.maxFeeEth (%s): fees alone could drain the account", eth(fee), r.Tx.Gas, eth(s.MaxFee))), nil
	case s.ApprovalAbove == nil || value.Cmp(s.ApprovalAbove) > 0:
		return warden.Askf("signing.threshold", fmt.Sprintf("value %s is above signing.approvalAboveEth (%s): a human confirms", eth(value), eth(s.ApprovalAbove))), nil
	case s.RequireHuman:
		return warden.Askf("signing.require_human", "signing.requireHumanConfirmation: every signature is confirmed by a human"), nil
	case value.Sign() > 0 && !valued && nativePriced(r.Tx.ChainID):
		// The chain's coin has a price source, but it gave none now: the
		// USD caps cannot hold this value, so a human does.
		return warden.Askf("signing.unvalued", fmt.Sprintf("the %s of native value has no USD price now, so the per-transaction max and the daily cap cannot hold it: a human confirms", eth(value))), nil
	}
	return warden.Allowf("signing.value", fmt.Sprintf("value %s and fee up to %s are within the caps", eth(value), eth(fee))), nil
}

// Calls judges where a transaction goes and what its calldata does: a plain
// transfer to an allow-listed recipient passes, to anyone else asks; a call
// must use an allowed selector on an allow-listed contract (or a canonical
// token of the registry), decode strictly, move tokens only to allow-listed
// recipients, carry a known USD value, and never grant an unlimited or
// unknown spender an allowance.
type Calls struct{ Settings Settings }

// Name implements warden.Stage.
func (Calls) Name() string { return "signing-calls" }

// Check implements warden.Stage.
func (st Calls) Check(_ context.Context, req *warden.Request) (warden.Decision, error) {
	if req.Capability != warden.CapSign {
		return notSign(), nil
	}
	r, deny := parse(req)
	if deny != nil {
		return *deny, nil
	}
	if r.Tx == nil || r.Tx.To == nil {
		return warden.Allowf("signing.calls", "no call"), nil
	}
	to := *r.Tx.To
	if len(r.Tx.Data) == 0 {
		if st.Settings.recipient(to) || st.Settings.contract(to) {
			return warden.Allowf("signing.recipient", signing.Checksum(to)+" is allow-listed"), nil
		}
		return warden.Askf("signing.new_recipient", fmt.Sprintf("%s is not an allow-listed recipient (signing.recipients): a human confirms the full address", signing.Checksum(to))), nil
	}
	call, err := signing.DecodeCall(r.Tx.Data)
	if err != nil {
		return warden.Denyf("signing.calldata", "the calldata does not decode strictly: "+err.Error()), nil
	}
	if !st.Settings.selector(call.Selector) {
		return warden.Denyf("signing.selector", fmt.Sprintf("method selector %s is not one signing.selectors allows (%s)", signing.SelectorHex(call.Selector), strings.Join(st.Settings.Selectors, ", "))), nil
	}
	token, listed := listedToken(r.Tx.ChainID, to)
	if !st.Settings.contract(to) && !(listed && call.Name != "") {
		return warden.Denyf("signing.contract", fmt.Sprintf("%s is neither an allow-listed contract (signing.contracts) nor a canonical token on chain %s", signing.Checksum(to), r.Tx.ChainID)), nil
	}
	_, valued, err := req.AmountUSD()
	if err != nil {
		return warden.Denyf("signing.amount", err.Error()), nil
	}
	what := token.Symbol
	if what == "" {
		what = "tokens of " + signing.Checksum(to)
	}
	switch {
	case call.Name == signing.CallTransfer || call.Name == signing.CallTransferFrom:
		if !st.Settings.recipient(*call.To) {
			return warden.Askf("signing.new_recipient", fmt.Sprintf("a %s of %s to %s, which is not an allow-listed recipient (signing.recipients): a human confirms the full address",
				call.Name, what, signing.Checksum(*call.To))), nil
		}
	case call.Grants():
		return st.grant(call, what, valued), nil
	case call.Name == signing.CallSetApprovalForAll: // revoking
		return warden.Allowf("signing.revoke", "setApprovalForAll(false) revokes an operator"), nil
	default:
		return warden.Askf("signing.unknown_call", fmt.Sprintf("a call to %s with selector %s that warden cannot decode: a human confirms what it does", signing.Checksum(to), signing.SelectorHex(call.Selector))), nil
	}
	if !valued {
		return warden.Askf("signing.unvalued", fmt.Sprintf("the %s of %s has no known USD value, so the caps cannot hold it: a human confirms", call.Name, what)), nil
	}
	return warden.Allowf("signing.calls", fmt.Sprintf("a %s of %s to an allow-listed recipient, valued for the caps", call.Name, what)), nil
}

// grant judges an approval: unlimited or to an unknown spender is refused;
// an unlimited one to an allow-listed spender asks; a bounded one to an
// allow-listed spender passes when its value is known.
func (st Calls) grant(call *signing.Call, what string, valued bool) warden.Decision {
	who := call.Spender
	if call.Name == signing.CallSetApprovalForAll {
		who = call.Operator
	}
	if who == nil {
		return warden.Denyf("signing.approval", "the approval names no spender")
	}
	known := st.Settings.contract(*who)
	switch {
	case call.Name == signing.CallSetApprovalForAll && !known:
		return warden.Denyf("signing.approval_all", fmt.Sprintf("setApprovalForAll hands every token of the collection to %s, which is not an allow-listed contract", signing.Checksum(*who)))
	case call.Name == signing.CallSetApprovalForAll:
		return warden.Askf("signing.approval_all", fmt.Sprintf("setApprovalForAll hands every token of the collection to %s: a human confirms", signing.Checksum(*who)))
	case !known:
		return warden.Denyf("signing.spender", fmt.Sprintf("%s would let %s spend %s, and it is not an allow-listed contract (signing.contracts); an account without code that holds an allowance is how drainers collect",
			call.Name, signing.Checksum(*who), what))
	case call.Amount != nil && signing.Unlimited(call.Amount):
		return warden.Askf("signing.unlimited_approval", fmt.Sprintf("an unlimited %s of %s to %s is standing risk: a human opts in, or approve the amount the trade needs",
			call.Name, what, signing.Checksum(*who)))
	case !valued:
		return warden.Askf("signing.unvalued", fmt.Sprintf("the %s of %s has no known USD value, so the caps cannot hold it: a human confirms", call.Name, what))
	}
	return warden.Allowf("signing.approval", fmt.Sprintf("a bounded %s of %s to allow-listed %s, valued for the caps", call.Name, what, signing.Checksum(*who)))
}

// nativePriced reports whether chain id's native coin is in the registry,
// so that its value is priced in USD (a dev chain's coin is not).
func nativePriced(id *big.Int) bool {
	if id == nil || !id.IsInt64() {
		return false
	}
	var res finance.Resolver
	c, err := res.Chain(fmt.Sprint(id.Int64()))
	if err != nil {
		return false
	}
	_, ok := res.Native(c)
	return ok
}

// listedToken returns the registry's canonical token at address on chain id.
func listedToken(id *big.Int, address signing.Address) (finance.Token, bool) {
	if id == nil || !id.IsInt64() {
		return finance.Token{}, false
	}
	var res finance.Resolver
	c, err := res.Chain(fmt.Sprint(id.Int64()))
	if err != nil {
		return finance.Token{}, false
	}
	return res.Listed(c, address.Hex())
}

// Messages judges personal_sign: an opaque payload is refused (it is usually
// a hash of something else); Sign-In with Ethereum for an allow-listed domain,
// this signer and an allowed chain passes; other readable text asks.
type Messages struct {
	Settings Settings
	Signer   signing.Address
}

// Name implements warden.Stage.
func (Messages) Name() string { return "signing-messages" }

// Check implements warden.Stage.
func (st Messages) Check(_ context.Context, req *warden.Request) (warden.Decision, error) {
	if req.Capability != warden.CapSign || req.Action != signing.MethodPersonalSign {
		return warden.Allowf("signing.not_message", "not a message"), nil
	}
	r, deny := parse(req)
	if deny != nil {
		return *deny, nil
	}
	if !signing.Readable(r.Message) {
		return warden.Denyf("signing.opaque_message", fmt.Sprintf("the message is %d bytes a person cannot read (binary, or a bare hex or base64 blob, usually the hash of something else); only readable text is signed", len(r.Message))), nil
	}
	siwe, ok := signing.ParseSIWE(string(r.Message))
	if !ok {
		return warden.Askf("signing.message", "a readable message that is not a sign-in: a human reads it before it is signed"), nil
	}
	switch {
	case siwe.Address != st.Signer:
		return warden.Denyf("signing.siwe_address", fmt.Sprintf("the sign-in is for %s, but this signer is %s", signing.Checksum(siwe.Address), signing.Checksum(st.Signer))), nil
	case !st.Settings.chainAllowed(siwe.ChainID):
		return warden.Denyf("signing.chain_id", fmt.Sprintf("the sign-in is for chain %d, which signing.chainIds does not allow", siwe.ChainID)), nil
	case !domainAllowed(st.Settings.MessageDomains, siwe.Domain):
		return warden.Askf("signing.siwe_domain", fmt.Sprintf("a sign-in to %s, which is not in signing.messageDomains: a human confirms the site", siwe.Domain)), nil
	}
	return warden.Allowf("signing.siwe", "a sign-in to allow-listed "+siwe.Domain), nil
}

func domainAllowed(domains []string, authority string) bool {
	host := strings.ToLower(authority)
	if h, _, ok := strings.Cut(host, ":"); ok {
		host = h
	}
	for _, d := range domains {
		if d == host {
			return true
		}
	}
	return false
}

// Rate reads the signatures held in the last hour and day and the request
// ids already used. The store's atomic take when the decision is recorded is
// the authoritative check; this stage gives the reason and denies early.
type Rate struct {
	Settings Settings
	Slots    warden.SlotReader
	Now      func() time.Time
}

// Name implements warden.Stage.
func (Rate) Name() string { return "signing-rate" }

// Check implements warden.Stage.
func (st Rate) Check(ctx context.Context, req *warden.Request) (warden.Decision, error) {
	if req.Capability != warden.CapSign {
		return notSign(), nil
	}
	r, deny := parse(req)
	if deny != nil {
		return *deny, nil
	}
	if st.Slots == nil {
		return warden.Decision{}, fmt.Errorf("the signing rate stage has no slot store")
	}
	if r.RequestID != "" {
		other, err := st.Slots.SlotKeyTrace(ctx, Kind, r.RequestID)
		if err != nil {
			return warden.Decision{}, err
		}
		if other != "" && other != req.TraceID {
			return warden.Denyf("signing.replay", fmt.Sprintf("request id %q was already used; a request id is accepted once (replay protection)", r.RequestID)), nil
		}
	}
	now := time.Now
	if st.Now != nil {
		now = st.Now
	}
	at := now()
	for _, l := range st.Settings.Limits() {
		n, err := st.Slots.HeldSlots(ctx, Kind, at.Add(-l.Window), at, req.TraceID)
		if err != nil {
			return warden.Decision{}, err
		}
		if n >= l.Max {
			return warden.Denyf("signing.rate", fmt.Sprintf("%d signatures already in the last %s (including ones waiting for a human), at most %d", n, warden.FormatWindow(l.Window), l.Max)), nil
		}
	}
	return warden.Allowf("signing.rate", "within the signing rate limits"), nil
}
