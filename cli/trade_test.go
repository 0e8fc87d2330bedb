package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/finance"
)

// TestSixtyFourTradersShareOneCap starts 64 `warden trade buy` processes
// at once, each buying $100 of WETH on the paper exchange under a $2,000
// daily cap: exactly 20 are allowed and executed, the ledger holds
// exactly $2,000, and the paper book filled exactly those 20.
func TestSixtyFourTradersShareOneCap(t *testing.T) {
	untilTested(t, "processes denied without deciding (a locked database, a stage past its deadline)", sixtyFourTraders)
}

// sixtyFourTraders runs one round of TestSixtyFourTradersShareOneCap and
// reports how many processes failed closed, and whether few enough did for
// the round to test the race (its checks ran).
func sixtyFourTraders(t *testing.T) (int, bool) {
	const procs = 64
	home := initHome(t, [2]string{"safety.dailySpendCap", "2000"})
	type result struct {
		ex     finance.Execution
		err    error
		stderr string
	}
	results := make(chan result, procs)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			cmd := wardenCmd(home, "trade", "buy", "WETH", "--param", "chain=base", "--param", "amount_usd=100")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			r := result{err: cmd.Run(), stderr: stderr.String()}
			var exit *exec.ExitError
			if r.err == nil || errors.As(r.err, &exit) && exit.ExitCode() == exitDeny {
				r.err = json.Unmarshal(stdout.Bytes(), &r.ex)
			}
			results <- r
		}()
	}
	close(start)
	wg.Wait()
	close(results)

	allowed, failedClosedN := 0, 0
	for r := range results {
		// On a loaded machine a process may wait past SQLite's busy
		// timeout, or a stage past its deadline: it denies without
		// deciding (fail closed), which the cap's race allows for.
		switch loaded(r.err, r.stderr) {
		case failedClosed, unexecuted:
			failedClosedN++
			continue
		case executedUnrecorded:
			allowed++
			continue
		}
		if r.err != nil {
			t.Fatalf("a warden process failed: %v\n%s", r.err, r.stderr)
		}
		switch d := r.ex.Decision; {
		case d.Verdict == warden.Allow && r.ex.Fill != nil:
			allowed++
		case d.Verdict == warden.Deny && d.Rule == "pipeline.stage_failed":
			failedClosedN++
		case d.Verdict == warden.Deny && d.Rule == "safety.daily_cap":
		default:
			t.Errorf("decision %v by %s (%s), fill %v; want executed, or denied by the daily cap", d.Verdict, d.Rule, d.Reason, r.ex.Fill)
		}
	}
	if failedClosedN > procs/4 {
		return failedClosedN, false
	}
	if allowed != 20 {
		t.Fatalf("%d of %d $100 buys were allowed under a $2,000 cap, want exactly 20", allowed, procs)
	}
	store, err := app.OpenStore(context.Background(), app.Home(home))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if spent, err := store.SpentSince(context.Background(), time.Time{}); err != nil || spent != 2000*warden.MicrosPerDollar {
		t.Fatalf("ledger = $%s, %v; want $2000", spent, err)
	}
	fills, err := store.PaperFills(context.Background(), 1000)
	if err != nil || len(fills) != 20 {
		t.Fatalf("the paper exchange filled %d orders (%v), want 20", len(fills), err)
	}
	if rep, err := store.Verify(context.Background()); err != nil || !rep.OK() {
		t.Fatalf("Verify after the race: %+v, %v", rep.FirstBreak, err)
	}
	return failedClosedN, true
}

// TestCheckReservesNothing runs two `warden check trade buy` of $500 under a
// $2,000 daily cap: a check is only a question, so both are allowed, each
// says the amount fits and that nothing was reserved, the ledger stays at $0,
// and a following `warden trade` of the whole $2,000 is allowed and executed.
func TestCheckReservesNothing(t *testing.T) {
	t.Parallel() // it waits on processes; it shares nothing with other tests
	home := initHome(t,
		[2]string{"safety.dailySpendCap", "2000"},
		[2]string{"safety.maxTransactionAmount", "2000"},
		[2]string{"sizing.fixedAmountUsd", "2000"},
	)
	for i := range 2 {
		out, err := wardenCmd(home, "check", "trade", "buy", "WETH", "--param", "chain=base", "--param", "amount_usd=500").Output()
		if err != nil {
			t.Fatalf("check %d: %v", i, err)
		}
		var d warden.Decision
		if err := json.Unmarshal(out, &d); err != nil {
			t.Fatalf("check %d printed %q: %v", i, out, err)
		}
		if d.Verdict != warden.Allow || !strings.Contains(d.Reason, "nothing was reserved") || !strings.Contains(d.Reason, "$500 fits the daily cap: $0 of $2000 spent") {
			t.Fatalf("check %d = %v (%s), want allow saying $500 fits and nothing was reserved", i, d.Verdict, d.Reason)
		}
	}
	spent := func() warden.USD {
		t.Helper()
		store, err := app.OpenStore(context.Background(), app.Home(home))
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		s, err := store.SpentSince(context.Background(), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := spent(); s != 0 {
		t.Fatalf("after two checks the ledger holds $%s, want $0", s)
	}
	out, err := wardenCmd(home, "trade", "buy", "WETH", "--param", "chain=base", "--param", "amount_usd=2000").Output()
	var ex finance.Execution
	if jerr := json.Unmarshal(out, &ex); err != nil || jerr != nil {
		t.Fatalf("trade of $2000: %v, %v\n%s", err, jerr, out)
	}
	if ex.Decision.Verdict != warden.Allow || ex.Fill == nil {
		t.Fatalf("trade of $2000 = %v by %s (%s), fill %v; want allowed and executed", ex.Decision.Verdict, ex.Decision.Rule, ex.Decision.Reason, ex.Fill)
	}
	if s := spent(); s != 2000*warden.MicrosPerDollar {
		t.Fatalf("after the trade the ledger holds $%s, want $2000", s)
	}
}

// A loaded outcome is what a warden process in a cap race ended with when
// the machine was too busy for it to finish as asked: fail-closed, or
// executed with its outcome row lost. Either keeps the cap exact.
type loadedOutcome int

const (
	notLoaded          loadedOutcome = iota
	failedClosed                     // nothing decided: a locked database
	unexecuted                       // allowed and recorded, but the backend did not execute it: its reservation given back
	executedUnrecorded               // executed, decision and debit recorded; the outcome row lost to the locked database
)

// loaded says whether a process that exited 1 (err, with stderr) ended so.
func loaded(err error, stderr string) loadedOutcome {
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		return notLoaded
	}
	switch {
	case strings.Contains(stderr, "the audit database is locked by another process"):
		return failedClosed
	case strings.Contains(stderr, "the paper backend did not execute it") && strings.Contains(stderr, "reservation was given back"):
		return unexecuted
	case strings.Contains(stderr, "executed (fill") && strings.Contains(stderr, "its outcome could not be recorded"):
		return executedUnrecorded
	}
	return notLoaded
}
