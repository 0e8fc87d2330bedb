package devchain

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/params"
)

// pollInterval is how often WaitMined asks for a receipt. Blocks are sealed
// within milliseconds of a transaction entering the pool.
const pollInterval = 5 * time.Millisecond

// defaultTip is the priority fee Fund pays. The dev miner accepts 1 wei;
// 1 gwei keeps the transaction ordinary-looking.
var defaultTip = big.NewInt(params.GWei)

// Fund sends wei from the developer account to the address to (an EIP-1559
// tx signed with the dev key, sent over the HTTP RPC) and waits until it is
// mined (see WaitMined); it returns the receipt. A receipt whose status is not
// successful is returned with an error. Concurrent calls are serialised.
func (c *Chain) Fund(ctx context.Context, to common.Address, wei *big.Int) (*types.Receipt, error) {
	if wei == nil || wei.Sign() < 0 {
		return nil, fmt.Errorf("devchain: fund %s: amount %v is not a non-negative number of wei", to, wei)
	}
	// Held until the tx is mined, so every Fund sees the previous one's nonce
	// used and the pool never holds two developer transactions.
	c.fundMu.Lock()
	defer c.fundMu.Unlock()

	nonce, err := c.client.PendingNonceAt(ctx, c.devAddr)
	if err != nil {
		return nil, fmt.Errorf("devchain: fund %s: developer nonce: %w", to, err)
	}
	// A Fund whose wait was cancelled may have left its tx unmined.
	nonce = max(nonce, c.nextNonce)
	head, err := c.client.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("devchain: fund %s: latest header: %w", to, err)
	}
	feeCap := new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), defaultTip)
	tx, err := types.SignNewTx(c.devKey, types.LatestSignerForChainID(c.chainID), &types.DynamicFeeTx{
		ChainID:   c.chainID,
		Nonce:     nonce,
		GasTipCap: defaultTip,
		GasFeeCap: feeCap,
		Gas:       params.TxGas,
		To:        &to,
		Value:     new(big.Int).Set(wei),
	})
	if err != nil {
		return nil, fmt.Errorf("devchain: fund %s: sign: %w", to, err)
	}
	raw, err := tx.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("devchain: fund %s: encode: %w", to, err)
	}
	hash, err := c.SendRaw(ctx, raw)
	if err != nil {
		return nil, fmt.Errorf("devchain: fund %s: %w", to, err)
	}
	c.nextNonce = nonce + 1
	receipt, err := c.WaitMined(ctx, hash)
	if err != nil {
		return nil, fmt.Errorf("devchain: fund %s: %w", to, err)
	}
	if receipt.Status != types.ReceiptStatusSuccessful {
		return receipt, fmt.Errorf("devchain: fund %s: tx %s failed (status %d)", to, hash, receipt.Status)
	}
	return receipt, nil
}

// SendRaw broadcasts a signed raw transaction (eth_sendRawTransaction over the
// HTTP RPC) and returns its hash, as the node reports it. A transaction the
// node rejects (bad signature, wrong chain id, nonce, funds…) is an error.
func (c *Chain) SendRaw(ctx context.Context, raw []byte) (common.Hash, error) {
	var hash common.Hash
	if err := c.rpc.CallContext(ctx, &hash, "eth_sendRawTransaction", hexutil.Encode(raw)); err != nil {
		return common.Hash{}, fmt.Errorf("eth_sendRawTransaction: %w", err)
	}
	return hash, nil
}

// WaitMined waits for the receipt of hash, polling the HTTP RPC, until the
// receipt exists or ctx is done. The receipt is returned whatever its status.
//
// It returns only once the node's transaction pool has also caught up with
// the block (the transaction has left the pool). The pool follows the chain
// asynchronously, as in any geth; without this wait, a transaction sent right
// after a receipt appeared could be validated against the state before the
// block (e.g. refused for "insufficient funds" just after a Fund).
func (c *Chain) WaitMined(ctx context.Context, hash common.Hash) (*types.Receipt, error) {
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	var receipt *types.Receipt
	for {
		if receipt == nil {
			r, err := c.client.TransactionReceipt(ctx, hash)
			switch {
			case err == nil:
				receipt = r
			case errors.Is(err, ethereum.NotFound), isIndexing(err):
				// not mined yet
			default:
				return nil, fmt.Errorf("receipt of %s: %w", hash, err)
			}
		}
		if receipt != nil && !c.pool.Has(hash) {
			return receipt, nil
		}
		select {
		case <-ctx.Done():
			if receipt != nil {
				return nil, fmt.Errorf("%s was mined but the transaction pool did not catch up: %w", hash, ctx.Err())
			}
			return nil, fmt.Errorf("waiting for %s to be mined: %w", hash, ctx.Err())
		case <-ticker.C:
		}
	}
}

// isIndexing reports whether err is the node's "transaction indexing is in
// progress" answer, which means "not found yet", not a failure.
func isIndexing(err error) bool {
	return err != nil && strings.Contains(err.Error(), "transaction indexing is in progress")
}

// Balance is addr's balance in wei at the latest block.
func (c *Chain) Balance(ctx context.Context, addr common.Address) (*big.Int, error) {
	return c.client.BalanceAt(ctx, addr, nil)
}

// PendingNonce is the nonce of addr's next transaction, counting those in the
// pool (eth_getTransactionCount "pending"). The pool admits a transaction
// asynchronously, so right after SendRaw this may not count it yet; after
// WaitMined it is exact.
func (c *Chain) PendingNonce(ctx context.Context, addr common.Address) (uint64, error) {
	return c.client.PendingNonceAt(ctx, addr)
}
