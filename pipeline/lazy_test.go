package pipeline

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentwarden/warden"
)

// A lazy capability's stages are built once, on its first request, and
// never for a request of another capability; concurrent first requests
// share the one build.
func TestLazyCapabilityIsBuiltOnceOnFirstUse(t *testing.T) {
	var shellBuilds, netBuilds atomic.Int32
	p := New(Config{
		Global: []warden.Stage{answer("g", warden.Allow)},
		Lazy: map[string]func() []warden.Stage{
			"shell":   func() []warden.Stage { shellBuilds.Add(1); return []warden.Stage{answer("sh", warden.Sandbox)} },
			"network": func() []warden.Stage { netBuilds.Add(1); return []warden.Stage{answer("net", warden.Ask)} },
		},
	})
	if shellBuilds.Load() != 0 || netBuilds.Load() != 0 {
		t.Fatalf("New built %d shell and %d network stage sets; want none before a request", shellBuilds.Load(), netBuilds.Load())
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if d := p.Decide(context.Background(), &warden.Request{Capability: "shell"}); d.Verdict != warden.Sandbox || d.Rule != "sh.rule" {
				t.Errorf("Decide(shell) = %v %s, want sandbox sh.rule", d.Verdict, d.Rule)
			}
		}()
	}
	wg.Wait()
	if shellBuilds.Load() != 1 || netBuilds.Load() != 0 {
		t.Fatalf("after shell requests: %d shell builds, %d network builds; want 1 and 0", shellBuilds.Load(), netBuilds.Load())
	}
	if d := p.Decide(context.Background(), &warden.Request{Capability: "network"}); d.Verdict != warden.Ask {
		t.Fatalf("Decide(network) = %v, want ask", d.Verdict)
	}
	if d := p.Decide(context.Background(), &warden.Request{Capability: "tool"}); d.Verdict != warden.Deny || d.Rule != "pipeline.no_policy" {
		t.Fatalf("Decide(tool) = %v %s, want deny pipeline.no_policy", d.Verdict, d.Rule)
	}
}

// A builder that panics or builds nothing leaves its capability denied, on
// every request, and the other capabilities unaffected.
func TestLazyBuildFailureDenies(t *testing.T) {
	p := New(Config{
		Global: []warden.Stage{answer("g", warden.Allow)},
		Lazy: map[string]func() []warden.Stage{
			"shell":      func() []warden.Stage { panic("policy exploded") },
			"filesystem": func() []warden.Stage { return nil },
			"tool":       func() []warden.Stage { return []warden.Stage{answer("t", warden.Allow)} },
		},
	})
	for range 2 {
		d := p.Decide(context.Background(), &warden.Request{Capability: "shell"})
		if d.Verdict != warden.Deny || d.Rule != "pipeline.stage_failed" || !strings.Contains(d.Reason, "policy exploded") {
			t.Fatalf("Decide(shell) with a panicking builder = %v %s %q; want deny pipeline.stage_failed naming the panic", d.Verdict, d.Rule, d.Reason)
		}
	}
	if d := p.Decide(context.Background(), &warden.Request{Capability: "filesystem"}); d.Verdict != warden.Deny || d.Rule != "pipeline.no_policy" {
		t.Fatalf("Decide(filesystem) with no stages = %v %s; want deny pipeline.no_policy", d.Verdict, d.Rule)
	}
	if d := p.Decide(context.Background(), &warden.Request{Capability: "tool"}); d.Verdict != warden.Allow {
		t.Fatalf("Decide(tool) = %v, want allow", d.Verdict)
	}
}
