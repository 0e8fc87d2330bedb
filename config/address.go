package config

import (
	"math/big"
	"strings"
)

// Wallet and recipient addresses in the trade section are EVM addresses (0x
// and 40 hex digits; the case of the digits is not checked) or Solana
// addresses (base58 of 32 bytes).

const wantAddress = "an EVM address (0x and 40 hex digits) or a Solana address (base58)"

// checkAddress records a problem at path unless s is an address funds may go
// to: well formed and not the zero address, which burns what is sent.
func (c *checker) checkAddress(s, what string, path ...any) {
	switch {
	case s == "":
		c.reportf(path, "empty %s; want %s", what, wantAddress)
	case !isEVMAddress(s) && !isSolanaAddress(s):
		c.reportf(path, "%s is not %s", quote(s), wantAddress)
	case isZeroAddress(s):
		c.reportf(path, "%s is the zero address, which burns what is sent; want a real %s", quote(s), what)
	}
}

// isZeroAddress reports whether the well-formed address s is all zero bytes:
// 0x and forty 0s, or thirty-two 1s in base58.
func isZeroAddress(s string) bool {
	if isEVMAddress(s) {
		return strings.Trim(s[2:], "0") == ""
	}
	return strings.Trim(s, "1") == ""
}

// isEVMAddress reports whether s is 0x followed by exactly 40 hex digits.
func isEVMAddress(s string) bool {
	if len(s) != 42 || (s[:2] != "0x" && s[:2] != "0X") {
		return false
	}
	return !strings.ContainsFunc(s[2:], func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F')
	})
}

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// isSolanaAddress reports whether s is the base58 encoding of 32 bytes.
func isSolanaAddress(s string) bool {
	if len(s) < 32 || len(s) > 44 {
		return false
	}
	n, digit, radix := new(big.Int), new(big.Int), big.NewInt(58)
	zeros := 0 // each leading '1' encodes a zero byte
	for i := range len(s) {
		d := strings.IndexByte(base58Alphabet, s[i])
		if d < 0 {
			return false
		}
		if d == 0 && i == zeros {
			zeros++
		}
		n.Mul(n, radix).Add(n, digit.SetInt64(int64(d)))
	}
	return zeros+len(n.Bytes()) == 32
}
