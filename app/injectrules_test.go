package app

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
)

// TestPolicyRulesFileReachesTheScanners: inject.rulesFile is what the hooks
// scan with, and warden mcp refuses to start on a rules file it cannot use
// rather than proxy unscanned.
func TestPolicyRulesFileReachesTheScanners(t *testing.T) {
	a := openTestApp(t)
	rules := filepath.Join(t.TempDir(), "rules.yaml")
	a.Policy.Inject.RulesFile = rules
	if got := (hookGate{a.Gate, a}).ScanRules(); got != rules {
		t.Errorf("the hooks scan with %q, want the policy's %q", got, rules)
	}
	err := a.RunMCP(context.Background(), MCPOptions{Name: "fs", Command: []string{"true"}, NoSandbox: true}, strings.NewReader(""), io.Discard, io.Discard)
	if warden.ErrorCodeOf(err) != warden.EInvalid || !strings.Contains(err.Error(), "inject.rulesFile") {
		t.Errorf("warden mcp with a missing rules file: %v; want it refused naming inject.rulesFile", err)
	}
	if err := os.WriteFile(rules, []byte("version: 1\nrules:\n  - id: custom.bad\n    category: nope\n    score: 0.9\n    pattern: 'x'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := a.RunMCP(context.Background(), MCPOptions{Name: "fs", Command: []string{"true"}, NoSandbox: true}, strings.NewReader(""), io.Discard, io.Discard); warden.ErrorCodeOf(err) != warden.EInvalid {
		t.Errorf("warden mcp with an invalid rule: %v; want it refused", err)
	}
}
