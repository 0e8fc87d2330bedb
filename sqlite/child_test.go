package sqlite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// runChild runs one child-process role against the database at path.
//
//	record:  record entries (some with debits, some in batches) until killed,
//	         printing each committed seq on its own line after the commit.
//	contend: make childDebits debit attempts against one cap, printing
//	         "ok <micros>" or "capped" for each.
func runChild(role, path string) error {
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		return err
	}
	defer s.Close()
	out := bufio.NewWriter(os.Stdout)
	switch role {
	case "record":
		for i := 0; ; i++ {
			if i%5 == 4 {
				batch := []*warden.AuditEntry{childEntry(i), childEntry(i), childEntry(i)}
				if err := s.RecordBatch(ctx, batch); err != nil {
					return err
				}
				for _, e := range batch {
					fmt.Fprintln(out, e.Seq)
				}
			} else {
				e := childEntry(i)
				var d *warden.Debit
				if i%2 == 0 {
					d = &warden.Debit{Amount: 1, Cap: 1 << 50, Since: time.Now().Add(-warden.SpendWindow)}
				}
				if err := s.Record(ctx, e, d); err != nil {
					return err
				}
				fmt.Fprintln(out, e.Seq)
			}
			// Printed only after Record returned: every printed seq was committed.
			if err := out.Flush(); err != nil {
				return err
			}
		}
	case "contend":
		for i := range childDebits {
			e := childEntry(i)
			amount := warden.USD(1 + i%7)
			err := s.Record(ctx, e, &warden.Debit{Amount: amount, Cap: childCap, Since: time.Now().Add(-time.Hour)})
			var capErr *warden.CapExceededError
			switch {
			case err == nil:
				fmt.Fprintln(out, "ok", int64(amount))
			case errors.As(err, &capErr):
				fmt.Fprintln(out, "capped")
			default:
				return err
			}
		}
		return out.Flush()
	}
	return fmt.Errorf("unknown role %q", role)
}

const (
	childDebits = 200
	childCap    = warden.USD(1500) // about half of what 4 children ask for
)

func childEntry(i int) *warden.AuditEntry {
	return &warden.AuditEntry{
		TraceID: fmt.Sprintf("child-%d-%d", os.Getpid(), i), Capability: warden.CapTrade, Action: "swap", Resource: "SOL",
		Verdict: warden.Allow, Reason: "within limits", Rule: "finance.ok",
		Stages: []warden.StageAnswer{
			{Stage: "position-sizing", Verdict: warden.Allow, Rule: "sizing.ok", Reason: "fits"},
			{Stage: "exposure", Verdict: warden.Allow, Rule: "exposure.ok", Reason: "fits"},
		},
	}
}

// startChild starts the test binary in role against path, with its stdout
// piped back.
func startChild(t *testing.T, role, path string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$", path)
	cmd.Env = append(os.Environ(), childEnv+"="+role)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewScanner(stdout)
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Errorf("child printed %q: %v", s, err) // not Fatal: called from reader goroutines
	}
	return n
}
