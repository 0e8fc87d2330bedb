package paper

// The constant-product pool of a token at oracle price p and depth d holds
// y = d dollars and x = d/p tokens, and keeps x·y constant across a trade;
// the fee is taken from the input before it enters the pool. The forms below
// are x − x·y/(y+a) and y − x·y/(x+u) rearranged, which lose no precision
// for small trades.

// poolBuy returns the tokens bought with usd dollars.
func poolBuy(depth, price, usd, fee float64) float64 {
	a := usd * (1 - fee)
	x := depth / price
	return x * a / (depth + a)
}

// poolSell returns the dollars received for units tokens.
func poolSell(depth, price, units, fee float64) float64 {
	u := units * (1 - fee)
	x := depth / price
	return depth * u / (x + u)
}
