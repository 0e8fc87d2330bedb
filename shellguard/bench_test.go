package shellguard

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/agentwarden/warden/shellguard/walk"
)

// loadCorpusQuiet loads a corpus, or returns nil if it is absent.
func loadCorpusQuiet(name string) []corpusRow {
	f, err := os.Open(filepath.Join(corpusDir, name))
	if err != nil {
		return nil
	}
	defer f.Close()
	var rows []corpusRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r corpusRow
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			rows = append(rows, r)
		}
	}
	return rows
}

// BenchmarkWalkOnly measures package walk alone on the shell-guard corpus,
// so the classifier's own share of BenchmarkClassify can be read off.
func BenchmarkWalkOnly(b *testing.B) {
	rows := loadCorpusQuiet("shell-guard.jsonl")
	if rows == nil {
		b.Skipf("corpus not found in %s", corpusDir)
	}
	opt := walk.Options{Cwd: corpusEnv.Cwd, Home: corpusEnv.Home, Tmp: corpusEnv.Tmp}
	for i := 0; i < b.N; i++ {
		walk.Walk(rows[i%len(rows)].Command, opt)
	}
}

// BenchmarkClassify runs every command of each corpus and reports the
// per-command p50 and p99 latency in microseconds.
func BenchmarkClassify(b *testing.B) {
	for _, name := range []string{"shell-guard.jsonl", "tldr-examples.jsonl"} {
		b.Run(name, func(b *testing.B) {
			rows := loadCorpusQuiet(name)
			if rows == nil {
				b.Skipf("corpus %s not found in %s", name, corpusDir)
			}
			p := corpusPolicy()
			lat := make([]time.Duration, 0, len(rows))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r := rows[i%len(rows)]
				t0 := time.Now()
				Classify(r.Command, corpusEnv, p)
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			q := func(f float64) float64 { return float64(lat[int(f*float64(len(lat)-1))].Nanoseconds()) / 1e3 }
			b.ReportMetric(q(0.50), "p50-µs")
			b.ReportMetric(q(0.99), "p99-µs")
		})
	}
}
