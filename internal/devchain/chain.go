package devchain

import (
	"crypto/ecdsa"
	"errors"
	"math/big"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/txpool"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/rpc"
)

// Chain is a running dev node started by Start. Its methods are safe for
// concurrent use. Close it when done.
type Chain struct {
	chainID *big.Int
	devKey  *ecdsa.PrivateKey
	devAddr common.Address
	url     string

	node   *node.Node
	sealer *sealer
	rpc    *rpc.Client // over HTTP, to url
	client *ethclient.Client
	// pool is the node's transaction pool, read in process only to learn
	// when it has caught up with a mined block (see WaitMined).
	pool *txpool.TxPool

	// fundMu serialises Fund, so that the developer account's transactions
	// get consecutive nonces; nextNonce is the nonce after the last one Fund
	// sent (the account is used by nothing else).
	fundMu    sync.Mutex
	nextNonce uint64

	closeOnce sync.Once
	closeErr  error
}

// URL is the node's HTTP JSON-RPC endpoint, http://127.0.0.1:PORT.
func (c *Chain) URL() string { return c.url }

// ChainID is the chain's EIP-155 chain id (a copy the caller may modify).
func (c *Chain) ChainID() *big.Int { return new(big.Int).Set(c.chainID) }

// Client is an ethclient connected to URL over HTTP. It belongs to the Chain:
// do not Close it; Chain.Close does.
func (c *Chain) Client() *ethclient.Client { return c.client }

// DevAddress is the developer account, funded with a large balance (2^256-9
// wei, as geth --dev) in genesis. Its key never leaves the Chain; Fund spends
// from it.
func (c *Chain) DevAddress() common.Address { return c.devAddr }

// Close closes the RPC client, stops block sealing (waiting for a block being
// sealed), then stops the node: the HTTP server and the eth service. The node
// then closes its in-memory databases and removes its temporary keystore
// directory. Close is idempotent; later calls return the first call's result.
func (c *Chain) Close() error {
	c.closeOnce.Do(func() {
		c.client.Close() // also closes c.rpc, which it wraps
		c.sealer.close()
		err := c.node.Close()
		if errors.Is(err, node.ErrNodeStopped) {
			err = nil
		}
		c.closeErr = err
	})
	return c.closeErr
}
