package warden_test

import (
	"encoding/json"
	"testing"

	"github.com/agentwarden/warden"
)

func TestZeroValuesAreSafe(t *testing.T) {
	var v warden.Verdict
	if v != warden.Deny {
		t.Fatalf("zero Verdict = %v, want deny", v)
	}
	var d warden.Decision
	if !d.Blocked() {
		t.Fatal("zero Decision does not block")
	}
	var tier warden.Tier
	if tier.OrDefault() != warden.TierAlwaysConfirm {
		t.Fatalf("unset tier resolves to %v, want 3", tier.OrDefault())
	}
	if warden.Strongest() != warden.Deny {
		t.Fatal("Strongest() of nothing is not deny")
	}
	if warden.Strongest(warden.Allow, warden.Verdict(42)) != warden.Verdict(42) {
		t.Fatal("an unknown verdict does not rank like deny")
	}
}

func TestStrongest(t *testing.T) {
	A, S, Q, D := warden.Allow, warden.Sandbox, warden.Ask, warden.Deny
	cases := []struct {
		in   []warden.Verdict
		want warden.Verdict
	}{
		{[]warden.Verdict{A}, A},
		{[]warden.Verdict{A, S}, S},
		{[]warden.Verdict{S, Q, A}, Q},
		{[]warden.Verdict{Q, D, A}, D},
		{[]warden.Verdict{D, A}, D},
	}
	for _, c := range cases {
		if got := warden.Strongest(c.in...); got != c.want {
			t.Errorf("Strongest(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestVerdictJSON(t *testing.T) {
	for _, v := range []warden.Verdict{warden.Allow, warden.Sandbox, warden.Ask, warden.Deny} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var back warden.Verdict
		if err := json.Unmarshal(b, &back); err != nil || back != v {
			t.Errorf("round trip of %v via %s = %v, %v", v, b, back, err)
		}
	}
	var v warden.Verdict = warden.Allow
	if err := json.Unmarshal([]byte(`"ALLOW"`), &v); err == nil {
		t.Error("decoded an unknown verdict name without error")
	}
	if _, err := json.Marshal(warden.Verdict(9)); err == nil {
		t.Error("encoded an invalid verdict without error")
	}
}

func TestParseUSD(t *testing.T) {
	cases := []struct {
		in   string
		want warden.USD
		ok   bool
	}{
		{"500", 500_000_000, true},
		{"500.01", 500_010_000, true},
		{"0.000001", 1, true},
		{".5", 500_000, true},
		{"0", 0, true},
		{"1000000000000", 1_000_000_000_000_000_000, true},
		{"1000000000000.000001", 0, false},
		{"", 0, false},
		{".", 0, false},
		{"5.", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{"1e3", 0, false},
		{"1,000", 0, false},
		{"NaN", 0, false},
		{"0.0000001", 0, false},
		{" 1", 0, false},
		{"99999999999999999999999", 0, false},
	}
	for _, c := range cases {
		got, err := warden.ParseUSD(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseUSD(%q) = %d, %v; want %d ok=%v", c.in, got, err, c.want, c.ok)
		}
		if c.ok {
			if back, err := warden.ParseUSD(got.String()); err != nil || back != got {
				t.Errorf("ParseUSD(%q).String() = %q does not parse back", c.in, got.String())
			}
		}
	}
}

func FuzzParseUSD(f *testing.F) {
	for _, s := range []string{"500", "500.01", ".5", "1e3", "-1", "0.0000001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := warden.ParseUSD(s)
		if err != nil {
			return
		}
		if u < 0 {
			t.Fatalf("ParseUSD(%q) = %d, negative", s, u)
		}
		if back, err := warden.ParseUSD(u.String()); err != nil || back != u {
			t.Fatalf("ParseUSD(%q) = %v, which does not round-trip: %v %v", s, u, back, err)
		}
	})
}
