package httpapi

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/agentwarden/warden"
)

// Metrics are the daemon's Prometheus metrics, on a registry of their own.
// A nil *Metrics records nothing.
type Metrics struct {
	reg       *prometheus.Registry
	decisions *prometheus.CounterVec
	failures  prometheus.Counter
	check     prometheus.Histogram
	stages    *prometheus.HistogramVec
}

// NewMetrics builds the metrics; pending reports how many approvals wait.
func NewMetrics(pending func() float64) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warden_decisions_total", Help: "Decisions returned through the API, by verdict.",
		}, []string{"verdict"}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "warden_check_failures_total", Help: "Checks that could not be decided or recorded (the caller denies).",
		}),
		check: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "warden_check_duration_seconds", Help: "Time to decide and durably record one request, waiting excluded.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 14),
		}),
		stages: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "warden_stage_duration_seconds", Help: "Time each pipeline stage took.",
			Buckets: prometheus.ExponentialBuckets(1e-6, 4, 10),
		}, []string{"stage"}),
	}
	m.reg.MustRegister(m.decisions, m.failures, m.check, m.stages,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "warden_pending_approvals", Help: "Approvals waiting for an answer."}, pending),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, v := range []warden.Verdict{warden.Allow, warden.Sandbox, warden.Ask, warden.Deny} {
		m.decisions.WithLabelValues(v.String())
	}
	return m
}

// decided counts one decision and observes its stages.
func (m *Metrics) decided(d warden.Decision, took time.Duration, waited bool) {
	if m == nil {
		return
	}
	m.decisions.WithLabelValues(d.Verdict.String()).Inc()
	if !waited {
		m.check.Observe(took.Seconds())
	}
	for _, s := range d.Stages {
		m.stages.WithLabelValues(s.Stage).Observe(s.Duration.Seconds())
	}
}

func (m *Metrics) failed() {
	if m != nil {
		m.failures.Inc()
	}
}

func (m *Metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
