package finance

import (
	"sort"
	"strings"
	"sync"
)

// chains lists the chains warden trades on, with their aliases (lower case).
var chains = []struct {
	Chain
	aliases []string
}{
	{Chain{Name: "ethereum", ID: 1}, []string{"eth", "ethereum", "mainnet", "ethereum-mainnet", "1"}},
	{Chain{Name: "base", ID: 8453}, []string{"base", "base-mainnet", "8453"}},
	{Chain{Name: "arbitrum", ID: 42161}, []string{"arbitrum", "arb", "arbitrum-one", "arb1", "42161"}},
	{Chain{Name: "optimism", ID: 10}, []string{"optimism", "op", "op-mainnet", "10"}},
	{Chain{Name: "polygon", ID: 137}, []string{"polygon", "matic", "polygon-pos", "137"}},
	{Chain{Name: "bsc", ID: 56}, []string{"bsc", "bnb", "bnb-chain", "binance-smart-chain", "56"}},
	// Solana has no EVM chain id; 101 is its mainnet-beta cluster id.
	{Chain{Name: "solana", ID: 101}, []string{"solana", "sol", "solana-mainnet", "mainnet-beta"}},
	{Chain{Name: "sepolia", ID: 11155111, Testnet: true}, []string{"sepolia", "eth-sepolia", "11155111"}},
	{Chain{Name: "base-sepolia", ID: 84532, Testnet: true}, []string{"base-sepolia", "84532"}},
	{Chain{Name: "arbitrum-sepolia", ID: 421614, Testnet: true}, []string{"arbitrum-sepolia", "arb-sepolia", "421614"}},
}

// chainAlias maps each alias to its chain, built on first use, not at
// package init (docs/benchmarks.md, cold start).
var chainAlias = sync.OnceValue(func() map[string]Chain {
	m := map[string]Chain{}
	for _, c := range chains {
		for _, a := range c.aliases {
			m[a] = c.Chain
		}
	}
	return m
})

// chainByAlias resolves a chain name exactly (ASCII case-insensitive).
func chainByAlias(name string) (Chain, bool) {
	c, ok := chainAlias()[strings.ToLower(strings.TrimSpace(name))]
	return c, ok
}

// ChainNames lists the canonical names of the mainnets.
func ChainNames() []string {
	var out []string
	for _, c := range chains {
		if !c.Testnet {
			out = append(out, c.Name)
		}
	}
	sort.Strings(out)
	return out
}

// A listing is one canonical token: symbol, address ("" for the native
// coin), decimals and the asset it represents.
type listing struct {
	symbol, address string
	decimals        int
	asset           string
}

// canonical lists, per chain, the tokens warden resolves by name. Changing
// it needs a code change and review: it is what "buy USDT on Arbitrum"
// resolves against. Every EVM address is written in its EIP-55 checksum
// form, which registry_test.go verifies, so a mistyped digit fails the tests.
//
// Sources the addresses were checked against (August 2026): Coinbase
// AgentKit's TOKEN_ADDRESSES_BY_SYMBOLS (erc20/constants.ts: Base, Base
// Sepolia, Ethereum, Arbitrum, Optimism and Polygon USDC, WETH, cbBTC, BNKR);
// the Uniswap default token list (src/tokens/*.json and the bridgeInfo of its
// built list: every Ethereum, Polygon, Optimism and Arbitrum entry, DAI on
// Base, WBNB/USDC/USDT/DAI/ETH on BNB Chain, the Solana mints); Base's
// contract docs (WETH9 at 0x4200…0006 on Base and Base Sepolia); Circle's
// testnet USDC on Sepolia, Base Sepolia and Arbitrum Sepolia (WETH on the
// Sepolias: Uniswap's Sepolia list and its Arbitrum Sepolia router's WETH9).
// USDT and WBTC on Base and BTCB on
// BNB Chain agree across several independent integrations (see the notes on
// those lines) but not an issuer's own page.
var canonical = map[string][]listing{
	"ethereum": {
		{"ETH", "", 18, "ETH"},
		{"WETH", "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2", 18, "ETH"},
		{"USDC", "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", 6, "USDC"},
		{"USDT", "0xdAC17F958D2ee523a2206206994597C13D831ec7", 6, "USDT"},
		{"DAI", "0x6B175474E89094C44Da98b954EedeAC495271d0F", 18, "DAI"},
		{"WBTC", "0x2260FAC5E5542a773Aa44fBCfeDf7C193bc2C599", 8, "BTC"},
		{"cbBTC", "0xcbB7C0000aB88B473b1f5aFd9ef808440eed33Bf", 8, "BTC"},
		{"LINK", "0x514910771AF9Ca656af840dff83E8264EcF986CA", 18, "LINK"},
		{"UNI", "0x1f9840a85d5aF5bf1D1762F925BDADdC4201F984", 18, "UNI"},
		{"AAVE", "0x7Fc66500c84A76Ad7e9c93437bFc5Ac33E2DDaE9", 18, "AAVE"},
		{"PEPE", "0x6982508145454Ce325dDbE47a25d4ec3d2311933", 18, "PEPE"},
	},
	"base": {
		{"ETH", "", 18, "ETH"},
		{"WETH", "0x4200000000000000000000000000000000000006", 18, "ETH"},
		{"USDC", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", 6, "USDC"},
		// Bridged Tether on Base: the address every Base integration found
		// uses (payment routers, Base token maps, chain token tables).
		{"USDT", "0xfde4C96c8593536E31F229EA8f37b2ADa2699bb2", 6, "USDT"},
		{"DAI", "0x50c5725949A6F0c72E6C4a641F24049A917DB0Cb", 18, "DAI"},
		{"cbBTC", "0xcbB7C0000aB88B473b1f5aFd9ef808440eed33Bf", 8, "BTC"},
		// BitGo's WBTC as a LayerZero OFT, the same address on every chain it
		// is deployed to (BOB gateway docs name it as wBTC on Base).
		{"WBTC", "0x0555E30da8f98308EdB960aa94C0Db47230d2B9c", 8, "BTC"},
		{"BNKR", "0x22aF33FE49fD1Fa80c7149773dDe5890D3c76F3b", 18, "BNKR"},
	},
	"arbitrum": {
		{"ETH", "", 18, "ETH"},
		{"WETH", "0x82aF49447D8a07e3bd95BD0d56f35241523fBab1", 18, "ETH"},
		{"USDC", "0xaf88d065e77c8cC2239327C5EDb3A432268e5831", 6, "USDC"},
		{"USDC.e", "0xFF970A61A04b1cA14834A43f5dE4533eBDDB5CC8", 6, "USDC"},
		// Upgraded in place to USDT0 in 2025; the address did not change.
		{"USDT", "0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9", 6, "USDT"},
		{"DAI", "0xDA10009cBd5D07dd0CeCc66161FC93D7c9000da1", 18, "DAI"},
		{"WBTC", "0x2f2a2543B76A4166549F7aaB2e75Bef0aefC5B0f", 8, "BTC"},
		{"ARB", "0x912CE59144191C1204E64559FE8253a0e49E6548", 18, "ARB"},
	},
	"optimism": {
		{"ETH", "", 18, "ETH"},
		{"WETH", "0x4200000000000000000000000000000000000006", 18, "ETH"},
		{"USDC", "0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85", 6, "USDC"},
		// The standard-bridge Tether. Uniswap's list now also carries USDT0
		// (0x01bFF41798a0BcF287b996046Ca68b395DbC1071), a separate contract
		// that is not listed here, so it resolves as an impersonation of USDT.
		{"USDT", "0x94b008aA00579c1307B0EF2c499aD98a8ce58e58", 6, "USDT"},
		{"DAI", "0xDA10009cBd5D07dd0CeCc66161FC93D7c9000da1", 18, "DAI"},
		{"WBTC", "0x68f180fcCe6836688e9084f035309E29Bf0A2095", 8, "BTC"},
		{"OP", "0x4200000000000000000000000000000000000042", 18, "OP"},
	},
	"polygon": {
		{"POL", "", 18, "POL"},
		// The contract once named WMATIC, renamed WPOL with the POL migration.
		{"WPOL", "0x0d500B1d8E8eF31E21C99d1Db9A6444d3ADf1270", 18, "POL"},
		{"USDC", "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359", 6, "USDC"},
		{"USDT", "0xc2132D05D31c914a87C6611C10748AEb04B58e8F", 6, "USDT"},
		{"DAI", "0x8f3Cf7ad23Cd3CaDbD9735AFf958023239c6A063", 18, "DAI"},
		{"WETH", "0x7ceB23fD6bC0adD59E62ac25578270cFf1b9f619", 18, "ETH"},
		{"WBTC", "0x1BFD67037B42Cf73acF2047067bd4F2C47D9BfD6", 8, "BTC"},
	},
	"bsc": {
		{"BNB", "", 18, "BNB"},
		{"WBNB", "0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c", 18, "BNB"},
		{"USDC", "0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d", 18, "USDC"},
		{"USDT", "0x55d398326f99059fF775485246999027B3197955", 18, "USDT"},
		{"DAI", "0x1AF3F329e8BE154074D8769D1FFa4eE058B1DBc3", 18, "DAI"},
		// Binance-Peg tokens: on BNB Chain "ETH" is a contract, not the native coin.
		{"ETH", "0x2170Ed0880ac9A755fd29B2688956BD959F933F8", 18, "ETH"},
		{"BTCB", "0x7130d2A12B9BCbFAe4f2634d864A1Ee1Ce3Ead9c", 18, "BTC"},
	},
	"solana": {
		{"SOL", "", 9, "SOL"},
		{"WSOL", "So11111111111111111111111111111111111111112", 9, "SOL"},
		{"USDC", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", 6, "USDC"},
		{"USDT", "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB", 6, "USDT"},
		{"BONK", "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263", 5, "BONK"},
	},
	"base-sepolia": {
		{"ETH", "", 18, "ETH"},
		{"WETH", "0x4200000000000000000000000000000000000006", 18, "ETH"},
		{"USDC", "0x036CbD53842c5426634e7929541eC2318f3dCF7e", 6, "USDC"},
	},
	"sepolia": {
		{"ETH", "", 18, "ETH"},
		{"WETH", "0xfFf9976782d46CC05630D1f6eBAb18b2324d6B14", 18, "ETH"},
		{"USDC", "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238", 6, "USDC"},
	},
	"arbitrum-sepolia": {
		{"ETH", "", 18, "ETH"},
		{"WETH", "0x980B62Da83eFf3D4576C647993b0c1D7faf17c73", 18, "ETH"},
		{"USDC", "0x75faf114eafb1BDbe2F0316DF893fd58CE46AA4d", 6, "USDC"},
	},
}

// tokenIndex indexes canonical: by chain and upper-case symbol, by chain and
// lower-case address, and by address alone (every mainnet listing at that
// address, in the order of chains: WETH at 0x4200…0006 is on base and on
// optimism).
type tokenIndex struct {
	bySymbol, byAddress map[string]Token
	native              map[string]Token // by chain name
	anywhere            map[string][]Token
	reserved            map[string]bool
}

// registry builds the index on first use, not at package init: every warden
// process links this package, and most (a hook judging a shell command) never
// look a token up. Building it cost 0.08 ms of each process's start.
var registry = sync.OnceValue(func() (r tokenIndex) {
	r.bySymbol, r.byAddress, r.native, r.anywhere, r.reserved = map[string]Token{}, map[string]Token{}, map[string]Token{}, map[string][]Token{}, map[string]bool{}
	for _, c := range chains {
		for _, l := range canonical[c.Name] {
			t := Token{Symbol: l.symbol, Chain: c.Chain, Address: l.address, AssetID: l.asset, Class: Classify(l.asset), Decimals: l.decimals, Canonical: true}
			r.bySymbol[c.Name+"|"+strings.ToUpper(l.symbol)] = t
			r.reserved[strings.ToUpper(l.symbol)] = true
			if l.address == "" {
				r.native[c.Name] = t
			}
			if l.address != "" {
				r.byAddress[c.Name+"|"+addrKey(l.address)] = t
				if !c.Testnet {
					r.anywhere[addrKey(l.address)] = append(r.anywhere[addrKey(l.address)], t)
				}
			}
		}
	}
	return r
})

// addrKey is the lookup key of an address: EVM addresses in lower case.
func addrKey(a string) string {
	if IsEVMAddress(a) {
		return strings.ToLower(a)
	}
	return a
}

func canonicalBySymbol(c Chain, symbol string) (Token, bool) {
	t, ok := registry().bySymbol[c.Name+"|"+strings.ToUpper(strings.TrimSpace(symbol))]
	return t, ok
}

func canonicalByAddress(c Chain, address string) (Token, bool) {
	t, ok := registry().byAddress[c.Name+"|"+addrKey(strings.TrimSpace(address))]
	return t, ok
}

// canonicalElsewhere finds an address among the mainnets' canonical tokens
// on chains other than c: the listings it is canonical for there, or none.
func canonicalElsewhere(c Chain, address string) []Token {
	var out []Token
	for _, t := range registry().anywhere[addrKey(strings.TrimSpace(address))] {
		if t.Chain.Name != c.Name {
			out = append(out, t)
		}
	}
	return out
}

// describeListings names where tokens are canonical: "WETH on base and
// optimism", "USDC on ethereum".
func describeListings(ts []Token) string {
	if len(ts) == 0 {
		return ""
	}
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Chain.Name
	}
	s := names[len(names)-1]
	if len(names) > 1 {
		s = strings.Join(names[:len(names)-1], ", ") + " and " + s
	}
	return ts[0].Symbol + " on " + s
}

// reservedTicker reports whether symbol is a canonical ticker on some chain.
func reservedTicker(symbol string) bool {
	return registry().reserved[strings.ToUpper(strings.TrimSpace(symbol))]
}

// classes maps asset ids to their class; an asset not listed is unknown.
var classes = map[string]AssetClass{
	"ETH": ClassMajor, "BTC": ClassMajor, "SOL": ClassMajor, "BNB": ClassMajor, "POL": ClassMajor,
	"USDC": ClassStablecoin, "USDT": ClassStablecoin, "DAI": ClassStablecoin,
	"LINK": ClassDeFi, "UNI": ClassDeFi, "AAVE": ClassDeFi, "ARB": ClassDeFi, "OP": ClassDeFi,
	"PEPE": ClassMeme, "BONK": ClassMeme, "BNKR": ClassMeme, "DOGE": ClassMeme, "SHIB": ClassMeme,
}

// Classify returns the asset class of an asset id (ETH, BTC, USDC…). It is
// the one classifier warden uses.
func Classify(assetID string) AssetClass {
	if c, ok := classes[strings.ToUpper(assetID)]; ok {
		return c
	}
	return ClassUnknown
}
