// Package httpexchange is the finance.Backend for a trading venue reached
// over a REST API: warden prices, reads the portfolio, simulates and executes
// through it as it would through the embedded paper exchange.
//
// # Wire contract
//
// This is what a venue implements. Paths are the defaults of
// DefaultEndpoints, each configurable; every request carries
// "Accept: application/json" and, when a token is configured,
// "Authorization: Bearer <token>".
//
//	GET  /v1/prices?chain=base&token=0x8335…2913&asset=USDC
//	     token is the contract address, or the symbol of a native coin.
//	     → {"usd": 3120.5, "at": "2026-01-02T15:04:05Z"}
//	GET  /v1/portfolio
//	     → {"wallet": "0x…", "at": RFC3339 (optional),
//	        "holdings":  [{"token": T, "amount": 1.5, "value_usd": "4680.75"}],
//	        "positions": [{"id", "token": T, "side": "long"|"short", "leverage",
//	                       "margin_usd", "size", "entry_price", "mark_price",
//	                       "opened_at" (optional)}]   (optional)}
//	POST /v1/tx/cross-chain/swaps-simulate
//	     {"token_in": T, "token_out": T, "amount_usd": "500.25",
//	      "max_slippage": 0.01 (absent when the order gave none), "recipient" (optional)}
//	     → {"expected_out", "price_impact", "input_value_usd", "output_value_usd"}
//	POST /v1/tx/swaps        the simulate body plus "max_slippage" and "trace_id"
//	POST /v1/perps/open      {"token": T, "side", "margin_usd": "100", "leverage": 3, "trace_id"}
//	POST /v1/perps/close     {"position_id", "trace_id"}
//	POST /v1/transfers       {"token": T, "amount_usd": "25", "recipient", "trace_id"}
//	     each → a fill: {"id", "value_usd", "at", "in_token", "in_amount", "out_token",
//	                     "out_amount", "price", "position", "trace_id"}
//	     id and value_usd are required, and position for a perp open (the
//	     position opened); for a perp close it is the position asked to close
//	     when sent. The rest is optional, "at" defaulting to when it arrived.
//
// A token T is {"symbol", "chain": {"name", "id"}, "address" ("" for a
// native coin), "asset_id", "decimals"}. Dollar amounts that warden sends are
// decimal strings (at most six decimals, no exponent); in answers a dollar
// amount or a number may be a JSON number or a string holding one. Unknown
// fields in an answer are ignored.
//
// Executions (swaps, perps, transfers) carry the trace id of the gate's
// decision twice, as the Idempotency-Key header and as "trace_id" in the
// body: a venue must execute one trace id at most once, and answer a repeat
// with the first fill. A fill that names another trace id is refused.
//
// A 2xx answer means done; any other status means the venue did nothing
// (the error carries the status and the first 200 bytes of the body). A
// venue must not redirect: no redirect is followed, so an execution is never
// replayed to another host and the token never leaves for one.
//
// # What is refused
//
// An answer over 1 MiB, one that is not a single JSON object (trailing
// data included), a missing required field, a number that is not finite, a
// negative amount or value, a price that is not positive, a string longer
// than 256 bytes or holding control characters, a portfolio worth more than
// a trillion dollars: each is an error wrapping ErrMalformed, never a value.
// For an execution such an answer (or one that never came) wraps
// ErrOutcomeUnknown too: the venue may have executed the order.
//
// Tokens in a portfolio are not taken at the venue's word: one that the
// registry lists at the same chain and address keeps the registry's asset
// and class; any other is of class unknown, so a venue cannot make a
// position look like a stablecoin and hide it from the exposure limits.
//
// The bearer token never appears in an error: bodies and transport errors
// echoing it are redacted, and Config and Backend print without it.
package httpexchange
