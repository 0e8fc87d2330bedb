package app

import (
	"os"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/netguard"
	"github.com/agentwarden/warden/sandbox"
)

// TestWorldEgressFollowsThePolicyFile: the egress proxy a long-lived
// sandbox's supervisor serves judges each connection under the policy file
// as it is now, not as it was when the supervisor opened the home: a domain
// allowed since goes through, one taken out since is asked about again, and
// a file that no longer loads keeps the last good rules.
func TestWorldEgressFollowsThePolicyFile(t *testing.T) {
	a := openTestApp(t)
	eg, err := a.worldEgress(sandbox.Info{Name: "session-x", Spec: sandbox.Spec{Session: "s1"}})
	if err != nil {
		t.Fatal(err)
	}
	proxy := eg.(*sandboxEgress).Proxy
	query := func(host string) warden.Verdict {
		return proxy.Guard.Decide(netguard.Query{Target: netguard.Target{Scheme: "https", Host: host, Port: 443}, Method: "GET"}).Verdict
	}
	if v := query("example.org"); v == warden.Allow {
		t.Fatalf("example.org before any rule names it: %v; want it not allowed", v)
	}
	if v := query("github.com"); v != warden.Allow {
		t.Fatalf("github.com under the default policy: %v; want allow", v)
	}
	path := a.Home.PolicyPath()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "allowed_domains: [registry.npmjs.org,", "allowed_domains: [example.org, registry.npmjs.org,", 1)
	edited = strings.Replace(edited, " github.com,", "", 1)
	if edited == string(data) {
		t.Fatal("the default policy's allowed_domains line changed; update the test")
	}
	if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if v := query("example.org"); v != warden.Allow {
		t.Errorf("example.org once the file allows it: %v; want allow", v)
	}
	if v := query("github.com"); v == warden.Allow {
		t.Errorf("github.com once the file no longer names it: %v; want it not allowed", v)
	}
	if err := os.WriteFile(path, []byte("network: [unterminated\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if v := query("example.org"); v != warden.Allow {
		t.Errorf("example.org after the file stopped loading: %v; want the last good rules (allow)", v)
	}
}
