package config

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

const (
	evmWallet = "0x52908400098527886E0F7030069857D2E4169EE7"
	solWallet = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
)

func TestTradeSection(t *testing.T) {
	d := mustParse(t, "version: 1\n").Policy.Trade
	want := Trade{
		Backend:    "paper",
		Recipients: []string{},
		Paper:      PaperSettings{StartingCash: 10000 * warden.MicrosPerDollar, PoolDepth: 1000000 * warden.MicrosPerDollar, Seed: 1, Step: time.Minute, Volatility: 0.001},
		HTTP:       HTTPSettings{Timeout: 10 * time.Second, Endpoints: map[string]string{}},
	}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("defaults = %+v, want %+v", d, want)
	}
	l := mustParse(t, "version: 1\ntrade:\n  backend: HTTP\n  wallet: "+solWallet+"\n  http: {baseUrl: 'http://127.0.0.1:8545', endpoints: {swap: /swap}}\n")
	if len(l.Problems) != 0 {
		t.Fatalf("problems: %v", l.Problems)
	}
	if tr := l.Policy.Trade; tr.Backend != "http" || tr.Wallet != solWallet || tr.HTTP.BaseURL != "http://127.0.0.1:8545" ||
		!reflect.DeepEqual(tr.HTTP.Endpoints, map[string]string{"swap": "/swap"}) || tr.HTTP.TokenEnv != "" {
		t.Errorf("trade = %+v", tr)
	}
}

// testdata/load/trading.yaml sets every key of the trading sections.
func TestTradingFile(t *testing.T) {
	data, err := os.ReadFile("testdata/load/trading.yaml")
	if err != nil {
		t.Fatal(err)
	}
	l := mustParse(t, string(data))
	if len(l.Problems) != 0 {
		t.Fatalf("problems: %v", l.Problems)
	}
	usd := func(d float64) warden.USD { return usdOf(d) }
	want := Policy{
		Sizing:   Sizing{Strategy: "half_kelly", FixedAmount: usd(250.5), Fraction: 0.05, KellyMultiplier: 0.25},
		Exposure: Exposure{MaxPerToken: usd(1000), MaxPerChain: 0, MaxPerAssetClassFraction: 1, MaxTotal: usd(2500)},
		Slippage: Slippage{SmallMax: 0.03, MidMax: 0, LargeMax: 0.001, SmallBelow: usd(500), LargeAbove: usd(500), MinOutputRatio: 1, MaxLeverage: 100},
		StopLoss: StopLoss{Enabled: false, PollInterval: time.Second, MaxPriceAge: time.Millisecond, KillSwitchExits: "deny",
			Default: &StopRule{Type: "trailing", ThresholdPct: 1, TakeProfitPct: 0.5, MaxAge: time.Hour}},
		Trade: Trade{
			Backend: "http", Wallet: evmWallet, Testnets: true,
			Recipients: []string{"0xde709f2102306220921060314715629080e2fb77", solWallet},
			Paper:      PaperSettings{StartingCash: 0, PoolDepth: 1, PricesFile: "~/prices/eth.csv", Seed: -42, Step: time.Millisecond, Volatility: 0},
			HTTP: HTTPSettings{BaseURL: "https://venue.example/api", TokenEnv: "WARDEN_VENUE_TOKEN", Timeout: 10 * time.Minute, Endpoints: map[string]string{
				"price": "/v1/price", "portfolio": "/v1/portfolio", "simulate": "/v1/simulate", "swap": "/v1/swap",
				"perpOpen": "/v1/perp/open", "perpClose": "/v1/perp/close", "transfer": "/v1/transfer",
			}},
		},
	}
	p := l.Policy
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"sizing", p.Sizing, want.Sizing}, {"exposure", p.Exposure, want.Exposure}, {"slippage", p.Slippage, want.Slippage},
		{"stopLoss", p.StopLoss, want.StopLoss}, {"trade", p.Trade, want.Trade},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %+v\nwant %+v", c.name, c.got, c.want)
		}
	}
}

// Every key of the trading sections that trading.yaml sets can be read with
// Get and written back with Set (`warden config get/set`): setting them all
// on the default file gives the same policy.
func TestTradingKeysRoundTripThroughSet(t *testing.T) {
	data, err := os.ReadFile("testdata/load/trading.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src := mustParse(t, string(data))
	trading := []string{"sizing", "exposure", "slippage", "stopLoss", "trade"}
	var keys []string
	for _, kv := range src.List() {
		sec, _, _ := strings.Cut(kv.Key, ".")
		if slices.Contains(trading, sec) && !strings.HasPrefix(kv.Key, "stopLoss.defaultRule.") {
			keys = append(keys, kv.Key)
		}
	}
	keys = append(keys, "stopLoss.defaultRule") // a rule is set whole: its keys depend on each other
	path := writeFile(t, DefaultFile())
	// Some keys depend on others (trade.backend: http needs the wallet and
	// URL set first), so keys Set refuses are tried again until none is left.
	for pass := 0; len(keys) > 0; pass++ {
		var refused []string
		for _, key := range keys {
			v, err := src.Get(key)
			if err != nil {
				t.Fatalf("Get(%q) = %v", key, err)
			}
			if err := Set(path, key, FormatValue(v)); err != nil {
				if pass == 3 {
					t.Fatalf("Set(%q, %s) = %v", key, FormatValue(v), err)
				}
				refused = append(refused, key)
			}
		}
		keys = refused
	}
	l, err := Load(path)
	if err != nil || len(l.Problems) != 0 {
		t.Fatalf("Load = %v, %v", err, l.Problems)
	}
	tradingOf := func(p *Policy) []any { return []any{p.Sizing, p.Exposure, p.Slippage, p.StopLoss, p.Trade} }
	if got, want := tradingOf(l.Policy), tradingOf(src.Policy); !reflect.DeepEqual(got, want) {
		t.Errorf("after setting every key:\n%+v\nwant %+v\n%s", got, want, readBytes(t, path))
	}
	if text := string(readBytes(t, path)); !strings.Contains(text, "# Where trades execute") {
		t.Errorf("comments lost:\n%s", text)
	}
}

func TestTradeSectionProblems(t *testing.T) {
	testRefusals(t, "trade", []badBody{
		{"unknown backend", "backend: binance", "trade.backend", 3, `"binance" is not a trade backend; want paper (simulated) or http (a real venue)`},
		{"http without wallet", "backend: http\nhttp: {baseUrl: 'https://venue.example'}", "trade.wallet", 3, "wallet is missing; the http backend needs the address"},
		{"http without URL", "backend: http\nwallet: " + evmWallet, "trade.http.baseUrl", 3, "baseUrl is missing"},
		{"short EVM wallet", "wallet: '0xabc'", "trade.wallet", 3, `"0xabc" is not an EVM address (0x and 40 hex digits) or a Solana address (base58)`},
		{"EVM wallet with a bad digit", "wallet: '0x52908400098527886E0F7030069857D2E4169EEG'", "trade.wallet", 3, "is not an EVM address"},
		{"Solana wallet with a 0", "wallet: EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt10", "trade.wallet", 3, "is not an EVM address"},
		{"base58 of more than 32 bytes", "wallet: " + strings.Repeat("z", 44), "trade.wallet", 3, "is not an EVM address"},
		{"zero wallet", "wallet: '0x0000000000000000000000000000000000000000'", "trade.wallet", 3, "is the zero address, which burns what is sent"},
		{"bad recipient", "recipients: [" + evmWallet + ", alice.eth]", "trade.recipients[1]", 3, `"alice.eth" is not an EVM address`},
		{"zero Solana recipient", "recipients:\n  - " + strings.Repeat("1", 32), "trade.recipients[0]", 4, "is the zero address"},
		{"empty recipient", "recipients: ['']", "trade.recipients[0]", 3, "empty recipient address"},
		{"recipients as a word", "recipients: " + evmWallet, "trade.recipients", 3, "want a list of addresses transfers may go to"},
		{"lower-case token env", "http: {tokenEnv: venue_token}", "trade.http.tokenEnv", 3, "tokenEnv is not an environment variable name"},
		{"token env starting with a digit", "http: {tokenEnv: 1TOKEN}", "trade.http.tokenEnv", 3, "tokenEnv is not an environment variable name"},
		{"URL with user info", "http: {baseUrl: 'https://me:hunter2@venue.example'}", "trade.http.baseUrl", 3, "baseUrl holds a user name or password"},
		{"URL with query", "http: {baseUrl: 'https://venue.example/api?key=abc'}", "trade.http.baseUrl", 3, "baseUrl has a query or fragment"},
		{"ftp URL", "http: {baseUrl: 'ftp://venue.example'}", "trade.http.baseUrl", 3, "baseUrl is not an http or https URL"},
		{"relative URL", "http: {baseUrl: venue.example/api}", "trade.http.baseUrl", 3, "baseUrl is not an http or https URL"},
		{"URL without host", "http: {baseUrl: 'https:///api'}", "trade.http.baseUrl", 3, "baseUrl has no host"},
		{"timeout 0", "http: {timeoutMs: 0}", "trade.http.timeoutMs", 3, "0 is too small; want a whole number of milliseconds from 100"},
		{"endpoint without slash", "http:\n  endpoints:\n    swap: v1/swap", "trade.http.endpoints.swap", 5, `"v1/swap" does not start with /`},
		{"endpoint naming another host", "http: {endpoints: {transfer: //evil.example/x}}", "trade.http.endpoints.transfer", 3, "starts with //, which names another host"},
		{"endpoint with a space", "http: {endpoints: {price: '/v1/price now'}}", "trade.http.endpoints.price", 3, "has a space"},
		{"unknown endpoint", "http: {endpoints: {quote: /q}}", "trade.http.endpoints.quote", 3, "unknown key; want one of price, portfolio, simulate, swap, perpOpen, perpClose, transfer"},
		{"relative prices file", "paper: {pricesFile: prices.csv}", "trade.paper.pricesFile", 3, `pricesFile "prices.csv" must be an absolute path or start with ~/`},
		{"pool of no depth", "paper: {poolDepthUsd: 0}", "trade.paper.poolDepthUsd", 3, "a pool with no depth cannot fill an order"},
		{"negative cash", "paper: {startingUsd: -1}", "trade.paper.startingUsd", 3, "-1 is negative"},
		{"step 0", "paper: {stepMs: 0}", "trade.paper.stepMs", 3, "0 is too small"},
		{"volatility 1", "paper: {volatility: 1}", "trade.paper.volatility", 3, "1 is too large; want a fraction from 0 to below 1"},
		{"seed as a float", "paper: {seed: 1.5}", "trade.paper.seed", 3, "got 1.5 (a number); want a whole number"},
		{"misspelled key", "walet: " + evmWallet, "trade.walet", 3, "unknown key; did you mean trade.wallet?"},
		{"unknown key", "exchange: binance", "trade.exchange", 3, "unknown key; want one of backend, wallet, testnets, recipients, paper, http"},
	}, func(p *Policy) any { return p.Trade })
}

// A token written where its variable's name belongs is refused, and the
// problem, which is logged and audited, does not repeat it.
func TestTradeTokenEnvIsNeverEchoed(t *testing.T) {
	for _, secret := range []string{"ghp_16C7e42F292c6912E7710c838347Ae178B4a", "sk-live-abcdef0123456789", "Bearer abc.def"} {
		l := mustParse(t, "version: 1\ntrade:\n  http:\n    tokenEnv: '"+secret+"'\n")
		p := problemAt(t, l, "trade.http.tokenEnv")
		if p.Line != 4 || !strings.Contains(p.Message, "never goes in this file") {
			t.Errorf("tokenEnv %q: problem = %v", secret, p)
		}
		for _, p := range l.Problems {
			if strings.Contains(p.Error(), secret) {
				t.Errorf("problem %q repeats the secret", p.Error())
			}
		}
		if l.Policy.Trade.HTTP.TokenEnv != "" {
			t.Errorf("tokenEnv %q was kept: %q", secret, l.Policy.Trade.HTTP.TokenEnv)
		}
		path := writeFile(t, DefaultFile())
		err := Set(path, "trade.http.tokenEnv", secret)
		if we := wantCode(t, err, warden.EInvalid, "tokenEnv is not an environment variable name"); strings.Contains(we.Error(), secret) {
			t.Errorf("Set error %q repeats the secret", we.Error())
		}
	}
	l := mustParse(t, "version: 1\ntrade:\n  http:\n    baseUrl: 'https://me:hunter2@venue.example'\n")
	for _, p := range l.Problems {
		if strings.Contains(p.Error(), "hunter2") {
			t.Errorf("problem %q repeats the password", p.Error())
		}
	}
}

// An invalid trade section falls back to the paper exchange: a mistake in
// the file never sends orders to a real venue.
func TestTradeFallbackIsPaper(t *testing.T) {
	l := mustParse(t, "version: 1\ntrade:\n  backend: http\n  wallet: "+evmWallet+"\n  recipients: ["+solWallet+"]\n  http:\n    baseUrl: https://venue.example\n    tokenEnv: my-token\n")
	tr := l.Policy.Trade
	if tr.Backend != "paper" || len(tr.Recipients) != 0 || tr.HTTP.BaseURL != "" || tr.Wallet != "" {
		t.Errorf("trade = %+v, want the paper defaults", tr)
	}
	p := problemAt(t, l, "trade")
	if p.Line != 2 || !strings.Contains(p.Message, "trades run on the paper exchange, never a real venue") {
		t.Errorf("fallback problem = %v", p)
	}
	if v, _ := l.Get("trade.backend"); v != "paper" {
		t.Errorf("Get(trade.backend) = %v, want paper", v)
	}
}

func TestSetTradingKeys(t *testing.T) {
	tests := []struct {
		name, key, value, want string // want "" means Set succeeds
	}{
		{"leverage", "slippage.maxLeverage", "20", ""},
		{"leverage above 100", "slippage.maxLeverage", "150", "cannot set slippage.maxLeverage: 150 is too large; want a leverage from 1 to 100"},
		{"strategy", "sizing.strategy", "half_kelly", ""},
		{"unknown strategy", "sizing.strategy", "yolo", `"yolo" is not a sizing strategy`},
		{"negative cap", "exposure.maxPerChainUsd", "-1", "-1 is negative"},
		{"recipients", "trade.recipients", `["` + evmWallet + `"]`, ""},
		{"bad recipients", "trade.recipients", `["0x1"]`, `trade.recipients[0]: "0x1" is not an EVM address`},
		{"http without wallet", "trade.backend", "http", "trade.wallet: wallet is missing"},
		{"endpoint", "trade.http.endpoints.swap", "/v2/swap", ""},
		{"endpoint map", "trade.http.endpoints", `{"swap": "/v2/swap"}`, "cannot set trade.http.endpoints as a whole"},
		{"paper settings", "trade.paper", `{"seed": 2}`, "cannot set trade.paper as a whole; set its keys one by one, e.g. trade.paper.startingUsd"},
		{"kill switch exits", "stopLoss.killSwitchExits", "deny", ""},
		{"poll interval", "stopLoss.pollIntervalMs", "500", "500 is too small"},
		{"unknown key", "trade.http.token_env", "X", "unknown key trade.http.token_env; did you mean trade.http.tokenEnv?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := setOnDefault(t, tt.key, tt.value, tt.want)
			if l == nil {
				return
			}
			v, _ := l.Get(tt.key)
			if got, want := FormatValue(v), tt.value; got != want && got != `"`+want+`"` {
				t.Errorf("Get(%q) = %s, want %s", tt.key, got, want)
			}
		})
	}
}
