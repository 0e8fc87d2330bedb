package config

import (
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentwarden/warden"
	yaml "go.yaml.in/yaml/v3"
)

// tradeFile is the trade section as written in warden.yaml.
type tradeFile struct {
	Backend    string    `yaml:"backend" want:"paper or http"`
	Wallet     string    `yaml:"wallet" want:"an EVM or Solana address (\"\" for the paper exchange's own)"`
	Testnets   bool      `yaml:"testnets"`
	Recipients []string  `yaml:"recipients" want:"a list of addresses transfers may go to" elem:"an EVM or Solana address"`
	Paper      paperFile `yaml:"paper" want:"a mapping with startingUsd, poolDepthUsd, pricesFile, seed, stepMs and volatility"`
	HTTP       httpFile  `yaml:"http" want:"a mapping with baseUrl, tokenEnv, timeoutMs and endpoints"`
}

// paperFile is trade.paper: the simulated exchange.
type paperFile struct {
	StartingUSD  float64 `yaml:"startingUsd" want:"a USD amount (a number >= 0)"`
	PoolDepthUSD float64 `yaml:"poolDepthUsd" want:"a USD amount above 0"`
	PricesFile   string  `yaml:"pricesFile" want:"an absolute path or one starting with ~/ (\"\" for the demo prices)"`
	Seed         int64   `yaml:"seed" want:"a whole number"`
	StepMs       int64   `yaml:"stepMs" want:"a whole number of milliseconds from 1 to 86400000 (24h)"`
	Volatility   float64 `yaml:"volatility" want:"a fraction from 0 to below 1, e.g. 0.01"`
}

// httpFile is trade.http: a venue's REST API.
type httpFile struct {
	BaseURL   string        `yaml:"baseUrl" want:"an http or https URL such as https://venue.example/api"`
	TokenEnv  string        `yaml:"tokenEnv" want:"an environment variable name such as WARDEN_VENUE_TOKEN"`
	TimeoutMs int64         `yaml:"timeoutMs" want:"a whole number of milliseconds from 100 to 600000 (10m)"`
	Endpoints endpointsFile `yaml:"endpoints" want:"a mapping of operations (price, swap, …) to paths"`
}

// endpointsFile is trade.http.endpoints; "" leaves an operation's path to
// the adapter.
type endpointsFile struct {
	Price     string `yaml:"price" want:"a path starting with /"`
	Portfolio string `yaml:"portfolio" want:"a path starting with /"`
	Simulate  string `yaml:"simulate" want:"a path starting with /"`
	Swap      string `yaml:"swap" want:"a path starting with /"`
	PerpOpen  string `yaml:"perpOpen" want:"a path starting with /"`
	PerpClose string `yaml:"perpClose" want:"a path starting with /"`
	Transfer  string `yaml:"transfer" want:"a path starting with /"`
}

// entries returns the endpoints keyed by operation, in TradeEndpoints order.
func (e *endpointsFile) entries() []struct{ op, path string } {
	return []struct{ op, path string }{
		{"price", e.Price}, {"portfolio", e.Portfolio}, {"simulate", e.Simulate}, {"swap", e.Swap},
		{"perpOpen", e.PerpOpen}, {"perpClose", e.PerpClose}, {"transfer", e.Transfer},
	}
}

// Trade says where trades execute (the trade section). The zero value names
// no backend; build one with Load, Parse or Default. An invalid trade
// section falls back to the paper backend, never a real venue.
type Trade struct {
	// Backend is one of TradeBackends: paper, the built-in simulated
	// exchange, or http, a real venue's REST API.
	Backend string
	// Wallet is the address trades are made from; "" (paper only) means the
	// paper exchange's own. Always set for http.
	Wallet string
	// Testnets trades on test networks.
	Testnets bool
	// Recipients are the allow-listed addresses transfers may go to; never
	// nil, empty for none.
	Recipients []string
	// Paper configures the paper backend.
	Paper PaperSettings
	// HTTP configures the http backend.
	HTTP HTTPSettings
}

// PaperSettings configure the simulated exchange. The zero value starts with
// no cash and a pool of no depth.
type PaperSettings struct {
	// StartingCash is the USD the paper wallet starts with.
	StartingCash warden.USD
	// PoolDepth is the simulated liquidity, which sets price impact; above 0
	// once loaded.
	PoolDepth warden.USD
	// PricesFile is a file of prices to replay, as written ("~" not
	// expanded); "" means a deterministic demo price path.
	PricesFile string
	// Seed seeds the demo price path.
	Seed int64
	// Step is the time between two prices; above 0 once loaded.
	Step time.Duration
	// Volatility is the demo path's volatility per step, 0 <= v < 1.
	Volatility float64
}

// HTTPSettings configure the REST venue adapter. The zero value has no URL.
type HTTPSettings struct {
	// BaseURL is the API's http or https URL, without user info, query,
	// fragment or a trailing slash; always set when the backend is http.
	BaseURL string
	// TokenEnv names the environment variable holding the API token; "" sends
	// none. It is never the token itself.
	TokenEnv string
	// Timeout bounds each request; above 0 once loaded.
	Timeout time.Duration
	// Endpoints maps an operation (see TradeEndpoints) to its path under
	// BaseURL, starting with "/"; an operation not in it uses the adapter's
	// path. Never nil.
	Endpoints map[string]string
}

// Values of trade.backend, and the operations trade.http.endpoints names.
var (
	TradeBackends  = []string{"paper", "http"}
	TradeEndpoints = []string{"price", "portfolio", "simulate", "swap", "perpOpen", "perpClose", "transfer"}
)

var (
	stepBounds       = bounds[int64]{lo: 1, hi: 86_400_000, want: "a whole number of milliseconds from 1 to 86400000 (24h)"}
	volatilityBounds = bounds[float64]{lo: 0, hi: 1, hiOpen: true, want: "a fraction from 0 to below 1, e.g. 0.01 for 1% per step"}
	timeoutBounds    = bounds[int64]{lo: 100, hi: 600_000, want: "a whole number of milliseconds from 100 to 600000 (10m)"}
)

var tradeSection = &sectionDef[tradeFile]{
	key: "trade",
	defaultsOf: func() *tradeFile {
		return &tradeFile{
			Backend:    "paper",
			Recipients: []string{},
			Paper:      paperFile{StartingUSD: 10_000, PoolDepthUSD: 1_000_000, Seed: 1, StepMs: 60_000, Volatility: 0.001},
			HTTP:       httpFile{TimeoutMs: 10_000},
		}
	},
	check:      checkTrade,
	toRuntime:  tradeToRuntime,
	failClosed: tradeFailClosed,
}

func checkTrade(f *tradeFile, c *checker) {
	f.Backend = strings.ToLower(strings.TrimSpace(f.Backend))
	if !slices.Contains(TradeBackends, f.Backend) {
		c.reportf([]any{"backend"}, "%s is not a trade backend; want paper (simulated) or http (a real venue)", quote(f.Backend))
	}
	switch {
	case f.Wallet != "":
		c.checkAddress(f.Wallet, "wallet address", "wallet")
	case f.Backend == "http":
		c.reportf([]any{"wallet"}, "wallet is missing; the http backend needs the address trades are made from (%s)", wantAddress)
	}
	for i, r := range f.Recipients {
		c.checkAddress(r, "recipient address", "recipients", i)
	}
	checkPaper(&f.Paper, c)
	checkHTTP(&f.HTTP, f.Backend == "http", c)
}

func checkPaper(p *paperFile, c *checker) {
	c.checkUSD(p.StartingUSD, "paper", "startingUsd")
	c.checkPositiveUSD(p.PoolDepthUSD, "a pool with no depth cannot fill an order", "paper", "poolDepthUsd")
	if s := p.PricesFile; s != "" {
		switch {
		case strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }):
			c.reportf([]any{"paper", "pricesFile"}, "pricesFile %s has a control character", quote(s))
		case !filepath.IsAbs(s) && !strings.HasPrefix(s, "~/"):
			c.reportf([]any{"paper", "pricesFile"}, "pricesFile %s must be an absolute path or start with ~/", quote(s))
		}
	}
	stepBounds.check(c, p.StepMs, "paper", "stepMs")
	volatilityBounds.check(c, p.Volatility, "paper", "volatility")
}

// checkHTTP checks trade.http; required says the backend is http, so the
// venue's URL must be given.
func checkHTTP(h *httpFile, required bool, c *checker) {
	switch {
	case h.BaseURL != "":
		if why := badBaseURL(h.BaseURL); why != "" {
			c.reportf([]any{"http", "baseUrl"}, "baseUrl %s; want an http or https URL such as https://venue.example/api", why)
		}
	case required:
		c.reportf([]any{"http", "baseUrl"}, "baseUrl is missing; the http backend needs the venue's URL, e.g. https://venue.example/api")
	}
	// The value is not quoted back: if it is the token itself, it must not
	// reach logs and the audit trail too.
	if h.TokenEnv != "" && !upperEnvName(h.TokenEnv) {
		c.reportf([]any{"http", "tokenEnv"}, "tokenEnv is not an environment variable name (upper-case letters, digits and _, e.g. WARDEN_VENUE_TOKEN); "+
			"the API token itself never goes in this file: if that was the token, remove it and rotate it")
	}
	timeoutBounds.check(c, h.TimeoutMs, "http", "timeoutMs")
	for _, e := range h.Endpoints.entries() {
		if e.path != "" {
			if why := badEndpoint(e.path); why != "" {
				c.reportf([]any{"http", "endpoints", e.op}, "%s %s; want a path under baseUrl starting with /, e.g. /v1/%s", quote(e.path), why, strings.ToLower(e.op))
			}
		}
	}
}

// badBaseURL says what is wrong with a venue URL, or "". The URL is not
// quoted back, since it may hold a password.
func badBaseURL(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "is not a URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return "is not an http or https URL"
	case u.Host == "" || u.Hostname() == "":
		return "has no host"
	case u.User != nil:
		return "holds a user name or password; credentials go in the environment variable named by tokenEnv"
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#"):
		return "has a query or fragment; credentials go in the environment variable named by tokenEnv"
	}
	return ""
}

// badEndpoint says what is wrong with an endpoint path, or "": it must stay
// under baseUrl, so it cannot name another host.
func badEndpoint(p string) string {
	switch {
	case !strings.HasPrefix(p, "/"):
		return "does not start with /"
	case strings.HasPrefix(p, "//"):
		return "starts with //, which names another host"
	case strings.ContainsFunc(p, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '\\' }):
		return "has a space, control character or backslash"
	}
	if u, err := url.Parse(p); err != nil || u.Scheme != "" || u.Host != "" || u.Fragment != "" {
		return "is not a plain path"
	}
	return ""
}

// upperEnvName reports whether s matches ^[A-Z_][A-Z0-9_]*$.
func upperEnvName(s string) bool {
	return s != "" && !(s[0] >= '0' && s[0] <= '9') && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_')
	})
}

// tradeFailClosed makes an invalid section trade on paper: no real venue is
// reached and no recipient is allow-listed until it is fixed.
func tradeFailClosed(_ []*yaml.Node, f *tradeFile) string {
	f.Backend = "paper"
	f.Recipients = []string{}
	return "until it is fixed trades run on the paper exchange, never a real venue, and no transfer recipient is allow-listed"
}

func tradeToRuntime(f *tradeFile, p *Policy) {
	t := Trade{
		Backend:    f.Backend,
		Wallet:     f.Wallet,
		Testnets:   f.Testnets,
		Recipients: slices.Clone(f.Recipients),
		Paper: PaperSettings{
			StartingCash: usdOf(f.Paper.StartingUSD),
			PoolDepth:    usdOf(f.Paper.PoolDepthUSD),
			PricesFile:   f.Paper.PricesFile,
			Seed:         f.Paper.Seed,
			Step:         millis(f.Paper.StepMs),
			Volatility:   f.Paper.Volatility,
		},
		HTTP: HTTPSettings{
			BaseURL:   strings.TrimRight(f.HTTP.BaseURL, "/"),
			TokenEnv:  f.HTTP.TokenEnv,
			Timeout:   millis(f.HTTP.TimeoutMs),
			Endpoints: map[string]string{},
		},
	}
	if t.Recipients == nil {
		t.Recipients = []string{}
	}
	for _, e := range f.HTTP.Endpoints.entries() {
		if e.path != "" {
			t.HTTP.Endpoints[e.op] = e.path
		}
	}
	p.Trade = t
}
