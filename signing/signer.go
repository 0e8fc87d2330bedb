// Package signing is the remote signing capability's domain: what a sandboxed
// agent may ask warden to sign (an EIP-1559 transaction, an EIP-191 message),
// parsed strictly from the agent's JSON; the strict decoder of the calldata
// and typed data that move value (ERC-20 transfers and approvals, EIP-2612
// and Permit2 permits); and the Signer interface that holds the key.
//
// The stages that judge a signing request live in signing/policy, the
// keystore backend in signing/keystore, and the service that ties the gate,
// the approval queue and the signer together in signing/service. Amounts are
// *big.Int in base units (wei, token units); USD is warden.USD.
package signing

import (
	"context"
	"encoding/hex"
	"math/big"
	"strings"

	"golang.org/x/crypto/sha3"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/clip"
)

// Address is a 20-byte EVM account or contract address.
type Address [20]byte

// Hex is the address as 0x-prefixed lower-case hex.
func (a Address) Hex() string { return "0x" + hex.EncodeToString(a[:]) }

// String is Hex.
func (a Address) String() string { return a.Hex() }

// IsZero reports whether a is the zero address.
func (a Address) IsZero() bool { return a == Address{} }

// Tx types the parser knows. Only TypeDynamicFee is signed by default;
// TypeLegacy only when the policy enables legacy transactions; the others are
// parsed only so that the refusal can name them.
const (
	TypeLegacy        = 0
	TypeAccessList    = 1
	TypeDynamicFee    = 2
	TypeBlob          = 3
	TypeSetCode       = 4 // EIP-7702 authorizations
	maxKnownTxType    = TypeSetCode
	typeNameUnknown   = "unknown"
	typeNameLegacy    = "legacy (type 0)"
	typeNameDynamic   = "EIP-1559 (type 2)"
	typeNameAccess    = "EIP-2930 access-list (type 1)"
	typeNameBlob      = "EIP-4844 blob (type 3)"
	typeNameSetCode   = "EIP-7702 set-code (type 4)"
	typeNameSeparator = ", "
)

// TypeName describes a transaction type for messages.
func TypeName(t int) string {
	switch t {
	case TypeLegacy:
		return typeNameLegacy
	case TypeAccessList:
		return typeNameAccess
	case TypeDynamicFee:
		return typeNameDynamic
	case TypeBlob:
		return typeNameBlob
	case TypeSetCode:
		return typeNameSetCode
	}
	return typeNameUnknown
}

// Authorization is one EIP-7702 authorization tuple, parsed only to be
// refused by name.
type Authorization struct {
	ChainID *big.Int
	Address Address
	Nonce   uint64
}

// Tx is a transaction to sign. Every amount is in wei. A nil ChainID means the
// request carried none: it is refused, never signed without replay protection.
// A nil To is a contract creation.
type Tx struct {
	Type                 int
	ChainID              *big.Int
	Nonce                uint64
	To                   *Address
	Value                *big.Int
	Data                 []byte
	Gas                  uint64
	MaxFeePerGas         *big.Int
	MaxPriorityFeePerGas *big.Int
	// GasPrice is a legacy transaction's fee per gas.
	GasPrice *big.Int
	// AccessList is true when the request carried a non-empty access list,
	// which this signer does not sign.
	AccessList     bool
	Authorizations []Authorization
}

// MaxFee is the most the transaction can cost in fees: gas × maxFeePerGas
// (gas × gasPrice for a legacy transaction).
func (t *Tx) MaxFee() *big.Int {
	per := t.MaxFeePerGas
	if t.Type == TypeLegacy {
		per = t.GasPrice
	}
	if per == nil {
		return new(big.Int)
	}
	return new(big.Int).Mul(new(big.Int).SetUint64(t.Gas), per)
}

// SignedTx is a signed transaction, ready to broadcast.
type SignedTx struct {
	// Raw is the transaction's canonical encoding (typed envelope for type
	// 2), what eth_sendRawTransaction takes.
	Raw []byte
	// Hash is the transaction hash.
	Hash [32]byte
	// From is the address that signed it.
	From Address
}

// Signer holds a key and signs with it. Implementations never return, log or
// store the key. The keystore backend (signing/keystore) is one; hardware and
// KMS backends can be others.
//
// Errors: a Signer refuses what no policy may sign, whatever the caller
// decided: a transaction without a chain id, or of a type other than legacy
// or EIP-1559.
type Signer interface {
	// Address is the account the key controls.
	Address() Address
	// SignMessage signs msg as an EIP-191 personal_sign message (prefixed
	// with "\x19Ethereum Signed Message:\n" and its length) and returns the
	// 65-byte signature R ‖ S ‖ V with V 27 or 28.
	SignMessage(ctx context.Context, msg []byte) ([]byte, error)
	// SignTransaction signs tx for its chain id.
	SignTransaction(ctx context.Context, tx *Tx) (SignedTx, error)
}

// ParseAddress reads a 0x-prefixed 40-hex-digit address. A mixed-case
// address must carry a valid EIP-55 checksum; all-lower and all-upper are
// accepted as unchecksummed.
func ParseAddress(s string) (Address, error) {
	var a Address
	if !strings.HasPrefix(s, "0x") && !strings.HasPrefix(s, "0X") || len(s) != 42 {
		return a, warden.Errorf(warden.EInvalid, "address %q is not 0x followed by 40 hex digits", clip.String(s, 80))
	}
	if _, err := hex.Decode(a[:], []byte(s[2:])); err != nil {
		return a, warden.Errorf(warden.EInvalid, "address %q is not 0x followed by 40 hex digits", clip.String(s, 80))
	}
	body := s[2:]
	if body != strings.ToLower(body) && body != strings.ToUpper(body) && Checksum(a) != "0x"+body {
		return a, warden.Errorf(warden.EInvalid, "address %s has a wrong EIP-55 checksum (a mistyped or altered address)", s).
			WithHint("copy the address again from its source, or give it in lower case")
	}
	return a, nil
}

// Checksum is the address in its EIP-55 mixed-case form.
func Checksum(a Address) string {
	lower := []byte(hex.EncodeToString(a[:]))
	h := sha3.NewLegacyKeccak256()
	h.Write(lower)
	sum := h.Sum(nil)
	for i, c := range lower {
		nibble := sum[i/2] >> 4
		if i%2 == 1 {
			nibble = sum[i/2] & 0x0f
		}
		if c >= 'a' && nibble >= 8 {
			lower[i] = c - 'a' + 'A'
		}
	}
	return "0x" + string(lower)
}
