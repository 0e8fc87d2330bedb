package redact

// secretValue reports whether value, held under a key of kind k, must be
// masked. A bare "token" key holding a ticker symbol (ETH, USDC) or a contract
// address, and a seed key holding an integer (an RNG seed), are readable:
// neither can be a credential.
func secretValue(k keyKind, value string) bool {
	switch k {
	case notSecret:
		return false
	case bareToken:
		return !isCoin(value)
	case seedKey:
		return !isInteger(value)
	}
	return true
}

// isCoin reports whether v names a coin: a ticker symbol or a contract
// address. Neither is ever a credential.
func isCoin(v string) bool { return isTicker(v) || isAddress(v) }

// isAddress reports whether v is a 0x-prefixed 20-byte hex address.
func isAddress(v string) bool {
	if len(v) != 42 || v[0] != '0' || v[1] != 'x' && v[1] != 'X' {
		return false
	}
	for i := 2; i < len(v); i++ {
		if !hexDigit.has(v[i]) {
			return false
		}
	}
	return true
}

// isTicker reports whether v looks like a coin's ticker symbol: 2 to 11
// capital letters and digits, starting with a letter.
func isTicker(v string) bool {
	if len(v) < 2 || len(v) > 11 || v[0] < 'A' || v[0] > 'Z' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// isInteger reports whether v is a decimal integer of at most 20 digits.
func isInteger(v string) bool {
	if v != "" && v[0] == '-' {
		v = v[1:]
	}
	if v == "" || len(v) > 20 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}
