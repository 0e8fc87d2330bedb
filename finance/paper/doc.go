// Package paper is warden's embedded simulated exchange and its default
// trading backend: an Exchange implements finance.Backend against a Book of
// simulated balances kept in a Store (MemStore here, the SQLite adapter's
// PaperBook in production), priced by a PriceSource (FilePrices reads a JSON
// file, PathPrices draws a deterministic random or scripted path).
//
// The model is deliberately simple and documented so that its numbers can be
// checked by hand:
//
//   - Cash. Every stablecoin is one chain-agnostic cash balance in USD: USDC
//     on Base and USDT on Solana are the same dollars here. Other tokens are
//     held per token (finance.Token.Key), so WETH on Base and ETH on
//     Ethereum are separate holdings of the same asset.
//   - Pools. Each non-stable token trades against a constant-product pool
//     that is rebuilt from the oracle price for every trade (pools are
//     stateless: a trade does not move the next trade's price). At price P
//     the pool holds y = PoolDepth dollars and x = PoolDepth/P tokens; the
//     fee is taken from the input. Token-to-token swaps go through USD, in
//     two hops, and pay the fee twice; stablecoin-to-stablecoin swaps are 1:1
//     minus the fee.
//   - Perps. A position takes its margin from cash, has size
//     margin×leverage/price, pays no fee and is never liquidated; closing it
//     pays finance.Position.ValueUSD at the current price (never below 0)
//     back to cash.
//   - Execution. Every executing method refuses a zero finance.Clearance
//     (finance.ErrNotCleared) and runs in one Store.Update: the balance
//     checks, the balance changes and the fill it appends are saved together
//     or not at all.
package paper
