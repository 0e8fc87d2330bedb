package app

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/gate"
)

// TestOneShotNetworkChecksSeeAnEditedPolicy runs one-shot network checks
// (open the home, decide, close) through the network guard's compiled-rules
// cache while the policy's domain rules are edited between them: each check
// decides by the policy as it is then, whether its process compiled the
// rules or read those a process before it cached, and a check on an
// unchanged policy reads the cache rather than compiling again.
func TestOneShotNetworkChecksSeeAnEditedPolicy(t *testing.T) {
	ctx := context.Background()
	t.Setenv("HOME", t.TempDir())
	home := policyHome(t, 20) // api0-9.example.com allowed, *.bad0-9.example.net denied
	check := func(url string) warden.Decision {
		t.Helper()
		a, err := Open(ctx, home, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		req := warden.Request{Capability: warden.CapNetwork, Action: "fetch", Resource: url}
		d, err := a.Gate.CheckWith(ctx, &req, gate.CheckOptions{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	inode := func() uint64 {
		t.Helper()
		fi, err := os.Stat(home.NetguardCachePath())
		if err != nil {
			t.Fatalf("the compiled-rules cache: %v", err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	editPolicy := func(old, new string) {
		t.Helper()
		data, err := os.ReadFile(home.PolicyPath())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), old) {
			t.Fatalf("the policy file has no %q", old)
		}
		if err := os.WriteFile(home.PolicyPath(), []byte(strings.Replace(string(data), old, new, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want := func(d warden.Decision, v warden.Verdict, rule, reason string) {
		t.Helper()
		if d.Verdict != v || d.Rule != rule || !strings.Contains(d.Reason, reason) {
			t.Fatalf("%v %s (%s); want %v by %s naming %q", d.Verdict, d.Reason, d.Rule, v, rule, reason)
		}
	}

	want(check("https://api3.example.com/x"), warden.Allow, "network.allowed_domain", `"api3.example.com"`)
	first := inode()
	want(check("https://api3.example.com/x"), warden.Allow, "network.allowed_domain", `"api3.example.com"`)
	if inode() != first {
		t.Fatal("a check on the same policy compiled the rules again instead of reading the cache")
	}
	want(check("https://x.bad4.example.net/"), warden.Deny, "network.denied_domain", `"*.bad4.example.net"`)

	// Deny an allowed host: the next check denies it, and so does the one
	// after it, which reads what the first one cached.
	editPolicy(`denied_domains: [`, `denied_domains: ["api3.example.com", `)
	for range 2 {
		want(check("https://api3.example.com/x"), warden.Deny, "network.denied_domain", `"api3.example.com"`)
	}
	// Respell a rule so that it compiles to the same host: the reason names
	// the rule as it is written now.
	editPolicy(`api3.example.com", `, `API3.Example.com", `)
	for range 2 {
		want(check("https://api3.example.com/x"), warden.Deny, "network.denied_domain", `"API3.Example.com"`)
	}
	// Drop a denied wildcard: its hosts are no longer denied by it.
	editPolicy(`"*.bad4.example.net", `, ``)
	for range 2 {
		if d := check("https://x.bad4.example.net/"); d.Rule == "network.denied_domain" {
			t.Fatalf("a removed deny rule still decides: %s", d.Reason)
		}
	}
}
