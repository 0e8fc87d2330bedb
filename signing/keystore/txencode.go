package keystore

import (
	"math/big"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rlp"

	"github.com/agentwarden/warden/signing"
)

// The hash and encoding of the two transaction types this signer signs,
// written from their specifications: EIP-155 for a legacy transaction,
// EIP-1559 in EIP-2718's typed envelope for a dynamic-fee one. In RLP a
// number is its big-endian bytes without leading zeros (0 is the empty
// string), and a contract creation's "to" is the empty string.

// fields is tx's RLP list without the signature. Legacy: [nonce, gasPrice,
// gas, to, value, data]. EIP-1559: [chainId, nonce, maxPriorityFeePerGas,
// maxFeePerGas, gas, to, value, data, accessList], the access list always
// empty. Each call returns a new slice.
func (tx *unsignedTx) fields() []any {
	if tx.typ == signing.TypeLegacy {
		return []any{tx.nonce, tx.gasPrice, tx.gas, tx.to, tx.value, tx.data}
	}
	return []any{tx.chainID, tx.nonce, tx.maxPriorityFeePerGas, tx.maxFeePerGas, tx.gas, tx.to, tx.value, tx.data, []any{}}
}

// sigHash is the hash the sender signs. Legacy (EIP-155):
// keccak256(rlp([nonce, gasPrice, gas, to, value, data, chainId, 0, 0])).
// EIP-1559: keccak256(0x02 ‖ rlp([chainId, nonce, …, data, accessList])).
func (tx *unsignedTx) sigHash() ([]byte, error) {
	list := tx.fields()
	if tx.typ == signing.TypeLegacy {
		list = append(list, tx.chainID, uint64(0), uint64(0))
	}
	b, err := tx.envelope(list)
	if err != nil {
		return nil, err
	}
	return crypto.Keccak256(b), nil
}

// encode is the signed transaction's canonical encoding, what
// eth_sendRawTransaction takes, for sig = r ‖ s ‖ recovery id (0 or 1), the
// 65 bytes crypto.Sign returns. Legacy: rlp([nonce, …, data, v, r, s]) with
// v = recovery id + 35 + 2·chainId (EIP-155). EIP-1559: 0x02 ‖ rlp([chainId,
// …, accessList, yParity, r, s]) with yParity the recovery id. The
// transaction hash is keccak256 of this encoding.
func (tx *unsignedTx) encode(sig []byte) ([]byte, error) {
	r := new(big.Int).SetBytes(sig[:32])
	s := new(big.Int).SetBytes(sig[32:64])
	v := new(big.Int).SetUint64(uint64(sig[64]))
	if tx.typ == signing.TypeLegacy {
		v.Add(v, big.NewInt(35))
		v.Add(v, new(big.Int).Lsh(tx.chainID, 1))
	}
	return tx.envelope(append(tx.fields(), v, r, s))
}

// envelope is rlp(list), after the type byte for a typed transaction
// (EIP-2718); a legacy transaction has no type byte.
func (tx *unsignedTx) envelope(list []any) ([]byte, error) {
	b, err := rlp.EncodeToBytes(list)
	if err != nil {
		return nil, err
	}
	if tx.typ == signing.TypeLegacy {
		return b, nil
	}
	return append([]byte{byte(tx.typ)}, b...), nil
}
