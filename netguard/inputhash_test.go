package netguard_test

import (
	"encoding/json"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/netguard"
)

// TestInputHashBindsTheDestination: an answer to a network ask covers the
// host and port, whatever the path, method, scheme or resolved addresses,
// and nothing else; requests that are not network requests, or whose
// destination cannot be read, keep the exact-input hash.
func TestInputHashBindsTheDestination(t *testing.T) {
	fetch := func(url string, params map[string]string) *warden.Request {
		r := &warden.Request{Capability: warden.CapNetwork, Action: netguard.ActionFetch, Resource: url, Params: map[string]json.RawMessage{}}
		for k, v := range params {
			r.Params[k] = json.RawMessage(v)
		}
		return r
	}
	base := netguard.InputHash(fetch("https://example.com/", nil))
	for _, same := range []*warden.Request{
		fetch("https://example.com/other/path?q=1", nil),
		fetch("https://EXAMPLE.com.:443/", map[string]string{netguard.ParamMethod: `"POST"`}),
		fetch("https://example.com/", map[string]string{netguard.ParamAddresses: `["93.184.216.34"]`}),
		fetch("wss://example.com/socket", nil),
		{Capability: warden.CapNetwork, Action: netguard.ActionConnect, Resource: "example.com:443"},
	} {
		if got := netguard.InputHash(same); got != base {
			t.Errorf("%s %s: hash %s, want the destination's %s", same.Action, same.Resource, got, base)
		}
	}
	for _, other := range []*warden.Request{
		fetch("https://example.org/", nil),
		fetch("https://example.com:8443/", nil),
		fetch("http://example.com/", nil), // port 80
		fetch("https://sub.example.com/", nil),
	} {
		if got := netguard.InputHash(other); got == base {
			t.Errorf("%s shares the hash of https://example.com/", other.Resource)
		}
	}
	for _, exact := range []*warden.Request{
		{Capability: warden.CapShell, Action: "exec", Resource: "curl https://example.com/"},
		fetch("ftp://example.com/", nil),
		{Capability: warden.CapNetwork, Action: "listen", Resource: "example.com:443"},
	} {
		if got, want := netguard.InputHash(exact), warden.InputHash(exact); got != want {
			t.Errorf("%s %s %s: hash %s, want the exact input's %s", exact.Capability, exact.Action, exact.Resource, got, want)
		}
	}
	if got := netguard.Destination(fetch("https://example.com/x", nil)); got != "connections to example.com:443" {
		t.Errorf("Destination = %q", got)
	}
	if got := netguard.Destination(&warden.Request{Capability: warden.CapShell, Resource: "ls"}); got != "" {
		t.Errorf("Destination of a shell request = %q, want none", got)
	}
}
