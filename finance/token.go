package finance

import "strings"

// Chain is a blockchain warden knows, by its canonical name and chain id.
type Chain struct {
	Name    string `json:"name"` // canonical name: ethereum, base, arbitrum…
	ID      int64  `json:"id"`   // EVM chain id; Solana has its own fixed id here
	Testnet bool   `json:"testnet,omitempty"`
}

// AssetClass groups assets for exposure limits. One classifier (Classify)
// decides every token's class, for every part of warden.
type AssetClass string

// Asset classes.
const (
	ClassMajor      AssetClass = "major"      // BTC, ETH, SOL, BNB…
	ClassStablecoin AssetClass = "stablecoin" // USDC, USDT, DAI…
	ClassDeFi       AssetClass = "defi"       // UNI, AAVE, LINK…
	ClassMeme       AssetClass = "crypto_meme"
	ClassUnknown    AssetClass = "unknown" // anything else: not in the registry
)

// Token is a resolved token on one chain.
type Token struct {
	Symbol string `json:"symbol"`
	Chain  Chain  `json:"chain"`
	// Address is the contract address as the registry lists it; "" for a
	// chain's native coin.
	Address string `json:"address,omitempty"`
	// AssetID is the asset the token represents across chains: ETH for
	// native ETH and every WETH, BTC for WBTC and cbBTC, USDC for every USDC.
	// Exposure is keyed by it, so splitting a position across chains does
	// not split its limit.
	AssetID  string     `json:"asset_id"`
	Class    AssetClass `json:"class"`
	Decimals int        `json:"decimals"`
	// Canonical is true for a token from the registry in source; false for
	// an unlisted token a human has let through.
	Canonical bool `json:"canonical"`
}

// Key is the token's identity on its chain: "chain:address" (or
// "chain:SYMBOL" for a native coin).
func (t Token) Key() string {
	if t.Address == "" {
		return t.Chain.Name + ":" + t.Symbol
	}
	return t.Chain.Name + ":" + strings.ToLower(t.Address)
}

// String names the token for messages: "USDC on base (0x8335…2913)".
func (t Token) String() string {
	s := t.Symbol + " on " + t.Chain.Name
	if t.Address != "" {
		s += " (" + t.Address + ")"
	}
	return s
}

// TokenRef is a token as a request names it: a symbol, an address, or
// both ("USDC:0x8335…" asks for USDC and asserts its address).
type TokenRef struct {
	Symbol  string
	Address string
}

// ParseTokenRef splits a token reference. "0x…" alone is an address;
// "SYM:0x…" is a symbol with the address it claims; anything else is a symbol.
func ParseTokenRef(s string) TokenRef {
	s = strings.TrimSpace(s)
	if sym, addr, ok := strings.Cut(s, ":"); ok && looksLikeAddress(addr) {
		return TokenRef{Symbol: strings.TrimSpace(sym), Address: strings.TrimSpace(addr)}
	}
	if looksLikeAddress(s) {
		return TokenRef{Address: s}
	}
	return TokenRef{Symbol: s}
}

func (r TokenRef) String() string {
	switch {
	case r.Symbol != "" && r.Address != "":
		return r.Symbol + " (" + r.Address + ")"
	case r.Address != "":
		return r.Address
	}
	return r.Symbol
}

// looksLikeAddress reports whether s is shaped like an EVM address (0x and
// 40 hex digits) or a Solana base58 mint (32–44 base58 characters).
func looksLikeAddress(s string) bool {
	if IsEVMAddress(s) {
		return true
	}
	if len(s) < 32 || len(s) > 44 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz", c) {
			return false
		}
	}
	return true
}

// IsEVMAddress reports whether s is 0x followed by exactly 40 hex digits.
func IsEVMAddress(s string) bool {
	if len(s) != 42 || (s[:2] != "0x" && s[:2] != "0X") {
		return false
	}
	for _, c := range s[2:] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// SameAddress compares two addresses: EVM addresses case-insensitively (the
// mixed case is only a checksum), others exactly.
func SameAddress(a, b string) bool {
	if IsEVMAddress(a) && IsEVMAddress(b) {
		return strings.EqualFold(a, b)
	}
	return a == b
}
