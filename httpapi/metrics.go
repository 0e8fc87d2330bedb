package httpapi

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/agentwarden/warden"
)

// Metrics are the daemon's Prometheus metrics, written in the text
// exposition format. They are kept here rather than in
// prometheus/client_golang because that package's init (its default
// registry, procfs, protobuf) costs about 0.4 ms at the start of every warden
// process, hooks included, and the daemon needs only counters, one gauge and
// two histograms. A nil *Metrics records nothing.
type Metrics struct {
	pending func() float64

	mu        sync.Mutex
	decisions map[string]uint64
	failures  uint64
	check     histogram
	stages    map[string]*histogram
}

// checkBuckets are the upper bounds, in seconds, of the check latency
// histogram (50 µs doubling to ~0.4 s); stageBuckets those of a stage (1 µs
// quadrupling to ~0.26 s).
var (
	checkBuckets = exponential(50e-6, 2, 14)
	stageBuckets = exponential(1e-6, 4, 10)
)

func exponential(start, factor float64, n int) []float64 {
	b := make([]float64, n)
	for i := range b {
		b[i] = start * math.Pow(factor, float64(i))
	}
	return b
}

// histogram counts observations per bucket (not cumulative; made cumulative
// when written).
type histogram struct {
	bounds []float64
	counts []uint64 // len(bounds)+1: the last is above every bound
	sum    float64
	n      uint64
}

func newHistogram(bounds []float64) histogram {
	return histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	i, _ := slices.BinarySearch(h.bounds, v) // the first bound >= v
	h.counts[i]++
	h.sum += v
	h.n++
}

// NewMetrics builds the metrics; pending reports how many approvals wait.
func NewMetrics(pending func() float64) *Metrics {
	m := &Metrics{pending: pending, decisions: map[string]uint64{}, check: newHistogram(checkBuckets), stages: map[string]*histogram{}}
	for _, v := range []warden.Verdict{warden.Allow, warden.Sandbox, warden.Ask, warden.Deny} {
		m.decisions[v.String()] = 0
	}
	return m
}

// decided counts one decision and observes its stages; a check that waited
// for a human is not a latency sample.
func (m *Metrics) decided(d warden.Decision, took time.Duration, waited bool) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.decisions[d.Verdict.String()]++
	if !waited {
		m.check.observe(took.Seconds())
	}
	for _, s := range d.Stages {
		h := m.stages[s.Stage]
		if h == nil {
			nh := newHistogram(stageBuckets)
			h = &nh
			m.stages[s.Stage] = h
		}
		h.observe(s.Duration.Seconds())
	}
}

func (m *Metrics) failed() {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.failures++
	m.mu.Unlock()
}

func (m *Metrics) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		m.write(w)
	})
}

// write renders every metric. The pending gauge is read outside the lock:
// it queries the store.
func (m *Metrics) write(w io.Writer) {
	pending := m.pending()
	m.mu.Lock()
	defer m.mu.Unlock()
	fmt.Fprint(w, "# HELP warden_decisions_total Decisions returned through the API, by verdict.\n# TYPE warden_decisions_total counter\n")
	for _, v := range sortedKeys(m.decisions) {
		fmt.Fprintf(w, "warden_decisions_total{verdict=%q} %d\n", v, m.decisions[v])
	}
	fmt.Fprintf(w, "# HELP warden_check_failures_total Checks that could not be decided or recorded (the caller denies).\n# TYPE warden_check_failures_total counter\nwarden_check_failures_total %d\n", m.failures)
	fmt.Fprint(w, "# HELP warden_check_duration_seconds Time to decide and durably record one request, waiting excluded.\n# TYPE warden_check_duration_seconds histogram\n")
	m.check.write(w, "warden_check_duration_seconds", "")
	fmt.Fprint(w, "# HELP warden_stage_duration_seconds Time each pipeline stage took.\n# TYPE warden_stage_duration_seconds histogram\n")
	for _, s := range sortedKeys(m.stages) {
		m.stages[s].write(w, "warden_stage_duration_seconds", fmt.Sprintf("stage=%q,", s))
	}
	fmt.Fprintf(w, "# HELP warden_pending_approvals Approvals waiting for an answer.\n# TYPE warden_pending_approvals gauge\nwarden_pending_approvals %s\n", num(pending))
	fmt.Fprintf(w, "# HELP go_goroutines Goroutines that currently exist.\n# TYPE go_goroutines gauge\ngo_goroutines %d\n", runtime.NumGoroutine())
}

// write renders h with labels (each followed by a comma) before le.
func (h *histogram) write(w io.Writer, name, labels string) {
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i]
		fmt.Fprintf(w, "%s_bucket{%sle=%q} %d\n", name, labels, num(b), cum)
	}
	fmt.Fprintf(w, "%s_bucket{%sle=\"+Inf\"} %d\n", name, labels, h.n)
	trimmed := labels
	if trimmed != "" {
		trimmed = "{" + trimmed[:len(trimmed)-1] + "}"
	}
	fmt.Fprintf(w, "%s_sum%s %s\n%s_count%s %d\n", name, trimmed, num(h.sum), name, trimmed, h.n)
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
