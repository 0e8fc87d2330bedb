package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/gate"
)

// bigPolicy adds rules filesystem and network rules to the policy file text
// data (as `warden init` writes it): half of each as allowed rules, half as
// denied ones. scripts/bench_policy.sh adds the same rules to a home it
// times the binary in.
func bigPolicy(data []byte, rules int) []byte {
	s := string(data)
	half := rules / 2
	var b strings.Builder
	for i := range half {
		fmt.Fprintf(&b, "    - path: \"~/projects/p%d/**\"\n      actions: [read, list]\n      level: auto\n", i)
	}
	s = strings.Replace(s, "  allowed_paths:\n", "  allowed_paths:\n"+b.String(), 1)
	list := func(format string, n int) string {
		items := make([]string, n)
		for i := range items {
			items[i] = fmt.Sprintf(format, i)
		}
		return strings.Join(items, ", ")
	}
	s = regexp.MustCompile(`(?m)^  denied_paths: \[`).ReplaceAllLiteralString(s, "  denied_paths: ["+list(`"~/private/d%d/**"`, rules-half)+", ")
	s = regexp.MustCompile(`(?m)^  allowed_domains: \[`).ReplaceAllLiteralString(s, "  allowed_domains: ["+list("api%d.example.com", half)+", ")
	s = regexp.MustCompile(`(?m)^  denied_domains: \[\]`).ReplaceAllLiteralString(s, "  denied_domains: ["+list(`"*.bad%d.example.net"`, rules-half)+"]")
	return []byte(s)
}

// userHomeWithRuleDirs sets $HOME to a fresh directory holding the
// directories bigPolicy's filesystem rules name, as in a real policy
// (compiling reads the directories that hold them).
func userHomeWithRuleDirs(b *testing.B, rules int) {
	b.Helper()
	u := b.TempDir()
	for i := range rules {
		dir := filepath.Join(u, "projects", fmt.Sprintf("p%d", i/2))
		if i%2 == 1 {
			dir = filepath.Join(u, "private", fmt.Sprintf("d%d", i/2))
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	b.Setenv("HOME", u)
}

// policyHome is a fresh home whose policy has rules more filesystem and
// network rules than the default (none: the default policy).
func policyHome(tb testing.TB, rules int) Home {
	tb.Helper()
	home := Home(filepath.Join(tb.TempDir(), "home"))
	if _, err := Init(context.Background(), home, false); err != nil {
		tb.Fatal(err)
	}
	if rules > 0 {
		data, err := os.ReadFile(home.PolicyPath())
		if err != nil {
			tb.Fatal(err)
		}
		big := bigPolicy(data, rules)
		if strings.Count(string(big), "~/projects/p") != rules/2 || strings.Count(string(big), ".bad") != rules-rules/2 {
			tb.Fatal("the default policy file no longer has the lines bigPolicy extends")
		}
		if err := os.WriteFile(home.PolicyPath(), big, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	return home
}

// oneShotRequests are the requests the policy-size benchmarks decide, one
// per capability whose rules grow.
func oneShotRequests(tb testing.TB) map[string]warden.Request {
	dir := tb.TempDir()
	file := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		tb.Fatal(err)
	}
	return map[string]warden.Request{
		"shell":      {Capability: warden.CapShell, Action: "exec", Resource: "ls", Cwd: dir},
		"network":    {Capability: warden.CapNetwork, Action: "fetch", Resource: "https://github.com/x"},
		"filesystem": {Capability: warden.CapFilesystem, Action: "read", Resource: file, Cwd: dir},
	}
}

// BenchmarkOneShotPolicySize is what a one-shot `warden check` does in
// process, with the default policy and with 1,000 filesystem and 1,000
// network rules more: load the policy (through its cache), build the gate,
// decide one shell, network or filesystem request, spool its audit row, close.
// The target (issue 26) is the second at most 1.2× the first. cpu-µs/op is
// the process's CPU time (user and system, the runtime's included) per
// decision, steadier than ns/op on a shared machine.
//
//	go test -run XXX -bench OneShotPolicySize -count 5 ./app/
func BenchmarkOneShotPolicySize(b *testing.B) {
	ctx := context.Background()
	reqs := oneShotRequests(b)
	userHomeWithRuleDirs(b, 2000)
	homes := map[int]Home{0: policyHome(b, 0), 2000: policyHome(b, 2000)}
	// The directories were just made. fsguard caches what it read of them
	// only once they have been still for a second (file times come from a
	// coarse clock); a real policy's are older.
	time.Sleep(1100 * time.Millisecond)
	for _, rules := range []int{0, 2000} {
		home := homes[rules]
		name := "default"
		if rules > 0 {
			name = fmt.Sprintf("rules=%d", rules)
		}
		for _, capability := range []string{"shell", "network", "filesystem"} {
			b.Run(name+"/"+capability, func(b *testing.B) {
				cpu0, n := cpuTime(), 0
				for b.Loop() {
					n++
					a, err := Open(ctx, home, Options{})
					if err != nil {
						b.Fatal(err)
					}
					req := reqs[capability]
					d, err := a.Gate.CheckWith(ctx, &req, gate.CheckOptions{DryRun: true})
					if err != nil || d.Verdict == warden.Deny {
						b.Fatalf("%s: %v %s (%s): %v", capability, d.Verdict, d.Reason, d.Rule, err)
					}
					if err := a.Close(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(n), "cpu-µs/op")
			})
		}
	}
}
