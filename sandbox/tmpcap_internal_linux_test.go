//go:build amd64 || arm64

package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestTmpWatchStopsOnlyGrowthPastItsCap: the watcher of a session's /tmp
// lets it grow to its cap, stops what grows it past (once per growth), and
// lets a /tmp that already held more than the cap keep it and shrink.
func TestTmpWatchStopsOnlyGrowthPastItsCap(t *testing.T) {
	dir := t.TempDir()
	var over atomic.Int64
	write := func(name string, n int) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Repeat("x", n)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	waitFor := func(want int64, within time.Duration) {
		t.Helper()
		deadline := time.Now().Add(within)
		for over.Load() < want && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	write("before", 3<<20) // already over a 2 MiB cap when the watch starts
	w := watchTmp(dir, 2<<20, 0, func() { over.Add(1) })
	time.Sleep(3 * tmpPoll)
	if err := os.Remove(filepath.Join(dir, "before")); err != nil { // it may shrink ...
		t.Fatal(err)
	}
	write("small", 4<<10)
	write("under", 1<<20)                // ... and grow back up to its cap
	time.Sleep(tmpWalkEvery + 2*tmpPoll) // a walk sees it so
	if n := over.Load(); n != 0 || w.fired() != 0 {
		t.Fatalf("the watcher stopped a /tmp within its cap, or one that held more when it started: %d times", n)
	}
	write("past", 2<<20)
	waitFor(1, 5*time.Second)
	if n := w.fired(); n != 1 {
		t.Fatalf("growing /tmp past its cap stopped it %d times; want once", n)
	}
	time.Sleep(tmpWalkEvery + 2*tmpPoll)
	if n := w.fired(); n != 1 {
		t.Errorf("what the stopped processes left was stopped again (%d times): it may stay until removed", n)
	}
	write("more", 1<<20)
	waitFor(2, 5*time.Second)
	if n := w.fired(); n != 2 {
		t.Errorf("growing /tmp further after a stop: stopped %d times in all; want twice", n)
	}
}

// TestDirUsageLeavesOutMountsBelow: a path carried into /tmp from elsewhere
// (the project, when it lies in /tmp) is not what the session's /tmp holds.
func TestDirUsageLeavesOutMountsBelow(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "proj"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "proj", "big"), make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "own"), make([]byte, 64<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	all := dirUsage(dir, nil)
	some := dirUsage(dir, map[string]bool{filepath.Join(dir, "proj"): true})
	if all < 1<<20 || some >= 1<<20 || some < 64<<10 {
		t.Errorf("usage %d with the mount and %d without; want at least 1 MiB, and the 64 KiB file alone", all, some)
	}
}

// TestTmpShareCountsWhatTmpHolds: a cap given as a share is taken of the
// disk's free space and what /tmp already holds, so that a /tmp that has
// filled part of the disk is not over its cap for that alone; a watcher
// with a share does not stop small writes; no cap, no watcher.
func TestTmpShareCountsWhatTmpHolds(t *testing.T) {
	if got := shareCap(6<<30, 4<<30, 50); got != 5<<30 {
		t.Errorf("50%% of 6 GiB free and 4 GiB held = %d, want 5 GiB", got)
	}
	dir := t.TempDir()
	var over atomic.Int64
	w := watchTmp(dir, 0, 1, func() { over.Add(1) })
	if err := os.WriteFile(filepath.Join(dir, "more"), make([]byte, 64<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(tmpWalkEvery + 2*tmpPoll)
	if n := w.fired(); n != 0 {
		t.Errorf("64 KiB in a /tmp capped at 1%% of the disk was stopped %d times", n)
	}
	if watchTmp(dir, 0, 0, func() {}) != nil {
		t.Error("a watcher with no cap and no share was started")
	}
}

// BenchmarkDirUsage is one walk of a session's /tmp holding n files (in
// directories of 100), which a world's watcher makes once a second.
func BenchmarkDirUsage(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			dir := b.TempDir()
			for i := range n {
				d := filepath.Join(dir, strconv.Itoa(i/100))
				if i%100 == 0 {
					if err := os.Mkdir(d, 0o755); err != nil {
						b.Fatal(err)
					}
				}
				if err := os.WriteFile(filepath.Join(d, strconv.Itoa(i)), []byte("x"), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for range b.N {
				dirUsage(dir, nil)
			}
		})
	}
}
