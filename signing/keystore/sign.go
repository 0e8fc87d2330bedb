package keystore

import (
	"context"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/core/types"
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
	sig, err := crypto.Sign(accounts.TextHash(msg), k.priv)
	if err != nil {
		return nil, warden.Errorf(warden.EInternal, "cannot sign the message with %s", k.addr.Hex()).Wrap(err)
	}
	sig[crypto.RecoveryIDOffset] += 27
	return sig, nil
}

// SignTransaction signs tx for its chain id: an EIP-1559 transaction with the
// London signer, a legacy one with EIP-155. It refuses (EInvalid) a
// transaction without a positive chain id, of another type, with an access
// list or authorizations, without its fees, or with a negative amount; see
// gethTx. It checks that the signature recovers to k's address before
// returning it.
func (k *Key) SignTransaction(ctx context.Context, tx *signing.Tx) (signing.SignedTx, error) {
	if err := ctx.Err(); err != nil {
		return signing.SignedTx{}, err
	}
	data, signer, err := gethTx(tx)
	if err != nil {
		return signing.SignedTx{}, err
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	if k.priv == nil {
		return signing.SignedTx{}, k.errClosed()
	}
	signed, err := types.SignNewTx(k.priv, signer, data)
	if err != nil {
		return signing.SignedTx{}, warden.Errorf(warden.EInternal, "cannot sign the transaction with %s", k.addr.Hex()).Wrap(err)
	}
	from, err := types.Sender(signer, signed)
	if err != nil || signing.Address(from) != k.addr || !signed.Protected() {
		return signing.SignedTx{}, warden.Errorf(warden.EInternal, "the signature made with %s does not verify; nothing was returned", k.addr.Hex())
	}
	raw, err := signed.MarshalBinary()
	if err != nil {
		return signing.SignedTx{}, warden.Errorf(warden.EInternal, "cannot encode the signed transaction").Wrap(err)
	}
	return signing.SignedTx{Raw: raw, Hash: signed.Hash(), From: k.addr}, nil
}
