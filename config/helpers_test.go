package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
}
