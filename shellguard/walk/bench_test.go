package walk

import (
	"slices"
	"testing"
	"time"
)

// BenchmarkWalk walks every input of the shell corpora and reports the
// median and 99th percentile latency of one Walk call in microseconds.
func BenchmarkWalk(b *testing.B) {
	var inputs []string
	for _, name := range corpusFiles {
		inputs = append(inputs, loadCorpus(b, name)...)
	}
	lat := make([]time.Duration, 0, len(inputs))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		lat = lat[:0]
		for _, src := range inputs {
			start := time.Now()
			Walk(src, testOpt)
			lat = append(lat, time.Since(start))
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	us := func(q float64) float64 {
		return float64(lat[int(q*float64(len(lat)-1))]) / float64(time.Microsecond)
	}
	b.ReportMetric(us(0.50), "p50-µs/cmd")
	b.ReportMetric(us(0.99), "p99-µs/cmd")
	b.ReportMetric(float64(len(inputs)), "cmds")
}
