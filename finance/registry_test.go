package finance

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/bits"
	"strings"
	"testing"
)

// The registry is written by hand; these tests hold it to its own rules.

func TestRegistryChainsHaveListings(t *testing.T) {
	for _, c := range chains {
		if len(canonical[c.Name]) == 0 {
			t.Errorf("chain %s has no canonical tokens", c.Name)
		}
	}
	for name := range canonical {
		if _, ok := chainByAlias(name); !ok {
			t.Errorf("canonical lists tokens for %q, which is not a chain", name)
		}
	}
}

func TestRegistryAddressesWellFormed(t *testing.T) {
	for _, c := range chains {
		for _, l := range canonical[c.Name] {
			switch {
			case l.address == "":
				// the native coin
			case c.Name == "solana":
				if !looksLikeAddress(l.address) || IsEVMAddress(l.address) {
					t.Errorf("%s %s: %q is not a base58 mint", c.Name, l.symbol, l.address)
				}
			default:
				if !IsEVMAddress(l.address) {
					t.Errorf("%s %s: %q is not 0x and 40 hex digits", c.Name, l.symbol, l.address)
					continue
				}
				if want := checksumAddress(l.address); l.address != want {
					t.Errorf("%s %s: %s is not in its EIP-55 form %s (a mistyped digit?)", c.Name, l.symbol, l.address, want)
				}
			}
			if l.decimals <= 0 || l.decimals > 18 {
				t.Errorf("%s %s: decimals %d", c.Name, l.symbol, l.decimals)
			}
			if l.asset == "" || l.asset != strings.ToUpper(l.asset) {
				t.Errorf("%s %s: asset id %q is not upper case", c.Name, l.symbol, l.asset)
			}
		}
	}
}

func TestRegistryNoDuplicates(t *testing.T) {
	for _, c := range chains {
		symbols, addresses, natives := map[string]string{}, map[string]listing{}, 0
		for _, l := range canonical[c.Name] {
			s := strings.ToUpper(l.symbol)
			if prev, ok := symbols[s]; ok {
				t.Errorf("%s lists the symbol %s twice (%s and %s)", c.Name, s, prev, l.address)
			}
			symbols[s] = l.address
			if l.address == "" {
				natives++
				continue
			}
			k := addrKey(l.address)
			if prev, ok := addresses[k]; ok {
				t.Errorf("%s lists %s twice: as %s (%s) and as %s (%s)", c.Name, l.address, prev.symbol, prev.asset, l.symbol, l.asset)
			}
			addresses[k] = l
		}
		if natives > 1 {
			t.Errorf("%s lists %d native coins", c.Name, natives)
		}
	}
	// An address listed on several chains is the same token on each.
	for addr, ts := range registry().anywhere {
		for _, tok := range ts[1:] {
			if tok.Symbol != ts[0].Symbol || tok.AssetID != ts[0].AssetID {
				t.Errorf("%s is %s (%s) on %s but %s (%s) on %s", addr, ts[0].Symbol, ts[0].AssetID, ts[0].Chain.Name, tok.Symbol, tok.AssetID, tok.Chain.Name)
			}
		}
	}
}

func TestRegistryEverySymbolResolves(t *testing.T) {
	r := Resolver{Testnets: true}
	for _, c := range chains {
		chain, err := r.Chain(c.Name)
		if err != nil {
			t.Fatalf("Chain(%q): %v", c.Name, err)
		}
		for _, l := range canonical[c.Name] {
			for _, ref := range []TokenRef{
				{Symbol: l.symbol},
				{Symbol: strings.ToLower(l.symbol)},
				{Symbol: l.symbol, Address: l.address},
				{Symbol: l.symbol, Address: addrKey(l.address)}, // EVM addresses in lower case; base58 is case-sensitive
				{Address: l.address},
			} {
				if ref.Symbol == "" && ref.Address == "" {
					continue // the native coin has no address to look up
				}
				tok, err := r.Token(chain, ref)
				if err != nil {
					t.Errorf("Token(%s, %v) = %v", c.Name, ref, err)
					continue
				}
				if !tok.Canonical || tok.Symbol != l.symbol || tok.Address != l.address || tok.AssetID != l.asset || tok.Decimals != l.decimals || tok.Chain.Name != c.Name {
					t.Errorf("Token(%s, %v) = %+v; want the listing %+v", c.Name, ref, tok, l)
				}
			}
		}
	}
}

// TestRegistryTickersAreNotBait checks the whole table against the scam
// rules: a canonical ticker must never trip them.
func TestRegistryTickersAreNotBait(t *testing.T) {
	for _, c := range chains {
		for _, l := range canonical[c.Name] {
			if why, ok := scam(TokenRef{Symbol: l.symbol, Address: l.address}); ok {
				t.Errorf("%s %s trips the scam rules: %s", c.Name, l.symbol, why)
			}
			if _, ok := scamTickers[strings.ToUpper(l.symbol)]; ok {
				t.Errorf("%s %s is both canonical and a scam ticker", c.Name, l.symbol)
			}
		}
	}
}

func TestChainAliases(t *testing.T) {
	cases := []struct {
		name     string
		testnets bool
		wantID   int64
		problem  TokenProblem // "" when the chain resolves
	}{
		{"eth", false, 1, ""},
		{"ethereum", false, 1, ""},
		{"mainnet", false, 1, ""},
		{"  Ethereum ", false, 1, ""},
		{"ETH", false, 1, ""},
		{"1", false, 1, ""},
		{"arb", false, 42161, ""},
		{"arbitrum-one", false, 42161, ""},
		{"base", false, 8453, ""},
		{"op", false, 10, ""},
		{"matic", false, 137, ""},
		{"bnb", false, 56, ""},
		{"sol", false, 101, ""},
		{"basee", false, 0, UnknownChain},
		{"bse", false, 0, UnknownChain},
		{"", false, 0, UnknownChain},
		{"ethereum ", true, 1, ""},
		{"base-sepolia", false, 0, TestnetChain},
		{"84532", false, 0, TestnetChain},
		{"sepolia", false, 0, TestnetChain},
		{"base-sepolia", true, 84532, ""},
		{"arb-sepolia", true, 421614, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Resolver{Testnets: c.testnets}.Chain(c.name)
			if c.problem == "" {
				if err != nil || got.ID != c.wantID {
					t.Fatalf("Chain(%q) = %+v, %v; want chain %d", c.name, got, err, c.wantID)
				}
				return
			}
			var te *TokenError
			if !errors.As(err, &te) || te.Problem != c.problem {
				t.Fatalf("Chain(%q) = %+v, %v; want a %s error", c.name, got, err, c.problem)
			}
		})
	}
}

// TestCorpusAddressesResolve pins the addresses the test corpus
// (finance-signing-cases.jsonl) and the issue name.
func TestCorpusAddressesResolve(t *testing.T) {
	cases := []struct {
		chain, symbol, address string
		class                  AssetClass
	}{
		{"base", "USDC", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", ClassStablecoin},
		{"base", "WETH", "0x4200000000000000000000000000000000000006", ClassMajor},
		{"arb", "USDC", "0xaf88d065e77c8cc2239327c5edb3a432268e5831", ClassStablecoin},
		{"arbitrum", "WETH", "0x82aF49447D8a07e3bd95BD0d56f35241523fBab1", ClassMajor},
		{"ethereum", "USDC", "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", ClassStablecoin},
		{"ethereum", "cbBTC", "0xcbB7C0000aB88B473b1f5aFd9ef808440eed33Bf", ClassMajor},
		{"base", "cbBTC", "0xcbB7C0000aB88B473b1f5aFd9ef808440eed33Bf", ClassMajor},
		{"base", "BNKR", "0x22af33fe49fd1fa80c7149773dde5890d3c76f3b", ClassMeme},
		{"base-sepolia", "USDC", "0x036CbD53842c5426634e7929541eC2318f3dCF7e", ClassStablecoin},
		// The example: "buy USDT on Arbitrum".
		{"Arbitrum", "usdt", "0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9", ClassStablecoin},
	}
	r := Resolver{Testnets: true}
	for _, c := range cases {
		t.Run(c.chain+"/"+c.symbol, func(t *testing.T) {
			chain, err := r.Chain(c.chain)
			if err != nil {
				t.Fatal(err)
			}
			bySymbol, err := r.Token(chain, TokenRef{Symbol: c.symbol})
			if err != nil {
				t.Fatalf("Token(%s, %s) = %v", c.chain, c.symbol, err)
			}
			if !SameAddress(bySymbol.Address, c.address) || bySymbol.Class != c.class {
				t.Errorf("Token(%s, %s) = %s (%s); want %s (%s)", c.chain, c.symbol, bySymbol.Address, bySymbol.Class, c.address, c.class)
			}
			byAddress, err := r.Token(chain, ParseTokenRef(c.symbol+":"+c.address))
			if err != nil || byAddress != bySymbol {
				t.Errorf("Token(%s, %s:%s) = %+v, %v; want %+v", c.chain, c.symbol, c.address, byAddress, err, bySymbol)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		asset string
		want  AssetClass
	}{
		{"ETH", ClassMajor}, {"eth", ClassMajor}, {"BTC", ClassMajor}, {"SOL", ClassMajor},
		{"USDC", ClassStablecoin}, {"usdt", ClassStablecoin}, {"DAI", ClassStablecoin},
		{"UNI", ClassDeFi}, {"LINK", ClassDeFi},
		{"PEPE", ClassMeme}, {"BONK", ClassMeme}, {"BNKR", ClassMeme},
		{"NEWTKN", ClassUnknown}, {"WETH", ClassUnknown}, {"", ClassUnknown}, {"USDС", ClassUnknown},
	}
	for _, c := range cases {
		if got := Classify(c.asset); got != c.want {
			t.Errorf("Classify(%q) = %v, want %v", c.asset, got, c.want)
		}
	}
	// Every listed asset has a class: nothing canonical is "unknown".
	for _, c := range chains {
		for _, l := range canonical[c.Name] {
			if Classify(l.asset) == ClassUnknown {
				t.Errorf("%s %s: asset %s has no class", c.Name, l.symbol, l.asset)
			}
		}
	}
}

// checksumAddress returns the EIP-55 mixed-case form of an EVM address: a
// hex letter is upper case when the matching nibble of
// keccak256(lower-case hex) is 8 or more.
func checksumAddress(a string) string {
	lower := strings.ToLower(a[2:])
	h := keccak256([]byte(lower))
	out := []byte("0x" + lower)
	for i := 0; i < 40; i++ {
		nibble := h[i/2] >> 4
		if i%2 == 1 {
			nibble = h[i/2] & 0xf
		}
		if c := out[2+i]; c >= 'a' && nibble >= 8 {
			out[2+i] = c - 'a' + 'A'
		}
	}
	return string(out)
}

func TestChecksumAddress(t *testing.T) {
	if got := hex.EncodeToString(keccak256(nil)); got != "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470" {
		t.Fatalf("keccak256(\"\") = %s", got)
	}
	// The examples of EIP-55 itself.
	for _, a := range []string{
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
		"0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
		"0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
		"0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
	} {
		if got := checksumAddress(strings.ToLower(a)); got != a {
			t.Errorf("checksumAddress(%s) = %s, want %s", strings.ToLower(a), got, a)
		}
	}
}

// keccak256 is the original Keccak-256 (pad 0x01, not SHA-3's 0x06), as
// Ethereum uses it. Test-only: the module does not depend on x/crypto.
func keccak256(msg []byte) []byte {
	const rate = 136
	var st [25]uint64
	padded := append(append([]byte{}, msg...), 0x01)
	for len(padded)%rate != 0 {
		padded = append(padded, 0)
	}
	padded[len(padded)-1] |= 0x80
	for off := 0; off < len(padded); off += rate {
		for i := 0; i < rate/8; i++ {
			st[i] ^= binary.LittleEndian.Uint64(padded[off+8*i:])
		}
		keccakF(&st)
	}
	out := make([]byte, 32)
	for i := 0; i < 4; i++ {
		binary.LittleEndian.PutUint64(out[8*i:], st[i])
	}
	return out
}

var keccakRC = [24]uint64{
	0x0000000000000001, 0x0000000000008082, 0x800000000000808A, 0x8000000080008000,
	0x000000000000808B, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
	0x000000000000008A, 0x0000000000000088, 0x0000000080008009, 0x000000008000000A,
	0x000000008000808B, 0x800000000000008B, 0x8000000000008089, 0x8000000000008003,
	0x8000000000008002, 0x8000000000000080, 0x000000000000800A, 0x800000008000000A,
	0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008,
}

// keccakRho[x+5y] is the rotation of lane (x, y).
var keccakRho = [25]int{
	0, 1, 62, 28, 27,
	36, 44, 6, 55, 20,
	3, 10, 43, 25, 39,
	41, 45, 15, 21, 8,
	18, 2, 61, 56, 14,
}

func keccakF(a *[25]uint64) {
	for round := 0; round < 24; round++ {
		var c, d [5]uint64
		for x := 0; x < 5; x++ {
			c[x] = a[x] ^ a[x+5] ^ a[x+10] ^ a[x+15] ^ a[x+20]
		}
		for x := 0; x < 5; x++ {
			d[x] = c[(x+4)%5] ^ bits.RotateLeft64(c[(x+1)%5], 1)
		}
		for i := range a {
			a[i] ^= d[i%5]
		}
		var b [25]uint64
		for x := 0; x < 5; x++ {
			for y := 0; y < 5; y++ {
				b[y+5*((2*x+3*y)%5)] = bits.RotateLeft64(a[x+5*y], keccakRho[x+5*y])
			}
		}
		for x := 0; x < 5; x++ {
			for y := 0; y < 5; y++ {
				a[x+5*y] = b[x+5*y] ^ (^b[(x+1)%5+5*y] & b[(x+2)%5+5*y])
			}
		}
		a[0] ^= keccakRC[round]
	}
}
