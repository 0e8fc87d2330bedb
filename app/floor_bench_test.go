package app_test

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkFdatasyncFloor is the physical floor under BenchmarkDaemonCheck: a
// bare append-plus-fdatasync loop on a file in the same kind of directory
// (the benchmark's temporary directory, where startDaemon puts the home), 1
// KiB per record (about an audit row). "serial" is one writer, one
// fdatasync per record; "clients=16" is 16 writers in a closed loop sharing
// fdatasyncs the way the store's group commit does (whoever finds no sync in
// flight writes everything queued and syncs it), with no SQLite, no HTTP
// and no decision. The daemon's decisions/s divided by these is how close
// it comes to the disk.
//
//	go test -run XXX -bench 'BenchmarkFdatasyncFloor|BenchmarkDaemonCheck/clients=16' -benchtime 20000x ./app/
func BenchmarkFdatasyncFloor(b *testing.B) {
	record := make([]byte, 1024)
	for i := range record {
		record[i] = byte(i)
	}
	open := func(b *testing.B) *os.File {
		f, err := os.OpenFile(filepath.Join(b.TempDir(), "floor"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { f.Close() })
		return f
	}
	b.Run("serial", func(b *testing.B) {
		f := open(b)
		lats := make([]time.Duration, 0, b.N)
		start := time.Now()
		for b.Loop() {
			t0 := time.Now()
			if _, err := f.Write(record); err != nil {
				b.Fatal(err)
			}
			if err := syscall.Fdatasync(int(f.Fd())); err != nil {
				b.Fatal(err)
			}
			lats = append(lats, time.Since(t0))
		}
		reportRate(b, lats, time.Since(start), "appends/s")
	})
	b.Run("clients=16", func(b *testing.B) {
		g := &syncGroup{f: open(b), record: record}
		var (
			mu   sync.Mutex
			lats []time.Duration
		)
		b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			var mine []time.Duration
			for pb.Next() {
				t0 := time.Now()
				if err := g.append(); err != nil {
					b.Error(err)
					return
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lats = append(lats, mine...)
			mu.Unlock()
		})
		reportRate(b, lats, time.Since(start), "appends/s")
		b.ReportMetric(float64(len(lats))/float64(g.syncs), "appends/sync")
	})
}

// syncGroup appends records to f in groups, one fdatasync per group: the
// store's group commit with nothing but the file.
type syncGroup struct {
	f      *os.File
	record []byte

	mu      sync.Mutex
	waiting []chan error
	busy    bool
	syncs   int
}

func (g *syncGroup) append() error {
	done := make(chan error, 1)
	g.mu.Lock()
	g.waiting = append(g.waiting, done)
	if g.busy {
		g.mu.Unlock()
		return <-done
	}
	g.busy = true
	for len(g.waiting) > 0 {
		batch := g.waiting
		g.waiting = nil
		g.syncs++
		g.mu.Unlock()
		buf := slices.Repeat(g.record, len(batch))
		_, err := g.f.Write(buf)
		if err == nil {
			err = syscall.Fdatasync(int(g.f.Fd()))
		}
		for _, c := range batch {
			c <- err
		}
		g.mu.Lock()
	}
	g.busy = false
	g.mu.Unlock()
	return <-done
}

// reportRate reports n/elapsed as unit and the p50 and p99 of lats.
func reportRate(b *testing.B, lats []time.Duration, elapsed time.Duration, unit string) {
	b.StopTimer()
	if len(lats) == 0 {
		return
	}
	slices.Sort(lats)
	b.ReportMetric(float64(len(lats))/elapsed.Seconds(), unit)
	b.ReportMetric(float64(lats[len(lats)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lats[len(lats)*99/100].Microseconds()), "p99-µs")
}
