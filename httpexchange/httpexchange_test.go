package httpexchange_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/finance/financetest"
	"github.com/agentwarden/warden/httpexchange"
)

var ctx = context.Background()

// secret is the bearer token: no error may hold it.
const secret = "tok-7f3a9c1e5b2d4f60"

// request is what the venue received.
type request struct {
	Method, Path, Query string
	Header              http.Header
	Body                map[string]any
}

// venue is a fake exchange on loopback that records every request.
type venue struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []request
}

func newVenue(t *testing.T, answer http.HandlerFunc) *venue {
	t.Helper()
	v := &venue{}
	v.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec := request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone()}
		if len(body) > 0 {
			if err := json.Unmarshal(body, &rec.Body); err != nil {
				t.Errorf("the venue got a body that is not a JSON object: %q", body)
			}
		}
		v.mu.Lock()
		v.got = append(v.got, rec)
		v.mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(v.srv.Close)
	return v
}

func (v *venue) requests() []request {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]request(nil), v.got...)
}

// last is the one request the venue must have received.
func (v *venue) last(t *testing.T) request {
	t.Helper()
	got := v.requests()
	if len(got) != 1 {
		t.Fatalf("the venue received %d requests; want 1", len(got))
	}
	return got[0]
}

// untouchable is a venue that fails the test if anything reaches it.
func untouchable(t *testing.T) *venue {
	return newVenue(t, func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the venue was reached: %s %s", r.Method, r.URL.Path)
		http.Error(w, "must not be reached", http.StatusTeapot)
	})
}

func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func testdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var fixedNow = time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC)

func newBackend(t *testing.T, base string, edit ...func(*httpexchange.Config)) *httpexchange.Backend {
	t.Helper()
	c := httpexchange.Config{BaseURL: base, Token: secret, Now: func() time.Time { return fixedNow }}
	for _, e := range edit {
		e(&c)
	}
	b, err := httpexchange.New(c)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return b
}

// allowing is a Trader over backend whose gate allows everything under
// traceID.
func allowing(backend finance.Backend, traceID string) *finance.Trader {
	return &finance.Trader{
		Backend: backend,
		Decide: func(context.Context, *warden.Request, finance.DecideOptions) (warden.Decision, error) {
			return warden.Decision{Verdict: warden.Allow, TraceID: traceID}, nil
		},
		Release: func(context.Context, string, string) error { return nil },
	}
}

func closeRequest(position string) *warden.Request {
	return &warden.Request{Capability: warden.CapTrade, Action: finance.PerpClose, Resource: "ETH",
		Params: map[string]json.RawMessage{"chain": json.RawMessage(`"ethereum"`), "position": json.RawMessage(`"` + position + `"`)}}
}

func token(t *testing.T, chain, symbol string) finance.Token {
	t.Helper()
	var r finance.Resolver
	c, err := r.Chain(chain)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := r.Token(c, finance.TokenRef{Symbol: symbol})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// tokenJSON is a token as the wire contract sends it.
func tokenJSON(tok finance.Token) map[string]any {
	return map[string]any{"symbol": tok.Symbol, "chain": map[string]any{"name": tok.Chain.Name, "id": float64(tok.Chain.ID)},
		"address": tok.Address, "asset_id": tok.AssetID, "decimals": float64(tok.Decimals)}
}

func usd(dollars float64) warden.USD { return warden.USD(dollars * warden.MicrosPerDollar) }

// errorTexts is the text of err and of every error it wraps.
func errorTexts(err error) []string {
	if err == nil {
		return nil
	}
	out := []string{err.Error()}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		out = append(out, errorTexts(u.Unwrap())...)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = append(out, errorTexts(e)...)
		}
	}
	return out
}

// assertNoSecret fails if any error in err's chain holds the token, or the
// start of it that a truncated excerpt would leave.
func assertNoSecret(t *testing.T, err error) {
	t.Helper()
	for _, s := range errorTexts(err) {
		if strings.Contains(s, secret[:6]) {
			t.Errorf("an error in the chain holds (a part of) the bearer token: %q", s)
		}
	}
}

func TestName(t *testing.T) {
	if got := newBackend(t, "https://venue.example").Name(); got != "http" {
		t.Errorf("Name() = %q, want %q", got, "http")
	}
}

func TestDefaultEndpoints(t *testing.T) {
	want := httpexchange.Endpoints{Price: "/v1/prices", Portfolio: "/v1/portfolio", Simulate: "/v1/tx/cross-chain/swaps-simulate",
		Swap: "/v1/tx/swaps", PerpOpen: "/v1/perps/open", PerpClose: "/v1/perps/close", Transfer: "/v1/transfers"}
	if got := httpexchange.DefaultEndpoints(); got != want {
		t.Errorf("DefaultEndpoints() = %+v, want %+v", got, want)
	}
}

func TestNewValidates(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config httpexchange.Config
		secret string // a part of the config the error must not show
	}{
		{name: "empty base", config: httpexchange.Config{}},
		{name: "relative base", config: httpexchange.Config{BaseURL: "/v1"}},
		{name: "no host", config: httpexchange.Config{BaseURL: "https:///v1"}},
		{name: "ftp scheme", config: httpexchange.Config{BaseURL: "ftp://venue.example"}},
		{name: "opaque", config: httpexchange.Config{BaseURL: "https:venue.example"}},
		{name: "unparsable", config: httpexchange.Config{BaseURL: "https://venue.example/%zz" + secret}, secret: secret},
		{name: "userinfo", config: httpexchange.Config{BaseURL: "https://trader:" + secret + "@venue.example"}, secret: secret},
		{name: "query", config: httpexchange.Config{BaseURL: "https://venue.example/?api_key=" + secret}, secret: secret},
		{name: "fragment", config: httpexchange.Config{BaseURL: "https://venue.example/#x"}},
		{name: "plain http with a token off loopback", config: httpexchange.Config{BaseURL: "http://venue.example", Token: secret}, secret: secret},
		{name: "negative timeout", config: httpexchange.Config{BaseURL: "https://venue.example", Timeout: -time.Second}},
		{name: "token with a newline", config: httpexchange.Config{BaseURL: "https://venue.example", Token: secret + "\nX-Evil: 1"}, secret: secret},
		{name: "token with a space", config: httpexchange.Config{BaseURL: "https://venue.example", Token: "Bearer " + secret}, secret: secret},
		{name: "endpoint without slash", config: httpexchange.Config{BaseURL: "https://venue.example", Endpoints: httpexchange.Endpoints{Swap: "v1/swap"}}},
		{name: "endpoint with a query", config: httpexchange.Config{BaseURL: "https://venue.example", Endpoints: httpexchange.Endpoints{Price: "/p?x=1"}}},
		{name: "endpoint to another host", config: httpexchange.Config{BaseURL: "https://venue.example", Endpoints: httpexchange.Endpoints{Swap: "//evil.example/swap"}}},
		{name: "endpoint climbing", config: httpexchange.Config{BaseURL: "https://venue.example/api", Endpoints: httpexchange.Endpoints{Transfer: "/../admin"}}},
		{name: "endpoint with a space", config: httpexchange.Config{BaseURL: "https://venue.example", Endpoints: httpexchange.Endpoints{PerpOpen: "/perps/ open"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := httpexchange.New(tc.config)
			if err == nil {
				t.Fatalf("New(%s) = %v, nil; want an error", tc.config, b)
			}
			if warden.ErrorCodeOf(err) != warden.EInvalid {
				t.Errorf("New(%s): code %s, want %s", tc.config, warden.ErrorCodeOf(err), warden.EInvalid)
			}
			if tc.secret != "" && strings.Contains(err.Error(), tc.secret) {
				t.Errorf("New's error shows a secret: %v", err)
			}
		})
	}
	for _, ok := range []httpexchange.Config{
		{BaseURL: "https://venue.example"},
		{BaseURL: "https://venue.example/api/", Token: secret, Timeout: time.Second},
		{BaseURL: "http://venue.example"}, // no token to leak
		{BaseURL: "http://127.0.0.1:8080", Token: secret},
		{BaseURL: "http://localhost:8080", Token: secret},
		{BaseURL: "http://[::1]:8080", Token: secret},
	} {
		if _, err := httpexchange.New(ok); err != nil {
			t.Errorf("New(%s): %v", ok, err)
		}
	}
}

func TestPrintsWithoutToken(t *testing.T) {
	c := httpexchange.Config{BaseURL: "https://venue.example", Token: secret}
	b, err := httpexchange.New(c)
	if err != nil {
		t.Fatal(err)
	}
	wrapper := struct{ Exchange httpexchange.Config }{c}
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), fmt.Sprintf("%+v", wrapper),
		fmt.Sprint(b), fmt.Sprintf("%+v", b), fmt.Sprintf("%#v", b)} {
		if strings.Contains(s, secret) {
			t.Errorf("printed %q, which holds the token", s)
		}
	}
}

func TestPrice(t *testing.T) {
	v := newVenue(t, answer(200, testdata(t, "price.json")))
	b := newBackend(t, v.srv.URL)
	usdc := token(t, "base", "USDC")
	p, err := b.Price(ctx, usdc)
	if err != nil {
		t.Fatal(err)
	}
	if want := (finance.Price{USD: 3120.5, At: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}); !p.At.Equal(want.At) || p.USD != want.USD {
		t.Errorf("Price = %+v, want %+v", p, want)
	}
	r := v.last(t)
	if r.Method != http.MethodGet || r.Path != "/v1/prices" || r.Body != nil {
		t.Errorf("sent %s %s with body %v; want GET /v1/prices without a body", r.Method, r.Path, r.Body)
	}
	if want := "asset=USDC&chain=base&token=" + usdc.Address; r.Query != want {
		t.Errorf("query %q, want %q", r.Query, want)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+secret {
		t.Errorf("Authorization = %q, want the bearer token", got)
	}
	if got := r.Header.Get("Accept"); got != "application/json" {
		t.Errorf("Accept = %q", got)
	}
	if got := r.Header.Get(httpexchange.IdempotencyKey); got != "" {
		t.Errorf("a read carries an Idempotency-Key %q", got)
	}
}

func TestPriceOfNativeCoinBySymbol(t *testing.T) {
	v := newVenue(t, answer(200, testdata(t, "price.json")))
	if _, err := newBackend(t, v.srv.URL).Price(ctx, token(t, "ethereum", "ETH")); err != nil {
		t.Fatal(err)
	}
	if got, want := v.last(t).Query, "asset=ETH&chain=ethereum&token=ETH"; got != want {
		t.Errorf("query %q, want %q", got, want)
	}
}

func TestNoTokenNoAuthorization(t *testing.T) {
	v := newVenue(t, answer(200, testdata(t, "price.json")))
	b := newBackend(t, v.srv.URL, func(c *httpexchange.Config) { c.Token = "" })
	if _, err := b.Price(ctx, token(t, "base", "ETH")); err != nil {
		t.Fatal(err)
	}
	if got, ok := v.last(t).Header["Authorization"]; ok {
		t.Errorf("sent Authorization %q without a token", got)
	}
}

func TestPortfolio(t *testing.T) {
	v := newVenue(t, answer(200, testdata(t, "portfolio.json")))
	p, err := newBackend(t, v.srv.URL).Portfolio(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r := v.last(t); r.Method != http.MethodGet || r.Path != "/v1/portfolio" || r.Query != "" {
		t.Errorf("sent %s %s?%s; want GET /v1/portfolio", r.Method, r.Path, r.Query)
	}
	if p.Wallet != "0x1111111111111111111111111111111111111111" || !p.At.Equal(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("wallet %q at %v", p.Wallet, p.At)
	}
	if len(p.Holdings) != 3 || len(p.Positions) != 1 {
		t.Fatalf("%d holdings and %d positions; want 3 and 1", len(p.Holdings), len(p.Positions))
	}
	for i, want := range []struct {
		symbol    string
		class     finance.AssetClass
		canonical bool
		amount    float64
		value     warden.USD
	}{
		{"USDC", finance.ClassStablecoin, true, 1500.5, usd(1500.5)},
		{"ETH", finance.ClassMajor, true, 0.5, usd(1560.25)},
		// Calls itself USDC at another address: not a stablecoin.
		{"USDC", finance.ClassUnknown, false, 900, usd(900)},
	} {
		h := p.Holdings[i]
		if h.Token.Symbol != want.symbol || h.Token.Class != want.class || h.Token.Canonical != want.canonical || h.Amount != want.amount || h.ValueUSD != want.value {
			t.Errorf("holdings[%d] = %s class %s canonical %v, %v worth $%s; want %s class %s canonical %v, %v worth $%s", i,
				h.Token.Symbol, h.Token.Class, h.Token.Canonical, h.Amount, h.ValueUSD, want.symbol, want.class, want.canonical, want.amount, want.value)
		}
	}
	pos := p.Positions[0]
	want := finance.Position{ID: "pos-1", Token: token(t, "arbitrum", "ETH"), Side: finance.Long, Leverage: 3, MarginUSD: usd(100),
		Size: 0.1, EntryPrice: 3000, MarkPrice: 3100, OpenedAt: time.Date(2026, 2, 28, 9, 30, 0, 0, time.UTC)}
	if !reflect.DeepEqual(pos, want) {
		t.Errorf("positions[0] = %+v, want %+v", pos, want)
	}
	if e := p.Exposure(); e.ByClass[finance.ClassUnknown] != usd(900) || e.ByClass[finance.ClassStablecoin] != 0 {
		t.Errorf("exposure by class %v; the impostor USDC must count as unknown exposure", e.ByClass)
	}
}

func TestPortfolioDefaults(t *testing.T) {
	v := newVenue(t, answer(200, `{"wallet": "w1", "holdings": []}`))
	p, err := newBackend(t, v.srv.URL).Portfolio(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !p.At.Equal(fixedNow) || len(p.Holdings) != 0 || p.Positions != nil {
		t.Errorf("Portfolio = %+v; want stamped now, no holdings, no positions", p)
	}
}

func TestSimulate(t *testing.T) {
	v := newVenue(t, answer(200, testdata(t, "simulation.json")))
	b := newBackend(t, v.srv.URL)
	usdc, eth := token(t, "base", "USDC"), token(t, "base", "ETH")
	s, err := b.Simulate(ctx, finance.SwapQuote{In: usdc, Out: eth, AmountUSD: usd(500.25), MaxSlippage: 0.01, Recipient: "0x2222222222222222222222222222222222222222"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (finance.Simulation{ExpectedOut: 0.16, PriceImpact: 0.002, InputValueUSD: usd(500.25), OutputValueUSD: usd(498.9)}); s != want {
		t.Errorf("Simulate = %+v, want %+v", s, want)
	}
	r := v.last(t)
	if r.Method != http.MethodPost || r.Path != "/v1/tx/cross-chain/swaps-simulate" || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("sent %s %s (%s); want a JSON POST to /v1/tx/cross-chain/swaps-simulate", r.Method, r.Path, r.Header.Get("Content-Type"))
	}
	want := map[string]any{"token_in": tokenJSON(usdc), "token_out": tokenJSON(eth), "amount_usd": "500.25", "max_slippage": 0.01,
		"recipient": "0x2222222222222222222222222222222222222222"}
	if !reflect.DeepEqual(r.Body, want) {
		t.Errorf("body %v\nwant %v", r.Body, want)
	}
	if got := r.Header.Get(httpexchange.IdempotencyKey); got != "" {
		t.Errorf("a simulation carries an Idempotency-Key %q", got)
	}
}

func TestSimulateWithoutSlippage(t *testing.T) {
	v := newVenue(t, answer(200, testdata(t, "simulation.json")))
	q := finance.SwapQuote{In: token(t, "base", "USDC"), Out: token(t, "base", "ETH"), AmountUSD: usd(10), MaxSlippage: nan()}
	if _, err := newBackend(t, v.srv.URL).Simulate(ctx, q); err != nil {
		t.Fatal(err)
	}
	body := v.last(t).Body
	for _, k := range []string{"max_slippage", "recipient", "trace_id"} {
		if _, ok := body[k]; ok {
			t.Errorf("body has %q: %v", k, body)
		}
	}
}

func nan() float64 { return math.NaN() }

// execution is one executing method, called with a clearance.
type execution struct {
	name string
	path string
	run  func(ctx context.Context, b *httpexchange.Backend, c finance.Clearance) (finance.Fill, error)
	body map[string]any // without trace_id
	act  string
}

func executions(t *testing.T) []execution {
	usdc, eth, arbETH := token(t, "base", "USDC"), token(t, "base", "ETH"), token(t, "arbitrum", "ETH")
	return []execution{
		{name: "swap", path: "/v1/tx/swaps", act: finance.Swap,
			run: func(ctx context.Context, b *httpexchange.Backend, c finance.Clearance) (finance.Fill, error) {
				return b.Swap(ctx, finance.SwapQuote{In: usdc, Out: eth, AmountUSD: usd(500.25), MaxSlippage: 0.01}, c)
			},
			body: map[string]any{"token_in": tokenJSON(usdc), "token_out": tokenJSON(eth), "amount_usd": "500.25", "max_slippage": 0.01}},
		{name: "perp open", path: "/v1/perps/open", act: finance.PerpOpen,
			run: func(ctx context.Context, b *httpexchange.Backend, c finance.Clearance) (finance.Fill, error) {
				return b.OpenPerp(ctx, finance.PerpOrder{Token: arbETH, Side: finance.Short, MarginUSD: usd(100), Leverage: 3}, c)
			},
			body: map[string]any{"token": tokenJSON(arbETH), "side": "short", "margin_usd": "100", "leverage": 3.0}},
		{name: "perp close", path: "/v1/perps/close", act: finance.PerpClose,
			run: func(ctx context.Context, b *httpexchange.Backend, c finance.Clearance) (finance.Fill, error) {
				return b.ClosePerp(ctx, "pos-9", c)
			},
			body: map[string]any{"position_id": "pos-9"}},
		{name: "transfer", path: "/v1/transfers", act: finance.Transfer,
			run: func(ctx context.Context, b *httpexchange.Backend, c finance.Clearance) (finance.Fill, error) {
				return b.Transfer(ctx, finance.TransferOrder{Token: usdc, AmountUSD: usd(25.5), Recipient: "0x3333333333333333333333333333333333333333"}, c)
			},
			body: map[string]any{"token": tokenJSON(usdc), "amount_usd": "25.5", "recipient": "0x3333333333333333333333333333333333333333"}},
	}
}

func TestExecutions(t *testing.T) {
	for _, ex := range executions(t) {
		t.Run(ex.name, func(t *testing.T) {
			v := newVenue(t, answer(200, testdata(t, "fill.json")))
			trace := "trace-" + strings.ReplaceAll(ex.name, " ", "-")
			f, err := ex.run(ctx, newBackend(t, v.srv.URL), financetest.Clearance(t, trace))
			if err != nil {
				t.Fatal(err)
			}
			r := v.last(t)
			if r.Method != http.MethodPost || r.Path != ex.path {
				t.Errorf("sent %s %s, want POST %s", r.Method, r.Path, ex.path)
			}
			for h, want := range map[string]string{httpexchange.IdempotencyKey: trace, "Authorization": "Bearer " + secret,
				"Content-Type": "application/json", "Accept": "application/json"} {
				if got := r.Header.Get(h); got != want {
					t.Errorf("header %s = %q, want %q", h, got, want)
				}
			}
			want := map[string]any{"trace_id": trace}
			for k, v := range ex.body {
				want[k] = v
			}
			if !reflect.DeepEqual(r.Body, want) {
				t.Errorf("body %v\nwant %v", r.Body, want)
			}
			if f.ID != "fill-42" || f.TraceID != trace || f.Action != ex.act || f.ValueUSD != usd(500.25) ||
				f.InToken != "USDC" || f.OutAmount != 0.16 || !f.At.Equal(time.Date(2026, 3, 1, 12, 0, 1, 0, time.UTC)) {
				t.Errorf("fill %+v", f)
			}
		})
	}
}

// TestTraderExecutesThroughVenue: the trace id the venue sees is the one of
// the gate's decision.
func TestTraderExecutesThroughVenue(t *testing.T) {
	v := newVenue(t, answer(200, testdata(t, "fill.json")))
	ex, err := allowing(newBackend(t, v.srv.URL), "trace-e2e").Execute(ctx, closeRequest("pos-9"), finance.DecideOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := v.last(t)
	if r.Header.Get(httpexchange.IdempotencyKey) != "trace-e2e" || r.Body["trace_id"] != "trace-e2e" || r.Body["position_id"] != "pos-9" {
		t.Errorf("the venue got %v with Idempotency-Key %q", r.Body, r.Header.Get(httpexchange.IdempotencyKey))
	}
	if ex.Fill == nil || ex.Fill.TraceID != "trace-e2e" || ex.Fill.Position != "pos-9" {
		t.Errorf("Execute's fill %+v", ex.Fill)
	}
}

func TestZeroClearanceNeverSent(t *testing.T) {
	v := untouchable(t)
	b := newBackend(t, v.srv.URL)
	for _, ex := range executions(t) {
		t.Run(ex.name, func(t *testing.T) {
			if _, err := ex.run(ctx, b, finance.Clearance{}); !errors.Is(err, finance.ErrNotCleared) {
				t.Errorf("%s without clearance: %v, want ErrNotCleared", ex.name, err)
			}
		})
	}
	if n := len(v.requests()); n != 0 {
		t.Errorf("the venue received %d requests", n)
	}
}

func TestInvalidOrdersNeverSent(t *testing.T) {
	v := untouchable(t)
	b := newBackend(t, v.srv.URL)
	c := financetest.Clearance(t, "trace-invalid")
	usdc, eth := token(t, "base", "USDC"), token(t, "base", "ETH")
	swap := func(q finance.SwapQuote) error { _, err := b.Swap(ctx, q, c); return err }
	for _, tc := range []struct {
		name string
		run  func() error
	}{
		{"swap of nothing", func() error { return swap(finance.SwapQuote{In: usdc, Out: eth, MaxSlippage: 0.01}) }},
		{"swap of a negative amount", func() error { return swap(finance.SwapQuote{In: usdc, Out: eth, AmountUSD: -1, MaxSlippage: 0.01}) }},
		{"swap without slippage", func() error {
			return swap(finance.SwapQuote{In: usdc, Out: eth, AmountUSD: usd(5), MaxSlippage: nan()})
		}},
		{"swap with slippage of 1", func() error { return swap(finance.SwapQuote{In: usdc, Out: eth, AmountUSD: usd(5), MaxSlippage: 1}) }},
		{"swap into a token on no chain", func() error {
			return swap(finance.SwapQuote{In: usdc, Out: finance.Token{Symbol: "ETH"}, AmountUSD: usd(5), MaxSlippage: 0.01})
		}},
		{"swap to a recipient with a newline", func() error {
			return swap(finance.SwapQuote{In: usdc, Out: eth, AmountUSD: usd(5), MaxSlippage: 0.01, Recipient: "0xabc\nx"})
		}},
		{"perp sideways", func() error {
			_, err := b.OpenPerp(ctx, finance.PerpOrder{Token: eth, Side: "sideways", MarginUSD: usd(5), Leverage: 2}, c)
			return err
		}},
		{"perp with NaN leverage", func() error {
			_, err := b.OpenPerp(ctx, finance.PerpOrder{Token: eth, Side: finance.Long, MarginUSD: usd(5), Leverage: nan()}, c)
			return err
		}},
		{"close of no position", func() error { _, err := b.ClosePerp(ctx, "", c); return err }},
		{"transfer to nobody", func() error {
			_, err := b.Transfer(ctx, finance.TransferOrder{Token: usdc, AmountUSD: usd(5)}, c)
			return err
		}},
		{"price of a token on no chain", func() error { _, err := b.Price(ctx, finance.Token{Symbol: "ETH"}); return err }},
		{"simulation of nothing", func() error {
			_, err := b.Simulate(ctx, finance.SwapQuote{In: usdc, Out: eth, MaxSlippage: nan()})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if warden.ErrorCodeOf(err) != warden.EInvalid {
				t.Errorf("%s: %v (code %s), want an invalid-order error", tc.name, err, warden.ErrorCodeOf(err))
			}
		})
	}
}

// operation calls one method of b.
type operation func(ctx context.Context, b *httpexchange.Backend) error

// operations calls every method once, the executions with a clearance.
func operations(t *testing.T) map[string]operation {
	eth, usdc := token(t, "base", "ETH"), token(t, "base", "USDC")
	ops := map[string]operation{
		"price":     func(ctx context.Context, b *httpexchange.Backend) error { _, err := b.Price(ctx, eth); return err },
		"portfolio": func(ctx context.Context, b *httpexchange.Backend) error { _, err := b.Portfolio(ctx); return err },
		"simulate": func(ctx context.Context, b *httpexchange.Backend) error {
			_, err := b.Simulate(ctx, finance.SwapQuote{In: usdc, Out: eth, AmountUSD: usd(5), MaxSlippage: 0.01})
			return err
		},
	}
	c := financetest.Clearance(t, "trace-ops")
	for _, ex := range executions(t) {
		ops[ex.name] = func(ctx context.Context, b *httpexchange.Backend) error { _, err := ex.run(ctx, b, c); return err }
	}
	return ops
}

func isExecution(op string) bool { return op != "price" && op != "portfolio" && op != "simulate" }

func TestErrorStatus(t *testing.T) {
	ops := operations(t)
	for _, status := range []int{400, 401, 403, 404, 409, 422, 429, 500, 502, 503} {
		for op, run := range ops {
			t.Run(fmt.Sprintf("%s %d", op, status), func(t *testing.T) {
				v := newVenue(t, answer(status, "{\"error\": \"insufficient \x1b[31mfunds\x1b[0m\"}"))
				err := run(ctx, newBackend(t, v.srv.URL))
				var se *httpexchange.StatusError
				if !errors.As(err, &se) || se.StatusCode != status {
					t.Fatalf("%s answered %d: %v; want a StatusError with the status", op, status, err)
				}
				if want := `{"error": "insufficient [31mfunds[0m"}`; se.Body != want {
					t.Errorf("body %q, want %q", se.Body, want)
				}
				if !strings.Contains(err.Error(), fmt.Sprint(status)) || warden.ErrorCodeOf(err) != warden.EUnavailable {
					t.Errorf("error %q (code %s) does not say %d", err, warden.ErrorCodeOf(err), status)
				}
				if errors.Is(err, httpexchange.ErrOutcomeUnknown) {
					t.Errorf("a refusal is reported as of unknown outcome: %v", err)
				}
			})
		}
	}
}

func TestErrorBodyExcerpt(t *testing.T) {
	body := strings.Repeat("é\x00\x07\u202e", 400) + secret
	v := newVenue(t, answer(500, body))
	_, err := newBackend(t, v.srv.URL).Portfolio(ctx)
	var se *httpexchange.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("Portfolio: %v, want a StatusError", err)
	}
	if len(se.Body) > 200 || !utf8.ValidString(se.Body) || strings.ContainsFunc(se.Body, func(r rune) bool { return unicode.IsControl(r) || r == '\u202e' }) {
		t.Errorf("excerpt of %d bytes, valid UTF-8 %v: %q", len(se.Body), utf8.ValidString(se.Body), se.Body)
	}
	if !strings.HasPrefix(se.Body, "ééé") {
		t.Errorf("excerpt %q does not start with the body", se.Body)
	}
}

func TestMalformedAnswers(t *testing.T) {
	const at = `"at": "2026-03-01T12:00:00Z"`
	tok := `{"symbol": "ETH", "chain": {"name": "base", "id": 8453}, "address": "", "asset_id": "ETH", "decimals": 18}`
	holding := func(fields string) string {
		return `{"wallet": "w", "holdings": [{"token": ` + tok + `, ` + fields + `}]}`
	}
	position := func(fields string) string {
		return `{"wallet": "w", "holdings": [], "positions": [{"id": "p1", "token": ` + tok + `, ` + fields + `}]}`
	}
	const posOK = `"leverage": 2, "margin_usd": "10", "size": 1, "entry_price": 3000, "mark_price": 3000`
	const simOK = `"price_impact": 0.001, "input_value_usd": "5", "output_value_usd": "4.9"`
	for _, tc := range []struct{ name, op, body string }{
		{"trailing object", "price", `{"usd": 1, ` + at + `} {"usd": 2}`},
		{"trailing garbage", "price", `{"usd": 1, ` + at + `}x`},
		{"html", "price", `<html>busy</html>`},
		{"array", "price", `[{"usd": 1, ` + at + `}]`},
		{"null", "price", `null`},
		{"empty", "price", ``},
		{"truncated", "price", `{"usd": 1, "at"`},
		{"usd missing", "price", `{` + at + `}`},
		{"usd null", "price", `{"usd": null, ` + at + `}`},
		{"usd NaN", "price", `{"usd": "NaN", ` + at + `}`},
		{"usd Infinity", "price", `{"usd": "Infinity", ` + at + `}`},
		{"usd hex", "price", `{"usd": "0x1p3", ` + at + `}`},
		{"usd overflow", "price", `{"usd": 1e400, ` + at + `}`},
		{"usd negative", "price", `{"usd": -3120.5, ` + at + `}`},
		{"usd zero", "price", `{"usd": 0, ` + at + `}`},
		{"usd an object", "price", `{"usd": {"v": 1}, ` + at + `}`},
		{"at missing", "price", `{"usd": 1}`},
		{"at not RFC 3339", "price", `{"usd": 1, "at": "yesterday"}`},
		{"oversized", "price", `{"usd": 1, ` + at + `, "pad": "` + strings.Repeat("a", 1<<20) + `"}`},
		{"expected_out negative", "simulate", `{"expected_out": -0.1, ` + simOK + `}`},
		{"expected_out missing", "simulate", `{` + simOK + `}`},
		{"price_impact negative", "simulate", `{"expected_out": 1, "price_impact": -0.01, "input_value_usd": "5", "output_value_usd": "4.9"}`},
		{"input value negative", "simulate", `{"expected_out": 1, "price_impact": 0, "input_value_usd": "-5", "output_value_usd": "4.9"}`},
		{"output value above a trillion", "simulate", `{"expected_out": 1, "price_impact": 0, "input_value_usd": "5", "output_value_usd": "1000000000001"}`},
		{"holdings missing", "portfolio", `{"wallet": "w"}`},
		{"wallet missing", "portfolio", `{"holdings": []}`},
		{"wallet too long", "portfolio", `{"wallet": "` + strings.Repeat("w", 300) + `", "holdings": []}`},
		{"wallet with a control character", "portfolio", `{"wallet": "w\u0007", "holdings": []}`},
		{"holding amount negative", "portfolio", holding(`"amount": -1, "value_usd": "1"`)},
		{"holding value negative", "portfolio", holding(`"amount": 1, "value_usd": -1`)},
		{"holding value missing", "portfolio", holding(`"amount": 1`)},
		{"holding without token", "portfolio", `{"wallet": "w", "holdings": [{"amount": 1, "value_usd": "1"}]}`},
		{"holding token without chain", "portfolio", `{"wallet": "w", "holdings": [{"token": {"symbol": "ETH"}, "amount": 1, "value_usd": "1"}]}`},
		{"holding token with negative decimals", "portfolio", `{"wallet": "w", "holdings": [{"token": {"symbol": "X", "chain": {"name": "base"}, "decimals": -1}, "amount": 1, "value_usd": "1"}]}`},
		{"portfolio above a trillion", "portfolio", `{"wallet": "w", "holdings": [{"token": ` + tok + `, "amount": 1, "value_usd": "600000000000"}, {"token": ` + tok + `, "amount": 1, "value_usd": "600000000000"}]}`},
		{"position sideways", "portfolio", position(`"side": "sideways", ` + posOK)},
		{"position leverage zero", "portfolio", position(`"side": "long", "leverage": 0, "margin_usd": "10", "size": 1, "entry_price": 3000, "mark_price": 3000`)},
		{"position notional above a trillion", "portfolio", position(`"side": "short", "leverage": 2, "margin_usd": "10", "size": 1e12, "entry_price": 3000, "mark_price": 3000`)},
		{"position mark price missing", "portfolio", position(`"side": "long", "leverage": 2, "margin_usd": "10", "size": 1, "entry_price": 3000`)},
		{"fill id missing", "swap", `{"value_usd": "5"}`},
		{"fill id with a newline", "swap", `{"id": "f1\nINFO forged", "value_usd": "5"}`},
		{"fill value missing", "swap", `{"id": "f1"}`},
		{"fill value negative", "transfer", `{"id": "f1", "value_usd": "-5"}`},
		{"fill out amount negative", "swap", `{"id": "f1", "value_usd": "5", "out_amount": -0.1}`},
		{"fill of another trace", "swap", `{"id": "f1", "value_usd": "5", "trace_id": "trace-other"}`},
		{"fill not JSON", "transfer", `OK`},
		{"perp open without position", "perp open", `{"id": "f1", "value_usd": "5"}`},
		{"perp close of another position", "perp close", `{"id": "f1", "value_usd": "5", "position": "pos-other"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := operations(t)[tc.op]
			v := newVenue(t, answer(200, tc.body))
			err := run(ctx, newBackend(t, v.srv.URL))
			if !errors.Is(err, httpexchange.ErrMalformed) {
				t.Fatalf("%s answered %.80q: %v; want ErrMalformed", tc.op, tc.body, err)
			}
			t.Log(err)
			if got := errors.Is(err, httpexchange.ErrOutcomeUnknown); got != isExecution(tc.op) {
				t.Errorf("%s: outcome unknown = %v, want %v (%v)", tc.op, got, isExecution(tc.op), err)
			}
			if len(err.Error()) > 400 {
				t.Errorf("the error is %d bytes long: %.100q…", len(err.Error()), err)
			}
		})
	}
}

// TestUnknownFieldsIgnored: a venue may send more than the contract.
func TestUnknownFieldsIgnored(t *testing.T) {
	v := newVenue(t, answer(200, `{"usd": "1.5", "at": "2026-03-01T12:00:00.123Z", "source": "oracle", "extra": {"nested": [1, 2]}}`))
	p, err := newBackend(t, v.srv.URL).Price(ctx, token(t, "base", "ETH"))
	if err != nil || p.USD != 1.5 {
		t.Errorf("Price = %+v, %v", p, err)
	}
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	v := newVenue(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // before the server closes
	ops := operations(t)
	for _, tc := range []struct {
		name    string
		timeout time.Duration // Config.Timeout
		ctx     time.Duration // the caller's deadline; 0: none
	}{
		{"config timeout", 100 * time.Millisecond, 0},
		{"caller's deadline", 0, 100 * time.Millisecond},
	} {
		for _, op := range []string{"portfolio", "swap"} {
			t.Run(tc.name+" "+op, func(t *testing.T) {
				b := newBackend(t, v.srv.URL, func(c *httpexchange.Config) { c.Timeout = tc.timeout })
				c := ctx
				if tc.ctx != 0 {
					var cancel context.CancelFunc
					c, cancel = context.WithTimeout(ctx, tc.ctx)
					defer cancel()
				}
				start := time.Now()
				err := ops[op](c, b)
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("%s: %v, want a deadline error", op, err)
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("%s took %v", op, d)
				}
				if got := errors.Is(err, httpexchange.ErrOutcomeUnknown); got != isExecution(op) {
					t.Errorf("%s timed out: outcome unknown = %v, want %v", op, got, isExecution(op))
				}
			})
		}
	}
}

func TestCanceledContextSendsNothing(t *testing.T) {
	v := untouchable(t)
	c, cancel := context.WithCancel(ctx)
	cancel()
	_, err := newBackend(t, v.srv.URL).Swap(c, finance.SwapQuote{In: token(t, "base", "USDC"), Out: token(t, "base", "ETH"), AmountUSD: usd(5), MaxSlippage: 0.01}, financetest.Clearance(t, "trace-canceled"))
	if !errors.Is(err, context.Canceled) || errors.Is(err, httpexchange.ErrOutcomeUnknown) {
		t.Errorf("Swap with a canceled context: %v; want canceled, not of unknown outcome", err)
	}
}

func TestUnreachableVenue(t *testing.T) {
	v := newVenue(t, answer(200, "{}"))
	base := v.srv.URL
	v.srv.Close()
	_, err := newBackend(t, base).ClosePerp(ctx, "pos-9", financetest.Clearance(t, "trace-down"))
	if err == nil || warden.ErrorCodeOf(err) != warden.EUnavailable {
		t.Fatalf("ClosePerp on a closed port: %v; want an unavailable error", err)
	}
	if errors.Is(err, httpexchange.ErrOutcomeUnknown) {
		t.Errorf("a refused connection is reported as of unknown outcome: %v", err)
	}
}

func TestRedirectRefused(t *testing.T) {
	elsewhere := untouchable(t)
	v := newVenue(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.srv.URL+r.URL.Path+"?key="+secret, http.StatusTemporaryRedirect)
	})
	lenient := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}
	for _, client := range []struct {
		name string
		hc   *http.Client
	}{{"own client", nil}, {"caller's client that follows redirects", lenient}} {
		for op, run := range operations(t) {
			t.Run(client.name+" "+op, func(t *testing.T) {
				err := run(ctx, newBackend(t, v.srv.URL, func(c *httpexchange.Config) { c.HTTP = client.hc }))
				if !errors.Is(err, httpexchange.ErrRedirect) {
					t.Errorf("%s redirected: %v, want ErrRedirect", op, err)
				}
				if errors.Is(err, httpexchange.ErrOutcomeUnknown) {
					t.Errorf("a redirect is reported as of unknown outcome: %v", err)
				}
				assertNoSecret(t, err)
			})
		}
	}
	if lenient.CheckRedirect(nil, nil) != nil {
		t.Error("New modified the caller's client")
	}
	if n := len(elsewhere.requests()); n != 0 {
		t.Errorf("%d requests were replayed to the redirect's target", n)
	}
}

// TestTokenNeverInErrors: a venue that echoes the Authorization header back,
// in any way, does not get the token into an error.
func TestTokenNeverInErrors(t *testing.T) {
	echo := func(status int, format string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			auth := r.Header.Get("Authorization")
			if auth != "Bearer "+secret {
				t.Errorf("Authorization = %q; want the bearer token", auth)
			}
			tok := strings.TrimPrefix(auth, "Bearer ")
			w.WriteHeader(status)
			fmt.Fprintf(w, format, auth, tok)
		}
	}
	for _, tc := range []struct {
		name    string
		op      string
		handler http.HandlerFunc
	}{
		{"401 echoing the header", "portfolio", echo(401, `{"error": "bad credentials %s"}%.0s`)},
		{"500 echoing the token at the end of a long body", "swap", echo(500, strings.Repeat("x", 190)+`%.0s%s`)},
		{"502 splitting the token with control characters", "transfer", func(w http.ResponseWriter, r *http.Request) {
			tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			w.WriteHeader(502)
			io.WriteString(w, "upstream refused "+tok[:5]+"\x00\x1b"+tok[5:])
		}},
		{"200 with the token as the price", "price", echo(200, `{"usd": "%.0s%s", "at": "2026-03-01T12:00:00Z"}`)},
		{"200 with the token as the time", "price", echo(200, `{"usd": 1, "at": "%s"}%.0s`)},
		{"200 with the token in a bad fill id", "swap", echo(200, `{"id": "%s\n%s", "value_usd": "5"}`)},
		{"200 with the token as a JSON key", "simulate", echo(200, `{"%.0s%s": ]}`)},
		{"redirect to the token", "perp open", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://"+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+".evil.example/", http.StatusFound)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := operations(t)[tc.op]
			v := newVenue(t, tc.handler)
			err := run(ctx, newBackend(t, v.srv.URL))
			if err == nil {
				t.Fatalf("%s succeeded; want an error", tc.op)
			}
			assertNoSecret(t, err)
			if s := fmt.Sprintf("%+v %#v", err, err); strings.Contains(s, secret) {
				t.Errorf("the error prints the token: %s", s)
			}
		})
	}
}

func TestBasePathAndCustomEndpoints(t *testing.T) {
	v := newVenue(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/custom/price":
			answer(200, testdata(t, "price.json"))(w, r)
		case "/api/v1/portfolio":
			answer(200, testdata(t, "portfolio.json"))(w, r)
		default:
			http.NotFound(w, r)
		}
	})
	b := newBackend(t, v.srv.URL+"/api/", func(c *httpexchange.Config) { c.Endpoints.Price = "/custom/price" })
	if _, err := b.Price(ctx, token(t, "base", "ETH")); err != nil {
		t.Errorf("custom price endpoint: %v", err)
	}
	if _, err := b.Portfolio(ctx); err != nil {
		t.Errorf("default portfolio endpoint under the base path: %v", err)
	}
}
