// Command recordonce opens an audit database, records one decision durably and
// exits: the store's share of a `warden check` process. It exists to measure
// that share from exec to exit, e.g. against a hello-world binary:
//
//	go build -o /tmp/recordonce ./sqlite/internal/recordonce
//	hyperfine -N --warmup 20 '/tmp/recordonce /work/bench/warden.db'
//
// Put the database on the disk warden will use (not a tmpfs).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/sqlite"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: recordonce DB")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "recordonce:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	e := &warden.AuditEntry{
		TraceID: "0190f3a4-7b1e-7c3d-9a2b-5e6f7a8b9c0d", Capability: warden.CapShell, Action: "exec",
		Resource: "go test ./...", Tool: "Bash", Tier: warden.TierConfirmOnce,
		Args:        json.RawMessage(`{"command":"go test ./...","timeout":120000}`),
		RequestedBy: "agent", Session: "8f2c1e", Host: "claude",
		Verdict: warden.Allow, Reason: "go test is allowed in the project", Rule: "shell.allowlist",
		Duration: 412 * time.Microsecond,
		Stages: []warden.StageAnswer{
			{Stage: "killswitch", Verdict: warden.Allow, Rule: "safety.kill_switch_off", Reason: "kill switch is off"},
			{Stage: "tier", Verdict: warden.Allow, Rule: "tier.granted", Reason: "tier 2 granted for this session"},
			{Stage: "shellguard", Verdict: warden.Allow, Rule: "shell.allowlist", Reason: "go test is allowed in the project"},
		},
	}
	if err := s.Record(ctx, e, nil); err != nil {
		s.Close()
		return err
	}
	return s.Close()
}
