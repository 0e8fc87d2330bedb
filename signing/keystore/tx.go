package keystore

import (
	"bytes"
	"math/big"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/clip"
	"github.com/agentwarden/warden/signing"
)

// unsignedTx is a transaction this signer agreed to sign, copied out of a
// signing.Tx: a legacy transaction signed with EIP-155 or an EIP-1559 one
// without an access list. txencode.go gives its hash and encoding.
type unsignedTx struct {
	typ     int // signing.TypeLegacy or signing.TypeDynamicFee
	chainID *big.Int
	nonce   uint64
	// gasPrice is a legacy transaction's fee; nil for EIP-1559.
	gasPrice *big.Int
	// maxPriorityFeePerGas and maxFeePerGas are EIP-1559's fees; nil for
	// legacy.
	maxPriorityFeePerGas, maxFeePerGas *big.Int
	gas                                uint64
	// to is the 20-byte recipient, or empty for a contract creation.
	to    []byte
	value *big.Int
	data  []byte
}

// newUnsignedTx checks tx and copies it. It refuses what no policy may sign:
// no chain id (the signature would fall back to pre-EIP-155 signing, valid
// on every chain), a type other than EIP-1559 or legacy, an access list,
// EIP-7702 authorizations; and what cannot be a valid transaction: a missing
// fee, a negative amount, an amount above 256 bits. A nil Value is 0; a nil
// To is a contract creation and is signed.
func newUnsignedTx(tx *signing.Tx) (*unsignedTx, error) {
	if tx == nil {
		return nil, warden.Errorf(warden.EInvalid, "there is no transaction to sign")
	}
	if err := checkChainID(tx.ChainID); err != nil {
		return nil, err
	}
	if tx.Type != signing.TypeDynamicFee && tx.Type != signing.TypeLegacy {
		return nil, warden.Errorf(warden.EInvalid, "refusing to sign a transaction of type %d (%s): this signer signs only %s and %s transactions",
			tx.Type, signing.TypeName(tx.Type), signing.TypeName(signing.TypeDynamicFee), signing.TypeName(signing.TypeLegacy))
	}
	if tx.AccessList {
		return nil, warden.Errorf(warden.EInvalid, "refusing to sign a transaction with an access list: this signer does not sign access lists").
			WithHint("send the transaction without an access list")
	}
	if len(tx.Authorizations) > 0 {
		return nil, warden.Errorf(warden.EInvalid, "refusing to sign a transaction with %d EIP-7702 authorizations: they hand the account's code to a contract", len(tx.Authorizations))
	}
	value := tx.Value
	if value == nil {
		value = new(big.Int)
	}
	if err := checkAmount("value", value); err != nil {
		return nil, err
	}
	u := &unsignedTx{
		typ:     tx.Type,
		chainID: new(big.Int).Set(tx.ChainID),
		nonce:   tx.Nonce,
		gas:     tx.Gas,
		value:   new(big.Int).Set(value),
		data:    bytes.Clone(tx.Data),
	}
	if tx.To != nil {
		u.to = bytes.Clone(tx.To[:])
	}

	if tx.Type == signing.TypeLegacy {
		if err := checkFee("gasPrice", "a legacy", tx.GasPrice); err != nil {
			return nil, err
		}
		u.gasPrice = new(big.Int).Set(tx.GasPrice)
		return u, nil
	}
	if err := checkFee("maxFeePerGas", "an EIP-1559", tx.MaxFeePerGas); err != nil {
		return nil, err
	}
	if err := checkFee("maxPriorityFeePerGas", "an EIP-1559", tx.MaxPriorityFeePerGas); err != nil {
		return nil, err
	}
	u.maxFeePerGas = new(big.Int).Set(tx.MaxFeePerGas)
	u.maxPriorityFeePerGas = new(big.Int).Set(tx.MaxPriorityFeePerGas)
	return u, nil
}

// maxChainID is EIP-2294's bound on a chain id, floor(2^64-1 / 2) - 36, so
// that a legacy transaction's v (2·id + 35 or 36) fits in 64 bits.
var maxChainID = new(big.Int).SetUint64((1<<64-1)/2 - 36)

// checkChainID refuses a missing, zero, negative or oversized chain id.
func checkChainID(id *big.Int) error {
	const refusal = "refusing to sign without replay protection"
	hint := "set the chain id of the network the transaction is for (1 for Ethereum mainnet)"
	switch {
	case id == nil:
		return warden.Errorf(warden.EInvalid, "%s: the transaction has no chain id", refusal).WithHint(hint)
	case id.Sign() <= 0:
		return warden.Errorf(warden.EInvalid, "%s: chain id %s is not a positive number", refusal, id).WithHint(hint)
	case id.Cmp(maxChainID) > 0:
		return warden.Errorf(warden.EInvalid, "chain id %s is above %s, the largest a chain may use (EIP-2294)", clip.String(id.String(), 40), maxChainID).WithHint(hint)
	}
	return nil
}

// checkFee refuses a missing fee; kind is "a legacy" or "an EIP-1559".
func checkFee(name, kind string, fee *big.Int) error {
	if fee == nil {
		return warden.Errorf(warden.EInvalid, "%s transaction needs %s; it has none", kind, name)
	}
	return checkAmount(name, fee)
}

// checkAmount refuses a negative amount or one above 256 bits.
func checkAmount(name string, v *big.Int) error {
	if v.Sign() < 0 {
		return warden.Errorf(warden.EInvalid, "%s %s is negative", name, v)
	}
	if v.BitLen() > 256 {
		return warden.Errorf(warden.EInvalid, "%s %s does not fit in 256 bits", name, clip.String(v.String(), 40))
	}
	return nil
}
