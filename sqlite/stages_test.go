package sqlite

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentwarden/warden"
)

// proxyStages are the stage answers of a request the egress proxy allows
// under the default policy, as stored in its audit row.
var proxyStages = []warden.StageAnswer{
	{Stage: "policy-integrity", Verdict: warden.Allow, Reason: "the safety section of the policy file is valid", Rule: "safety.policy_invalid", Duration: 60},
	{Stage: "kill-switch", Verdict: warden.Allow, Reason: "the emergency stop is off", Rule: "safety.kill_switch", Duration: 1803},
	{Stage: "daily-spend-cap", Verdict: warden.Allow, Reason: "not fund-moving", Rule: "safety.daily_cap", Duration: 90},
	{Stage: "per-transaction-max", Verdict: warden.Allow, Reason: "not fund-moving", Rule: "safety.max_transaction", Duration: 70},
	{Stage: "tier-gate", Verdict: warden.Allow, Reason: "a human is in the loop this turn", Rule: "safety.tier_gate", Duration: 70},
	{Stage: "manual-only", Verdict: warden.Allow, Reason: "below tier 4", Rule: "safety.manual_only", Duration: 60},
	{Stage: "net-guard", Verdict: warden.Allow, Reason: `127.0.0.1:18080 is allowed by the rule "127.0.0.1:18080" in network.allowed_domains`, Rule: "network.allowed_domain", Duration: 3545},
}

// marshalStages is the stored form as json.Marshal writes it, which
// encodeStages must reproduce byte for byte.
func marshalStages(t testing.TB, stages []warden.StageAnswer) []byte {
	out := make([]stageJSON, len(stages))
	for i, a := range stages {
		out[i] = stageJSON{Stage: a.Stage, Verdict: a.Verdict.String(), Reason: a.Reason, Rule: a.Rule, Error: a.Error, Duration: int64(a.Duration)}
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzEncodeStages: encodeStages writes what json.Marshal of the same
// answers writes, and decodeStages reads it back; text that is not UTF-8 is
// refused.
func FuzzEncodeStages(f *testing.F) {
	for _, a := range proxyStages {
		f.Add(a.Stage, a.Reason, a.Rule, "", int64(a.Duration))
	}
	f.Add("net-guard", `a <b> & "c" \ d`, "r\u2028s\u2029", "line\nbreak\ttab\x01", int64(-5))
	f.Add("étape", "ünïcödé ✓ 😀", "", "\x7f", int64(1)<<62)
	f.Add("x", "\xff", "", "", int64(0))
	f.Fuzz(func(t *testing.T, stage, reason, rule, errText string, d int64) {
		stages := []warden.StageAnswer{
			{Stage: stage, Verdict: warden.Deny, Reason: reason, Rule: rule, Error: errText, Duration: time.Duration(d)},
			proxyStages[6],
		}
		got, err := encodeStages(stages)
		valid := utf8.ValidString(stage) && utf8.ValidString(reason) && utf8.ValidString(rule) && utf8.ValidString(errText)
		if !valid {
			if err == nil {
				t.Fatalf("encodeStages accepted text that is not UTF-8: %q", got)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if want := marshalStages(t, stages); !bytes.Equal(got, want) {
			t.Fatalf("encodeStages =\n%s\nwant (json.Marshal)\n%s", got, want)
		}
		back, err := decodeStages(got)
		if err != nil {
			t.Fatalf("decodeStages(encodeStages) = %v", err)
		}
		if len(back) != 2 || back[0] != stages[0] || back[1] != stages[1] {
			t.Fatalf("decodeStages(encodeStages(%+v)) = %+v", stages, back)
		}
	})
}

// BenchmarkEncodeStages encodes the stage answers of a proxied request,
// which the single writer does for every decision it commits.
func BenchmarkEncodeStages(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodeStages(proxyStages); err != nil {
			b.Fatal(err)
		}
	}
}
