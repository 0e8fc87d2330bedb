package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// mustParse parses src, failing the test on an error.
func mustParse(t testing.TB, src string) *Loaded {
	t.Helper()
	l, err := Parse([]byte(src))
	if err != nil {
		t.Fatalf("Parse(%q) error: %v", src, err)
	}
	return l
}

// problemAt returns the first problem with key, or fails.
func problemAt(t testing.TB, l *Loaded, key string) Problem {
	t.Helper()
	for _, p := range l.Problems {
		if p.Key == key {
			return p
		}
	}
	t.Fatalf("no problem at %s; problems: %v", key, l.Problems)
	return Problem{}
}

// setOnDefault sets key to value in a fresh default policy file. When
// refused is not empty, Set must refuse with EInvalid and that text and leave
// the file as it was, and setOnDefault returns nil; otherwise it returns the
// file loaded again, which must have no problems.
func setOnDefault(t testing.TB, key, value, refused string) *Loaded {
	t.Helper()
	p := writeFile(t, DefaultFile())
	err := Set(p, key, value)
	if refused != "" {
		wantCode(t, err, warden.EInvalid, refused)
		if got := readBytes(t, p); string(got) != string(DefaultFile()) {
			t.Errorf("refused Set changed the file")
		}
		return nil
	}
	if err != nil {
		t.Fatalf("Set(%q, %q) = %v", key, value, err)
	}
	l, err := Load(p)
	if err != nil || len(l.Problems) != 0 {
		t.Fatalf("Load after Set = %v, %v", err, l.Problems)
	}
	return l
}

// writeFile writes data to a fresh warden.yaml and returns its path.
func writeFile(t testing.TB, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func readBytes(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantCode checks that err is a *warden.Error with code and a message
// containing substr.
func wantCode(t testing.TB, err error, code warden.ErrorCode, substr string) *warden.Error {
	t.Helper()
	var we *warden.Error
	if !errors.As(err, &we) {
		t.Fatalf("error = %v (%T), want a *warden.Error with code %s", err, err, code)
	}
	if we.Code != code {
		t.Errorf("error code = %s, want %s (%v)", we.Code, code, err)
	}
	if !strings.Contains(we.Message, substr) {
		t.Errorf("error message = %q, want it to contain %q", we.Message, substr)
	}
	return we
}

// checkPolicy fails when p holds any value the gate must never run on.
func checkPolicy(t testing.TB, p *Policy) {
	t.Helper()
	s := p.Safety
	if s.MaxTransaction < 0 || s.DailySpendCap < 0 {
		t.Fatalf("negative cap in %+v", s)
	}
	for _, list := range [][]string{s.AllowedTokens, s.BlockedTokens} {
		for _, tok := range list {
			if tok == "" || tok != strings.ToUpper(tok) || strings.ContainsAny(tok, " \t\n\r\v\f") {
				t.Fatalf("bad token symbol %q", tok)
			}
		}
	}
	if p.Tools.Tiers[unkillTool] != warden.TierManualOnly {
		t.Fatalf("unkill tier = %v, want 4", p.Tools.Tiers[unkillTool])
	}
	for name, tier := range p.Tools.Tiers {
		if !tier.Valid() || name == "" {
			t.Fatalf("tier of %q = %d", name, tier)
		}
	}
	for _, o := range p.Tools.Overrides {
		if o.Tool == "" || !o.Tier.Valid() || (o.Tool == unkillTool && o.Tier != warden.TierManualOnly) {
			t.Fatalf("bad override %+v", o)
		}
		if o.MaxAmount != nil && *o.MaxAmount < 0 {
			t.Fatalf("negative override amount %+v", o)
		}
		if o.Recipients != nil && len(o.Recipients) == 0 {
			t.Fatalf("override with an empty recipients list %+v", o)
		}
	}
	checkTrading(t, p)
	checkSigningPolicy(t, p.Signing)
}

// badBody is a section body a section must refuse: the problem it gives at
// key on line (the body starts on line 3) and part of its message.
type badBody struct {
	name, body string
	key        string
	line       int
	want       string
}

// testRefusals parses each case's body as section and checks that it yields
// its problem and the fallback note, and that the section's runtime value,
// as got from a policy, is then the default.
func testRefusals(t *testing.T, section string, cases []badBody, get func(*Policy) any) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			src := "version: 1\n" + section + ":\n"
			for line := range strings.Lines(tt.body) {
				src += "  " + line
			}
			src += "\n"
			l := mustParse(t, src)
			p := problemAt(t, l, tt.key)
			if p.Line != tt.line || !strings.Contains(p.Message, tt.want) {
				t.Errorf("Parse(%q) problem = %v, want line %d and %q", src, p, tt.line, tt.want)
			}
			problemAt(t, l, section) // the fallback note
			if got, want := get(l.Policy), get(Default()); !reflect.DeepEqual(got, want) {
				t.Errorf("Parse(%q) %s = %+v, want the defaults %+v", src, section, got, want)
			}
			checkPolicy(t, l.Policy)
		})
	}
}

// checkTrading fails when the trading sections of p hold a value the gate
// must never run on.
func checkTrading(t testing.TB, p *Policy) {
	t.Helper()
	fraction := func(f float64) bool { return f > 0 && f <= 1 }
	if z := p.Sizing; !slices.Contains(SizingStrategies, z.Strategy) || z.FixedAmount <= 0 || !fraction(z.Fraction) || !fraction(z.KellyMultiplier) {
		t.Fatalf("bad sizing %+v", z)
	}
	if e := p.Exposure; e.MaxPerToken < 0 || e.MaxPerChain < 0 || e.MaxTotal < 0 || !fraction(e.MaxPerAssetClassFraction) {
		t.Fatalf("bad exposure %+v", e)
	}
	s := p.Slippage
	for _, m := range []float64{s.SmallMax, s.MidMax, s.LargeMax} {
		if !(m >= 0 && m < 1) {
			t.Fatalf("bad slippage %+v", s)
		}
	}
	if s.SmallBelow < 0 || s.SmallBelow > s.LargeAbove || !fraction(s.MinOutputRatio) || !(s.MaxLeverage >= 1 && s.MaxLeverage <= 100) {
		t.Fatalf("bad slippage %+v", s)
	}
	sl := p.StopLoss
	if sl.PollInterval < time.Second || sl.MaxPriceAge <= 0 || !slices.Contains(KillSwitchExitModes, sl.KillSwitchExits) {
		t.Fatalf("bad stopLoss %+v", sl)
	}
	if r := sl.Default; r != nil {
		if !slices.Contains(StopRuleTypes, r.Type) || r.ThresholdPct < 0 || r.ThresholdPct > 1 || r.TakeProfitPct < 0 || r.MaxAge < 0 ||
			(r.Type != "time_based" && r.ThresholdPct == 0) || (r.Type == "time_based" && r.MaxAge == 0) {
			t.Fatalf("bad stop rule %+v", r)
		}
	}
	tr := p.Trade
	if !slices.Contains(TradeBackends, tr.Backend) || tr.Recipients == nil || tr.HTTP.Endpoints == nil {
		t.Fatalf("bad trade %+v", tr)
	}
	if tr.Backend == "http" && (tr.HTTP.BaseURL == "" || !validTestAddress(tr.Wallet)) {
		t.Fatalf("http backend without a base URL or wallet: %+v", tr)
	}
	if tr.Wallet != "" && !validTestAddress(tr.Wallet) {
		t.Fatalf("bad wallet %q", tr.Wallet)
	}
	for _, r := range tr.Recipients {
		if !validTestAddress(r) {
			t.Fatalf("bad recipient %q", r)
		}
	}
	if tr.HTTP.TokenEnv != "" && !upperEnvName(tr.HTTP.TokenEnv) {
		t.Fatalf("tokenEnv %q is not a variable name", tr.HTTP.TokenEnv)
	}
	for op, path := range tr.HTTP.Endpoints {
		if !slices.Contains(TradeEndpoints, op) || !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") {
			t.Fatalf("bad endpoint %s: %q", op, path)
		}
	}
	if tr.HTTP.Timeout <= 0 || tr.Paper.Step <= 0 || tr.Paper.PoolDepth <= 0 || tr.Paper.StartingCash < 0 || !(tr.Paper.Volatility >= 0 && tr.Paper.Volatility < 1) {
		t.Fatalf("bad trade settings %+v", tr)
	}
}

// validTestAddress reports whether s is a well-formed address other than
// the zero address.
func validTestAddress(s string) bool {
	return (isEVMAddress(s) || isSolanaAddress(s)) && !isZeroAddress(s)
}
