package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// stageFunc is a func-field stage for tests.
type stageFunc struct {
	name  string
	check func(context.Context, *warden.Request) (warden.Decision, error)
}

func (s stageFunc) Name() string { return s.name }
func (s stageFunc) Check(ctx context.Context, r *warden.Request) (warden.Decision, error) {
	return s.check(ctx, r)
}

func answer(name string, v warden.Verdict) warden.Stage {
	return stageFunc{name, func(context.Context, *warden.Request) (warden.Decision, error) {
		return warden.Decision{Verdict: v, Rule: name + ".rule", Reason: name + " says " + v.String()}, nil
	}}
}

func TestPrecedence(t *testing.T) {
	A, S, Q, D := warden.Allow, warden.Sandbox, warden.Ask, warden.Deny
	cases := []struct {
		name     string
		verdicts []warden.Verdict
		want     warden.Verdict
		wantRule string
	}{
		{"all allow", []warden.Verdict{A, A, A}, A, "s2.rule"},
		{"sandbox beats allow", []warden.Verdict{A, S, A}, S, "s1.rule"},
		{"ask beats sandbox", []warden.Verdict{S, Q, A}, Q, "s1.rule"},
		{"deny beats ask", []warden.Verdict{Q, D, S}, D, "s1.rule"},
		{"first deny explains", []warden.Verdict{D, D}, D, "s0.rule"},
		{"deny last", []warden.Verdict{A, A, D}, D, "s2.rule"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stages []warden.Stage
			for i, v := range c.verdicts {
				stages = append(stages, answer("s"+string(rune('0'+i)), v))
			}
			p := New(Config{Capabilities: map[string][]warden.Stage{"tool": stages}})
			d := p.Decide(context.Background(), &warden.Request{Capability: "tool"})
			if d.Verdict != c.want || d.Rule != c.wantRule {
				t.Errorf("Decide = %v (%s), want %v (%s)", d.Verdict, d.Rule, c.want, c.wantRule)
			}
			if len(d.Stages) != len(c.verdicts) {
				t.Fatalf("recorded %d stage answers, want %d", len(d.Stages), len(c.verdicts))
			}
			for i, a := range d.Stages {
				if a.Verdict != c.verdicts[i] {
					t.Errorf("stage %d recorded %v, want %v", i, a.Verdict, c.verdicts[i])
				}
			}
		})
	}
}

func TestFailuresDeny(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	cases := []struct {
		name    string
		stage   warden.Stage
		wantErr string
	}{
		{"error", stageFunc{"err", func(context.Context, *warden.Request) (warden.Decision, error) {
			return warden.Allowf("x", "fine"), errors.New("database gone")
		}}, "database gone"},
		{"panic", stageFunc{"boom", func(context.Context, *warden.Request) (warden.Decision, error) {
			panic("nil map")
		}}, "panicked: nil map"},
		{"deadline", stageFunc{"slow", func(context.Context, *warden.Request) (warden.Decision, error) {
			<-block // ignores its context on purpose
			return warden.Allowf("x", "late"), nil
		}}, "did not answer within"},
		{"invalid verdict", stageFunc{"odd", func(context.Context, *warden.Request) (warden.Decision, error) {
			return warden.Decision{Verdict: warden.Verdict(9)}, nil
		}}, "invalid verdict"},
		{"nil stage", nil, "panicked"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := New(Config{
				Capabilities: map[string][]warden.Stage{"tool": {answer("ok", warden.Allow), c.stage}},
				StageTimeout: 50 * time.Millisecond,
			})
			d := p.Decide(context.Background(), &warden.Request{Capability: "tool"})
			if d.Verdict != warden.Deny {
				t.Fatalf("Decide = %v, want deny", d.Verdict)
			}
			if d.Rule != "pipeline.stage_failed" {
				t.Errorf("rule = %q, want pipeline.stage_failed", d.Rule)
			}
			got := d.Stages[1]
			if got.Verdict != warden.Deny || !strings.Contains(got.Error, c.wantErr) {
				t.Errorf("stage answer = %v %q, want deny with error containing %q", got.Verdict, got.Error, c.wantErr)
			}
		})
	}
}

func TestNoPolicy(t *testing.T) {
	p := New(Config{
		Global:       []warden.Stage{answer("g", warden.Allow)},
		Capabilities: map[string][]warden.Stage{"tool": {answer("t", warden.Allow)}},
	})
	for _, capability := range []string{"shell", "filesystem", "", "nonsense"} {
		t.Run(capability, func(t *testing.T) {
			d := p.Decide(context.Background(), &warden.Request{Capability: capability})
			if d.Verdict != warden.Deny || d.Rule != "pipeline.no_policy" {
				t.Fatalf("Decide(%q) = %v %s, want deny pipeline.no_policy", capability, d.Verdict, d.Rule)
			}
			if !strings.Contains(d.Reason, "no policy for capability") {
				t.Errorf("reason %q does not say there is no policy", d.Reason)
			}
		})
	}
}

func TestZeroPipelineDenies(t *testing.T) {
	var p *Pipeline
	if d := p.Decide(context.Background(), &warden.Request{Capability: "tool"}); d.Verdict != warden.Deny {
		t.Fatalf("nil pipeline: %v, want deny", d.Verdict)
	}
	if d := New(Config{}).Decide(context.Background(), &warden.Request{Capability: "tool"}); d.Verdict != warden.Deny {
		t.Fatalf("empty pipeline: %v, want deny", d.Verdict)
	}
}

func TestTierIsSetByPolicyNotCaller(t *testing.T) {
	var seen warden.Tier
	spy := stageFunc{"spy", func(_ context.Context, r *warden.Request) (warden.Decision, error) {
		seen = r.Tier
		return warden.Allowf("spy", "ok"), nil
	}}
	p := New(Config{
		Capabilities: map[string][]warden.Stage{"tool": {spy}},
		Tier:         func(*warden.Request) warden.Tier { return warden.TierManualOnly },
	})
	req := &warden.Request{Capability: "tool", Tier: warden.TierReadOnly}
	d := p.Decide(context.Background(), req)
	if seen != warden.TierManualOnly || d.Tier != warden.TierManualOnly {
		t.Fatalf("stage saw tier %v, decision tier %v; want 4 from the policy", seen, d.Tier)
	}
	// An unset tier from the resolver becomes the default.
	p = New(Config{Capabilities: map[string][]warden.Stage{"tool": {spy}}, Tier: func(*warden.Request) warden.Tier { return 0 }})
	if d := p.Decide(context.Background(), &warden.Request{Capability: "tool"}); d.Tier != warden.DefaultTier {
		t.Fatalf("unset tier resolved to %v, want %v", d.Tier, warden.DefaultTier)
	}
}

func TestManualOnlyPropagates(t *testing.T) {
	manual := stageFunc{"manual", func(context.Context, *warden.Request) (warden.Decision, error) {
		return warden.Decision{Verdict: warden.Ask, ManualOnly: true, Rule: "m", Reason: "human"}, nil
	}}
	p := New(Config{Capabilities: map[string][]warden.Stage{"tool": {manual, answer("a", warden.Allow)}}})
	if d := p.Decide(context.Background(), &warden.Request{Capability: "tool"}); !d.ManualOnly || d.Verdict != warden.Ask {
		t.Fatalf("Decide = %v manual_only=%v, want ask with manual_only", d.Verdict, d.ManualOnly)
	}
}

func BenchmarkDecide(b *testing.B) {
	stages := []warden.Stage{answer("a", warden.Allow), answer("b", warden.Allow), answer("c", warden.Allow), answer("d", warden.Allow), answer("e", warden.Allow)}
	p := New(Config{Global: stages, Capabilities: map[string][]warden.Stage{"tool": {answer("t", warden.Allow)}}})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p.Decide(ctx, &warden.Request{Capability: "tool"})
	}
}

func TestStuckStageDoesNotSkipLaterStages(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	stuck := stageFunc{"stuck", func(context.Context, *warden.Request) (warden.Decision, error) {
		<-block
		return warden.Allowf("x", "late"), nil
	}}
	p := New(Config{
		Capabilities: map[string][]warden.Stage{"tool": {stuck, answer("after", warden.Ask)}},
		StageTimeout: 20 * time.Millisecond,
	})
	d := p.Decide(context.Background(), &warden.Request{Capability: "tool"})
	if got := d.Stages[1]; got.Stage != "after" || got.Verdict != warden.Ask {
		t.Fatalf("stage after the stuck one recorded %+v, want after=ask", got)
	}
}

func TestCancelledRequestDenies(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	wait := stageFunc{"wait", func(ctx context.Context, _ *warden.Request) (warden.Decision, error) {
		<-ctx.Done()
		return warden.Allowf("x", "after cancel"), nil
	}}
	p := New(Config{Capabilities: map[string][]warden.Stage{"tool": {wait, wait}}})
	if d := p.Decide(ctx, &warden.Request{Capability: "tool"}); d.Verdict != warden.Deny {
		t.Fatalf("cancelled request: %v, want deny", d.Verdict)
	}
}

func TestNoSandboxTurnsSandboxIntoAsk(t *testing.T) {
	stages := map[string][]warden.Stage{"shell": {answer("guard", warden.Sandbox)}}
	d := New(Config{Capabilities: stages}).Decide(context.Background(), &warden.Request{Capability: "shell"})
	if d.Verdict != warden.Sandbox {
		t.Fatalf("with a sandbox: %v, want sandbox", d.Verdict)
	}
	d = New(Config{Capabilities: stages, NoSandbox: true}).Decide(context.Background(), &warden.Request{Capability: "shell"})
	if d.Verdict != warden.Ask || d.Rule != "pipeline.no_sandbox" {
		t.Fatalf("without a sandbox: %v %s, want ask pipeline.no_sandbox", d.Verdict, d.Rule)
	}
	both := map[string][]warden.Stage{"shell": {answer("guard", warden.Sandbox), answer("x", warden.Deny)}}
	if d := New(Config{Capabilities: both, NoSandbox: true}).Decide(context.Background(), &warden.Request{Capability: "shell"}); d.Verdict != warden.Deny {
		t.Fatalf("a deny stays a deny without a sandbox: %v", d.Verdict)
	}
}

func TestSpanAndSuggestionComeFromTheDecidingStage(t *testing.T) {
	span := &warden.Span{Start: 3, End: 9}
	deciding := stageFunc{"guard", func(context.Context, *warden.Request) (warden.Decision, error) {
		return warden.Decision{Verdict: warden.Deny, Rule: "g", Reason: "no", Span: span, Suggestion: "safer"}, nil
	}}
	other := stageFunc{"other", func(context.Context, *warden.Request) (warden.Decision, error) {
		return warden.Decision{Verdict: warden.Allow, Rule: "o", Reason: "fine", Span: &warden.Span{Start: 0, End: 1}, Suggestion: "x"}, nil
	}}
	d := New(Config{Capabilities: map[string][]warden.Stage{"shell": {other, deciding}}}).Decide(context.Background(), &warden.Request{Capability: "shell"})
	if d.Span != span || d.Suggestion != "safer" {
		t.Fatalf("span %v suggestion %q, want the deny stage's %v and \"safer\"", d.Span, d.Suggestion, span)
	}
}
