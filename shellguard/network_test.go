package shellguard

import (
	"context"
	"encoding/json"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/netguard"
)

// testRegistries are the package registries and code hosts the default
// policy allows (config.DefaultAllowedDomains, copied so that this package's
// tests do not depend on the policy file's package).
var testRegistries = []string{
	"registry.npmjs.org", "registry.yarnpkg.com", "proxy.golang.org", "sum.golang.org", "index.golang.org",
	"pypi.org", "files.pythonhosted.org", "crates.io", "index.crates.io", "static.crates.io",
	"repo.maven.apache.org", "repo1.maven.org", "plugins.gradle.org", "services.gradle.org", "rubygems.org",
	"index.rubygems.org", "github.com", "codeload.github.com", "objects.githubusercontent.com", "gitlab.com",
	"bitbucket.org",
}

// guardNetwork is Policy.Network backed by the real network guard with
// policy p, reached as package app reaches it: a URL as a fetch with its
// method, HOST:PORT as a connect. open turns "no rule names this host" into
// allow: every public host is reachable, while the addresses no rule can
// open and private ones stay denied.
func guardNetwork(p netguard.Policy, open bool) func(target, method string) warden.Decision {
	g, err := netguard.New(p)
	if err != nil {
		panic(err) // a test's policy does not compile
	}
	stage := netguard.Stage{Guard: g}
	return func(target, method string) warden.Decision {
		req := &warden.Request{Capability: warden.CapNetwork, Action: netguard.ActionConnect, Resource: target}
		if method != "" {
			m, _ := json.Marshal(method)
			req.Action, req.Params = netguard.ActionFetch, map[string]json.RawMessage{netguard.ParamMethod: m}
		}
		d, err := stage.Check(context.Background(), req)
		if err != nil {
			return warden.Denyf("network.internal", err.Error())
		}
		if open && d.Rule == "network.unknown_domain" {
			return warden.Allowf("network.open", target+" is a public host")
		}
		return d
	}
}

// defaultNetwork is the default network policy: the registries allowed,
// every other host asked about.
var defaultNetwork = guardNetwork(netguard.Policy{Allowed: testRegistries, AskUnknown: true}, false)

// devNetwork is the default network policy with a rule for the dev server
// the agent started (localhost:3000): a loopback address is private, so it
// needs allow_private as well as an allowed domain.
var devNetwork = guardNetwork(netguard.Policy{
	Allowed: append([]string{"localhost:3000"}, testRegistries...), AskUnknown: true, AllowPrivate: []string{"127.0.0.1"},
}, false)
