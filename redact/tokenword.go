package redact

// secretToken reports whether word, seen between the words prev and next,
// makes the key a secret because it is a token (credential) rather than a token
// count or a coin. Run-together forms such as "authtoken", "maxtokens" and
// "tokenin" are split before deciding.
func secretToken(word, prev, next []byte) bool {
	switch {
	case string(word) == "token":
		return !harmlessTokenPrev(prev) && !harmlessTokenNext(next)
	case string(word) == "tokens":
		return secretTokensPrev(prev)
	case hasSuffix(word, "tokens"):
		return secretTokensPrev(word[:len(word)-len("tokens")])
	case hasSuffix(word, "token"):
		return !harmlessTokenPrev(word[:len(word)-len("token")]) && !harmlessTokenNext(next)
	}
	// "tokenizer", "tokenin", "token0": a word that merely starts with
	// "token" is vocabulary, not a credential.
	return false
}

// harmlessTokenPrev reports whether a word before "token" makes it a count, a
// vocabulary item or a coin: "max_token", "eos_token", "sell_token".
func harmlessTokenPrev(w []byte) bool {
	switch string(w) {
	case "max", "min", "num", "total", "input", "output", "prompt", "completion",
		"cached", "cache", "reasoning", "stop", "eos", "bos", "pad", "unk", "sep",
		"cls", "mask", "special", "start", "end", "native", "base", "quote",
		"erc20", "erc721", "erc1155", "spl", "wrapped", "from", "to", "src", "dst",
		"source", "dest", "destination", "sell", "buy", "in", "out", "pay",
		"receive", "reward", "fee", "gas", "stake", "staked", "lp", "underlying",
		"collateral", "debt", "borrow", "supply", "target", "reserve", "governance":
		return true
	}
	return false
}

// harmlessTokenNext reports whether a word after "token" makes it a coin or a
// count: "token_in", "token_address", "token_count".
func harmlessTokenNext(w []byte) bool {
	switch string(w) {
	case "in", "out", "address", "addresses", "addr", "symbol", "symbols", "id",
		"ids", "name", "names", "decimals", "decimal", "amount", "amounts", "count",
		"counts", "type", "types", "limit", "limits", "usage", "budget", "mint",
		"contract", "price", "prices", "balance", "balances", "list", "standard",
		"program", "pair", "info", "metadata", "uri", "url", "endpoint", "logo",
		"chain", "network", "index", "idx", "length", "len", "estimate", "cost",
		"costs", "supply", "holder", "holders", "account", "owner", "approval",
		"allowance", "spender", "quantity", "qty", "expiry", "expires",
		"expiration", "ttl", "lifetime", "a", "b", "0", "1", "x", "y":
		return true
	}
	return false
}

// secretTokensPrev reports whether a word before "tokens" makes them
// credentials: "access_tokens", "apiTokens". Plain "tokens" is a count.
func secretTokensPrev(w []byte) bool {
	switch string(w) {
	case "access", "refresh", "auth", "api", "bearer", "session", "id", "oauth",
		"oauth2", "bot", "csrf", "xsrf", "github", "gh", "gitlab", "personal", "app",
		"service", "private", "jwt", "sso", "saml", "slack", "npm", "pypi", "hf",
		"security", "user", "device", "client":
		return true
	}
	return false
}
