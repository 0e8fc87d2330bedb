package sqlite

import (
	"math/rand/v2"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// TestKill9 runs a child process that records in a loop and prints each seq
// once Record has returned, kills it with SIGKILL at a random moment, and
// checks that the database opens, verifies, and holds every printed seq. Several
// rounds append to the same database, so each round also recovers the last
// one's WAL.
func TestKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	path := filepath.Join(t.TempDir(), "warden.db")
	printed := map[int64]bool{}
	for round := range 6 {
		cmd, lines := startChild(t, "record", path)
		var (
			mu   sync.Mutex
			seqs []int64
			done = make(chan struct{})
		)
		go func() {
			defer close(done)
			for lines.Scan() {
				n := atoi(t, lines.Text())
				mu.Lock()
				seqs = append(seqs, n)
				mu.Unlock()
			}
		}()
		// Wait for the first commit, then kill somewhere in the next 0-150 ms.
		deadline := time.Now().Add(30 * time.Second)
		for {
			mu.Lock()
			n := len(seqs)
			mu.Unlock()
			if n > 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(time.Duration(rand.IntN(150)) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-done
		_ = cmd.Wait()
		mu.Lock()
		for _, n := range seqs {
			printed[n] = true
		}
		t.Logf("round %d: child printed %d seqs before SIGKILL", round, len(seqs))
		mu.Unlock()

		s, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("round %d: open after SIGKILL: %v", round, err)
		}
		rep, err := s.Verify(ctx)
		if err != nil || !rep.OK() {
			t.Fatalf("round %d: Verify after SIGKILL = %+v, %v; want an intact chain", round, rep.FirstBreak, err)
		}
		es, err := s.Entries(ctx, warden.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		have := map[int64]bool{}
		for _, e := range es {
			have[e.Seq] = true
		}
		for n := range printed {
			if !have[n] {
				t.Errorf("round %d: seq %d was acknowledged by Record but is missing after SIGKILL", round, n)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if len(printed) == 0 {
		t.Fatal("no child committed anything")
	}
}
