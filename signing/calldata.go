package signing

import (
	"encoding/hex"
	"fmt"
	"math/big"
)

// Names of the calls DecodeCall knows: the ERC-20, ERC-721/1155 and Permit2
// functions that move value or grant the right to move it.
const (
	CallTransfer          = "transfer"
	CallTransferFrom      = "transferFrom"
	CallApprove           = "approve"
	CallIncreaseAllowance = "increaseAllowance"
	CallSetApprovalForAll = "setApprovalForAll"
	CallPermit            = "permit"          // EIP-2612
	CallPermit2Approve    = "permit2.approve" // Permit2's approve(token, spender, amount, expiration)
)

// Call is calldata decoded strictly. A Call with Name "" has a selector
// DecodeCall does not know: the policy decides on it by its selector
// allowlist. Fields a function does not have are nil.
type Call struct {
	Selector [4]byte
	// Name is one of the Call* names, or "" for an unknown selector.
	Name string
	// The addresses the function names: the recipient (To), the account
	// debited by a transferFrom (From), who may spend (Spender), who may
	// move every token (Operator), whose tokens a permit covers (Owner), and
	// the token of a Permit2 approve (Token).
	To, From, Spender, Operator, Owner, Token *Address
	// Amount is the value moved or granted in token base units.
	Amount *big.Int
	// Approved is setApprovalForAll's flag; false for other calls.
	Approved bool
	// Deadline is a permit's deadline or a Permit2 approval's expiration
	// (unix seconds).
	Deadline *big.Int
}

// Grants reports whether the call gives someone the right to move the
// sender's tokens later: approve, increaseAllowance, setApprovalForAll(true),
// permit and Permit2 approve. A nil Call grants nothing.
func (c *Call) Grants() bool {
	if c == nil {
		return false
	}
	switch c.Name {
	case CallApprove, CallIncreaseAllowance, CallPermit, CallPermit2Approve:
		return true
	case CallSetApprovalForAll:
		return c.Approved
	}
	return false
}

// unlimited is the amount from which an allowance counts as unlimited.
var unlimited = new(big.Int).Lsh(big.NewInt(1), 128)

// Unlimited reports whether amount is an "infinite" allowance: 2^128 or
// more, which covers max uint256, max uint160 and 2^255. A nil amount is
// not unlimited.
func Unlimited(amount *big.Int) bool {
	return amount != nil && amount.Cmp(unlimited) >= 0
}

// SelectorHex is sel as 0x-prefixed lower-case hex ("0xa9059cbb").
func SelectorHex(sel [4]byte) string { return "0x" + hex.EncodeToString(sel[:]) }

// Kinds of ABI words.
const (
	wordAddress = iota
	wordUint    // bits wide, zero above
	wordBool
	wordBytes32 // any 32 bytes
)

// param is one static argument of a known function and where its value
// goes in a Call (nil: checked, then dropped).
type param struct {
	name string
	kind int
	bits int
	addr func(*Call) **Address
	num  func(*Call) **big.Int
}

// function is a known selector's signature and parameters.
type function struct {
	name, sig string
	params    []param
}

func to(c *Call) **Address       { return &c.To }
func from(c *Call) **Address     { return &c.From }
func spender(c *Call) **Address  { return &c.Spender }
func operator(c *Call) **Address { return &c.Operator }
func owner(c *Call) **Address    { return &c.Owner }
func token(c *Call) **Address    { return &c.Token }
func amount(c *Call) **big.Int   { return &c.Amount }
func deadline(c *Call) **big.Int { return &c.Deadline }

// functions are the calls DecodeCall knows, by selector (the first four
// bytes of keccak256 of sig).
var functions = map[[4]byte]function{
	{0xa9, 0x05, 0x9c, 0xbb}: {CallTransfer, "transfer(address,uint256)", []param{
		{name: "to", addr: to}, {name: "amount", kind: wordUint, bits: 256, num: amount}}},
	{0x23, 0xb8, 0x72, 0xdd}: {CallTransferFrom, "transferFrom(address,address,uint256)", []param{
		{name: "from", addr: from}, {name: "to", addr: to}, {name: "amount", kind: wordUint, bits: 256, num: amount}}},
	{0x09, 0x5e, 0xa7, 0xb3}: {CallApprove, "approve(address,uint256)", []param{
		{name: "spender", addr: spender}, {name: "amount", kind: wordUint, bits: 256, num: amount}}},
	{0x39, 0x50, 0x93, 0x51}: {CallIncreaseAllowance, "increaseAllowance(address,uint256)", []param{
		{name: "spender", addr: spender}, {name: "addedValue", kind: wordUint, bits: 256, num: amount}}},
	{0xa2, 0x2c, 0xb4, 0x65}: {CallSetApprovalForAll, "setApprovalForAll(address,bool)", []param{
		{name: "operator", addr: operator}, {name: "approved", kind: wordBool}}},
	{0xd5, 0x05, 0xac, 0xcf}: {CallPermit, "permit(address,address,uint256,uint256,uint8,bytes32,bytes32)", []param{
		{name: "owner", addr: owner}, {name: "spender", addr: spender},
		{name: "value", kind: wordUint, bits: 256, num: amount}, {name: "deadline", kind: wordUint, bits: 256, num: deadline},
		{name: "v", kind: wordUint, bits: 8}, {name: "r", kind: wordBytes32}, {name: "s", kind: wordBytes32}}},
	{0x87, 0x51, 0x7c, 0x45}: {CallPermit2Approve, "approve(address,address,uint160,uint48)", []param{
		{name: "token", addr: token}, {name: "spender", addr: spender},
		{name: "amount", kind: wordUint, bits: 160, num: amount}, {name: "expiration", kind: wordUint, bits: 48, num: deadline}}},
}

// DecodeCall decodes calldata. Empty data is a plain value transfer: nil,
// nil. An unknown selector gives a Call with Name "" and no error. For a
// known selector the data must be exactly the selector and one 32-byte word
// per parameter, every address word zero in its upper 12 bytes, every bool
// 0 or 1 and every narrower integer zero above its width: anything else is
// an *warden.Error (EInvalid), since a token contract could read such
// words differently from this decoder.
func DecodeCall(data []byte) (*Call, error) {
	if len(data) == 0 {
		return nil, nil
	}
	if len(data) < 4 {
		return nil, invalid("calldata shorter than a 4-byte selector (%d bytes)", len(data)).
			WithHint("calldata is empty or a 4-byte selector followed by 32-byte words")
	}
	c := &Call{Selector: [4]byte(data[:4])}
	fn, ok := functions[c.Selector]
	if !ok {
		return c, nil
	}
	c.Name = fn.name
	if want := 4 + 32*len(fn.params); len(data) != want {
		return nil, invalid("calldata for %s is %d bytes; want exactly %d (the selector and %d words)", fn.sig, len(data), want, len(fn.params))
	}
	for i, p := range fn.params {
		if err := p.decode(c, data[4+32*i:4+32*(i+1)]); err != nil {
			return nil, invalid("calldata for %s: %s (word %d) %v", fn.sig, p.name, i+1, err)
		}
	}
	return c, nil
}

// decode checks one word and stores its value in c.
func (p param) decode(c *Call, w []byte) error {
	switch p.kind {
	case wordAddress:
		if !zero(w[:12]) {
			return fmt.Errorf("is not an address: its upper 12 bytes are not zero")
		}
		a := Address(w[12:])
		*p.addr(c) = &a
	case wordBool:
		if !zero(w[:31]) || w[31] > 1 {
			return fmt.Errorf("is 0x%s; a bool is 0 or 1", hex.EncodeToString(w))
		}
		c.Approved = w[31] == 1
	case wordUint:
		if !zero(w[:32-p.bits/8]) {
			return fmt.Errorf("has bits set above its uint%d", p.bits)
		}
		if p.num != nil {
			*p.num(c) = new(big.Int).SetBytes(w)
		}
	}
	return nil
}

func zero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}
