package devchain

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth"
	"github.com/ethereum/go-ethereum/eth/catalyst"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/eth/filters"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/log"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/p2p"
	"github.com/ethereum/go-ethereum/rpc"
)

// DefaultChainID is the chain id used when Options.ChainID is zero; it is the
// one `geth --dev` uses.
const DefaultChainID = 1337

// devGasLimit is the genesis block gas limit, the default of geth's
// --dev.gaslimit.
const devGasLimit = 11_500_000

// dialTimeout bounds connecting the HTTP RPC client during Start.
const dialTimeout = 10 * time.Second

// Options configures Start. The zero value is a valid configuration.
type Options struct {
	// ChainID is the EIP-155 chain id (and network id) of the chain;
	// zero means DefaultChainID. Negative values are rejected.
	ChainID int64
}

// Start runs a dev node: genesis with params.AllDevChainProtocolChanges but
// the given chain id, a freshly generated developer key funded with a large
// balance in genesis, HTTP JSON-RPC on 127.0.0.1 with a kernel-chosen port
// (eth, net, web3 namespaces), no P2P listening or discovery, in-memory
// databases, and a SimulatedBeacon with period 0 that seals a block as soon as
// a transaction enters the pool (on-demand mining, like
// geth --dev --dev.period 0).
//
// The caller must Close the returned Chain.
func Start(opts Options) (*Chain, error) {
	chainID := opts.ChainID
	switch {
	case chainID == 0:
		chainID = DefaultChainID
	case chainID < 0:
		return nil, fmt.Errorf("devchain: chain id %d is negative", chainID)
	}
	key, err := crypto.GenerateKey()
	if err != nil {
		return nil, fmt.Errorf("devchain: generate developer key: %w", err)
	}
	devAddr := crypto.PubkeyToAddress(key.PublicKey)

	stack, err := node.New(nodeConfig())
	if err != nil {
		return nil, fmt.Errorf("devchain: new node: %w", err)
	}
	ethConf := ethConfig(big.NewInt(chainID), devAddr)
	backend, err := eth.New(stack, ethConf)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("devchain: new eth service: %w", err), stack.Close())
	}
	// The log filter API, as geth registers it (eth_getLogs, eth_newFilter…).
	filterSystem := filters.NewFilterSystem(backend.APIBackend, filters.Config{
		LogCacheSize:  ethConf.FilterLogCacheSize,
		LogQueryLimit: ethConf.LogQueryLimit,
		RangeLimit:    ethConf.RangeLimit,
	})
	stack.RegisterAPIs([]rpc.API{{Namespace: "eth", Service: filters.NewFilterAPI(filterSystem)}})

	// The simulated beacon replaces the consensus client, as in geth --dev
	// (created before the node starts; it moves the genesis to PoS). With
	// period 0 it has no goroutine of its own (SimulatedBeacon.Start and Stop
	// do nothing that matters), so it is not registered as a lifecycle; the
	// sealer below drives it. Its "dev" and "testing" RPC APIs are not
	// registered: registering them starts go-ethereum's own on-demand loop,
	// which the sealer replaces (see sealer), and the HTTP endpoint serves
	// only eth, net and web3 anyway.
	beacon, err := catalyst.NewSimulatedBeacon(0, devAddr, backend)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("devchain: new simulated beacon: %w", err), stack.Close())
	}

	if err := stack.Start(); err != nil {
		return nil, fmt.Errorf("devchain: start node: %w", err) // a failed Start closes the node
	}
	seal, err := startSealer(beacon, backend.TxPool())
	if err != nil {
		return nil, errors.Join(fmt.Errorf("devchain: start sealing: %w", err), stack.Close())
	}

	url := stack.HTTPEndpoint()
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	defer cancel()
	rpcClient, err := rpc.DialContext(ctx, url)
	if err != nil {
		seal.close()
		return nil, errors.Join(fmt.Errorf("devchain: dial %s: %w", url, err), stack.Close())
	}
	return &Chain{
		chainID: big.NewInt(chainID),
		devKey:  key,
		devAddr: devAddr,
		url:     url,
		node:    stack,
		sealer:  seal,
		rpc:     rpcClient,
		client:  ethclient.NewClient(rpcClient),
		pool:    backend.TxPool(),
	}, nil
}

// nodeConfig is the node shell of geth --dev with HTTP on loopback: no data
// directory (in-memory databases, an ephemeral keystore directory the node
// removes on Close), no IPC, no P2P, HTTP JSON-RPC on 127.0.0.1 with a port
// the kernel picks.
func nodeConfig() *node.Config {
	conf := node.DefaultConfig
	conf.Name = "warden-devchain"
	conf.DataDir = ""
	conf.IPCPath = ""
	conf.HTTPHost = "127.0.0.1"
	conf.HTTPPort = 0
	conf.HTTPModules = []string{"eth", "net", "web3"}
	conf.HTTPVirtualHosts = []string{"localhost"}
	conf.WSHost = ""
	conf.AuthPort = 0 // no authenticated API is registered; never 8551 if one were
	conf.UseLightweightKDF = true
	conf.P2P = p2p.Config{
		MaxPeers:    0,
		ListenAddr:  "",
		NoDial:      true,
		NoDiscovery: true,
		DiscoveryV4: false,
		DiscoveryV5: false,
	}
	conf.Logger = log.NewLogger(log.DiscardHandler())
	return &conf
}

// ethConfig is the eth service config of geth --dev (cmd/utils.SetEthConfig
// with --dev): full sync, preimages, miner gas price 1 wei, the developer
// account as fee recipient, and core.DeveloperGenesisBlock with the chain id
// replaced.
func ethConfig(chainID *big.Int, devAddr common.Address) *ethconfig.Config {
	genesis := core.DeveloperGenesisBlock(devGasLimit, &devAddr)
	// DeveloperGenesisBlock already made genesis.Config a private shallow copy
	// of params.AllDevChainProtocolChanges; replacing the ChainID pointer does
	// not touch the shared original.
	genesis.Config.ChainID = new(big.Int).Set(chainID)

	conf := ethconfig.Defaults
	conf.Genesis = genesis
	conf.NetworkId = chainID.Uint64()
	conf.SyncMode = ethconfig.FullSync
	conf.EnablePreimageRecording = true
	conf.Miner.GasPrice = big.NewInt(1)
	conf.Miner.PendingFeeRecipient = devAddr
	// No local-transaction tracker: it would only journal and resubmit
	// transactions, which a chain that mines every transaction at once does
	// not need (ethclient/simulated does the same).
	conf.TxPool.NoLocals = true
	// No log search index (filtermaps), as in ethclient/simulated: eth_getLogs
	// still works by scanning blocks, which is instant on a chain this short,
	// while the indexer renders a map per block in the background and makes
	// Close wait for it (hundreds of milliseconds under the race detector).
	conf.LogNoHistory = true
	return &conf
}
