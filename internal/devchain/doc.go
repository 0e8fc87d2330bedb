// Package devchain runs a throwaway Ethereum development chain inside the test
// process, for end-to-end tests of warden's remote EVM signing against a real
// EVM node on loopback.
//
// It assembles what `geth --dev --dev.period 0` assembles, from go-ethereum's
// own packages: a node.Node with an eth.Ethereum service on the dev chain
// config (params.AllDevChainProtocolChanges, every fork active from genesis),
// a genesis that pre-funds a developer account, JSON-RPC over HTTP on
// 127.0.0.1, no peer-to-peer networking, in-memory databases, and a
// catalyst.SimulatedBeacon that seals a block as soon as a transaction enters
// the pool. Transactions are real: they go over HTTP JSON-RPC, through the
// node's transaction pool and signature checks, and are executed by the EVM.
//
// Two things differ from geth --dev, neither visible over eth/net/web3: the
// on-demand sealing loop is this package's (a copy of go-ethereum's that
// subscribes before Start returns; go-ethereum's can miss the first
// transaction and can crash on a quick Close, see sealer.go), and the log
// search index is off (eth_getLogs scans blocks instead, as in
// ethclient/simulated).
//
// It is not the geth binary because cmd/geth cannot be built here: its module
// graph needs github.com/attestantio/go-eth2-client v0.30.1, which the Go
// module proxy refuses. The library packages below cmd/ do not need it, so
// the node is built from them instead, and needs no external process.
//
// Each Chain is independent (own key, node, port and databases), so several
// can run in one process. The package never touches go-ethereum's global root
// logger (which discards by default); each node gets its own discarding logger.
package devchain
