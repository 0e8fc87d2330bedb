package keystore

import (
	"bytes"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/signing"
)

// gethTx turns tx into go-ethereum's form and the signer for its chain. It
// refuses what no policy may sign: no chain id (go-ethereum would fall back to
// Homestead signing, valid on every chain), a type other than EIP-1559 or
// legacy, an access list, EIP-7702 authorizations; and what cannot be a
// valid transaction: a missing fee, a negative amount, an amount above 256
// bits. A nil Value is 0; a nil To is a contract creation and is signed.
func gethTx(tx *signing.Tx) (types.TxData, types.Signer, error) {
	if tx == nil {
		return nil, nil, warden.Errorf(warden.EInvalid, "there is no transaction to sign")
	}
	if err := checkChainID(tx.ChainID); err != nil {
		return nil, nil, err
	}
	if tx.Type != signing.TypeDynamicFee && tx.Type != signing.TypeLegacy {
		return nil, nil, warden.Errorf(warden.EInvalid, "refusing to sign a transaction of type %d (%s): this signer signs only %s and %s transactions",
			tx.Type, signing.TypeName(tx.Type), signing.TypeName(signing.TypeDynamicFee), signing.TypeName(signing.TypeLegacy))
	}
	if tx.AccessList {
		return nil, nil, warden.Errorf(warden.EInvalid, "refusing to sign a transaction with an access list: this signer does not sign access lists").
			WithHint("send the transaction without an access list")
	}
	if len(tx.Authorizations) > 0 {
		return nil, nil, warden.Errorf(warden.EInvalid, "refusing to sign a transaction with %d EIP-7702 authorizations: they hand the account's code to a contract", len(tx.Authorizations))
	}
	value := tx.Value
	if value == nil {
		value = new(big.Int)
	}
	if err := checkAmount("value", value); err != nil {
		return nil, nil, err
	}
	chainID := new(big.Int).Set(tx.ChainID)
	var to *common.Address
	if tx.To != nil {
		a := common.Address(*tx.To)
		to = &a
	}
	data := bytes.Clone(tx.Data)

	if tx.Type == signing.TypeLegacy {
		if err := checkFee("gasPrice", "a legacy", tx.GasPrice); err != nil {
			return nil, nil, err
		}
		return &types.LegacyTx{
			Nonce:    tx.Nonce,
			GasPrice: new(big.Int).Set(tx.GasPrice),
			Gas:      tx.Gas,
			To:       to,
			Value:    new(big.Int).Set(value),
			Data:     data,
		}, types.NewEIP155Signer(chainID), nil
	}
	if err := checkFee("maxFeePerGas", "an EIP-1559", tx.MaxFeePerGas); err != nil {
		return nil, nil, err
	}
	if err := checkFee("maxPriorityFeePerGas", "an EIP-1559", tx.MaxPriorityFeePerGas); err != nil {
		return nil, nil, err
	}
	return &types.DynamicFeeTx{
		ChainID:   chainID,
		Nonce:     tx.Nonce,
		GasTipCap: new(big.Int).Set(tx.MaxPriorityFeePerGas),
		GasFeeCap: new(big.Int).Set(tx.MaxFeePerGas),
		Gas:       tx.Gas,
		To:        to,
		Value:     new(big.Int).Set(value),
		Data:      data,
	}, types.NewLondonSigner(chainID), nil
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
		return warden.Errorf(warden.EInvalid, "chain id %s is above %s, the largest a chain may use (EIP-2294)", clip(id.String()), maxChainID).WithHint(hint)
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
		return warden.Errorf(warden.EInvalid, "%s %s does not fit in 256 bits", name, clip(v.String()))
	}
	return nil
}
