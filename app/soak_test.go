package app_test

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentwarden/warden"
)

// TestDaemonMemoryIsFlat: the daemon's memory does not grow with the audit
// log or with the approvals it answers. A daemon decides DECISIONS tool
// calls (/v1/check over the socket from 16 clients, each recorded durably)
// and opens and answers APPROVALS approvals (an ask, then the operator's
// "once"), in five equal steps after a warm-up of a tenth of each (at least
// 2,500 decisions, which fills SQLite's caches). After
// each step the live heap (after a collection) and the process's resident
// memory are read; the live heap after the last step may exceed the one
// after the warm-up by at most 8 MiB: the caches that fill as the database
// grows (SQLite's page cache, 2 MiB for each of its two connections, in the
// engine's wasm memory), nothing per decision or approval. The soak (make
// soak: a million decisions, a hundred thousand approvals) therefore fails
// on a leak of 8 bytes a decision; the normal tests (5,000 and 500) on one
// of about 2 KiB. The clients run in this process; their memory is per
// request, not kept.
//
//	WARDEN_SOAK_DECISIONS=1000000 WARDEN_SOAK_APPROVALS=100000 go test -run TestDaemonMemoryIsFlat -timeout 60m -v ./app/
func TestDaemonMemoryIsFlat(t *testing.T) {
	decisions := envInt(t, "WARDEN_SOAK_DECISIONS", 5_000)
	approvals := envInt(t, "WARDEN_SOAK_APPROVALS", 500)
	dm := startDaemon(t)
	idle := residentKB(t)

	var session atomic.Int64
	decide := func(n int) {
		t.Helper()
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for next.Add(1) <= int64(n) {
					d, err := dm.agent.Check(ctx, &warden.Request{Capability: warden.CapTool, Action: "call", Resource: "get_price"})
					if err != nil || d.Verdict != warden.Allow {
						t.Errorf("check = %v, %v; want allow", d.Verdict, err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	approve := func(n int) {
		t.Helper()
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for next.Add(1) <= int64(n) {
					s := "soak-" + strconv.FormatInt(session.Add(1), 10)
					d, err := dm.agent.Check(ctx, toolReq("write_file", s))
					if err != nil || d.Verdict != warden.Ask || d.ApprovalID == "" {
						t.Errorf("check = %+v, %v; want an ask with an approval", d, err)
						return
					}
					if a, err := dm.op.Answer(ctx, d.ApprovalID, warden.AnswerOnce, "console", "soak"); err != nil || a.State != warden.ApprovalApproved {
						t.Errorf("answer %s = %+v, %v", d.ApprovalID, a.State, err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	step := func(d, a int) {
		decide(d)
		approve(a)
	}

	warm := max(decisions/10, 2500)
	step(warm, approvals/10)
	base := liveHeap()
	t.Logf("idle: resident %d KiB; after the warm-up (%d decisions, %d approvals): live heap %d KiB, resident %d KiB",
		idle, warm, approvals/10, base>>10, residentKB(t))
	const steps = 5
	var last uint64
	for i := range steps {
		step(decisions/steps, approvals/steps)
		if t.Failed() {
			return
		}
		last = liveHeap()
		t.Logf("after step %d (%d decisions, %d approvals in all): live heap %d KiB, resident %d KiB",
			i+1, warm+(i+1)*decisions/steps, approvals/10+(i+1)*approvals/steps, last>>10, residentKB(t))
	}
	allowed := base + 8<<20
	if last > allowed {
		t.Errorf("the live heap grew from %d KiB to %d KiB over %d decisions and %d approvals (allowed up to %d KiB): memory grows with the audit log or the approvals",
			base>>10, last>>10, decisions, approvals, allowed>>10)
	}
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// residentKB is this process's resident memory (VmRSS) in KiB, or 0 where
// /proc does not say.
func residentKB(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// envInt reads a positive count from the environment, or def.
func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 10 {
		t.Fatalf("%s=%q: want a count of at least 10", name, v)
	}
	return n
}
