package httpapi

import (
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// TestMetricsExposition checks the text format: counters per verdict,
// cumulative histogram buckets ending in +Inf, sum and count, and a wait for
// a human left out of the latency histogram.
func TestMetricsExposition(t *testing.T) {
	m := NewMetrics(func() float64 { return 2 })
	st := []warden.StageAnswer{{Stage: "kill-switch", Duration: 3 * time.Microsecond}}
	m.decided(warden.Decision{Verdict: warden.Allow, Stages: st}, 60*time.Microsecond, false)
	m.decided(warden.Decision{Verdict: warden.Allow, Stages: st}, 250*time.Microsecond, false)
	m.decided(warden.Decision{Verdict: warden.Deny}, time.Hour, true)
	m.failed()
	var b strings.Builder
	m.write(&b)
	out := b.String()
	for _, want := range []string{
		"# TYPE warden_decisions_total counter\n",
		`warden_decisions_total{verdict="allow"} 2` + "\n",
		`warden_decisions_total{verdict="deny"} 1` + "\n",
		`warden_decisions_total{verdict="ask"} 0` + "\n",
		"warden_check_failures_total 1\n",
		`warden_check_duration_seconds_bucket{le="5e-05"} 0` + "\n",
		`warden_check_duration_seconds_bucket{le="0.0001"} 1` + "\n",
		`warden_check_duration_seconds_bucket{le="0.0002"} 1` + "\n",
		`warden_check_duration_seconds_bucket{le="0.0004"} 2` + "\n",
		`warden_check_duration_seconds_bucket{le="+Inf"} 2` + "\n",
		"warden_check_duration_seconds_sum 0.00031\n",
		"warden_check_duration_seconds_count 2\n",
		`warden_stage_duration_seconds_bucket{stage="kill-switch",le="1e-06"} 0` + "\n",
		`warden_stage_duration_seconds_bucket{stage="kill-switch",le="4e-06"} 2` + "\n",
		`warden_stage_duration_seconds_count{stage="kill-switch"} 2` + "\n",
		"warden_pending_approvals 2\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("exposition lacks %q\n%s", want, out)
		}
	}
}
