package keystore

import (
	"context"
	"math/big"
	"strconv"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/signing"
)

// SignMessage signs msg as an EIP-191 personal_sign message: the hash of
// "\x19Ethereum Signed Message:\n" + len(msg) + msg. It returns the 65-byte
// signature R ‖ S ‖ V with V 27 or 28, as wallets give it. What msg may be is
// decided upstream; this never signs a caller's raw hash.
func (k *Key) SignMessage(ctx context.Context, msg []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	if k.priv == nil {
		return nil, k.errClosed()
	}
	sig, err := crypto.Sign(personalHash(msg), k.priv)
	if err != nil {
		return nil, warden.Errorf(warden.EInternal, "cannot sign the message with %s", k.addr.Hex()).Wrap(err)
	}
	sig[crypto.RecoveryIDOffset] += 27
	return sig, nil
}

// personalHash is the hash personal_sign signs (EIP-191, version 0x45):
// keccak256("\x19Ethereum Signed Message:\n" ‖ len(msg) in decimal ‖ msg).
func personalHash(msg []byte) []byte {
	prefix := "\x19Ethereum Signed Message:\n" + strconv.Itoa(len(msg))
	return crypto.Keccak256([]byte(prefix), msg)
}

// SignTransaction signs tx for its chain id: an EIP-1559 transaction as
// EIP-1559 says, a legacy one with EIP-155. It refuses (EInvalid) a
// transaction without a positive chain id, of another type, with an access
// list or authorizations, without its fees, or with a negative amount; see
// newUnsignedTx. It checks that the signature is in low-s form and recovers
// to k's address before returning it.
func (k *Key) SignTransaction(ctx context.Context, tx *signing.Tx) (signing.SignedTx, error) {
	if err := ctx.Err(); err != nil {
		return signing.SignedTx{}, err
	}
	utx, err := newUnsignedTx(tx)
	if err != nil {
		return signing.SignedTx{}, err
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	if k.priv == nil {
		return signing.SignedTx{}, k.errClosed()
	}
	hash, err := utx.sigHash()
	if err != nil {
		return signing.SignedTx{}, warden.Errorf(warden.EInternal, "cannot sign the transaction with %s", k.addr.Hex()).Wrap(err)
	}
	sig, err := crypto.Sign(hash, k.priv)
	if err != nil {
		return signing.SignedTx{}, warden.Errorf(warden.EInternal, "cannot sign the transaction with %s", k.addr.Hex()).Wrap(err)
	}
	if !recoversTo(hash, sig, k.addr) {
		return signing.SignedTx{}, warden.Errorf(warden.EInternal, "the signature made with %s does not verify; nothing was returned", k.addr.Hex())
	}
	raw, err := utx.encode(sig)
	if err != nil {
		return signing.SignedTx{}, warden.Errorf(warden.EInternal, "cannot encode the signed transaction").Wrap(err)
	}
	return signing.SignedTx{Raw: raw, Hash: crypto.Keccak256Hash(raw), From: k.addr}, nil
}

// recoversTo reports whether sig (r ‖ s ‖ recovery id) is a signature of
// hash by addr with s in the lower half of the curve order, the only form
// nodes accept since Homestead (EIP-2).
func recoversTo(hash, sig []byte, addr signing.Address) bool {
	if len(sig) != crypto.SignatureLength {
		return false
	}
	r := new(big.Int).SetBytes(sig[:32])
	s := new(big.Int).SetBytes(sig[32:64])
	if !crypto.ValidateSignatureValues(sig[crypto.RecoveryIDOffset], r, s, true) {
		return false
	}
	pub, err := crypto.SigToPub(hash, sig)
	return err == nil && signing.Address(crypto.PubkeyToAddress(*pub)) == addr
}
