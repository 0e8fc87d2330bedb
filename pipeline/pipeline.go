// Package pipeline runs a request through the ordered safety stages and combines
// their answers by precedence (deny > ask > sandbox > allow). Every stage's answer
// is recorded. A stage that errors, panics or outlives its deadline denies.
//
// The zero Pipeline has no stages and denies every request.
package pipeline

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agentwarden/warden"
)

// DefaultStageTimeout bounds one stage's Check when New is given no timeout.
const DefaultStageTimeout = 2 * time.Second

// TierFunc resolves the permission tier of a request from the policy.
type TierFunc func(*warden.Request) warden.Tier

// Pipeline is an ordered set of stages: the global ones for every request, then
// the capability's own. It is safe for concurrent use once built.
type Pipeline struct {
	global       []warden.Stage
	capabilities map[string][]warden.Stage
	lazy         map[string]*lazyStages
	tier         TierFunc
	timeout      time.Duration
	noSandbox    bool
}

// Config lists what a Pipeline is built from.
type Config struct {
	// Global stages run first, in order, for every request.
	Global []warden.Stage
	// Capabilities maps a capability name to its own stages. A capability that is
	// missing or has no stages is denied: "no policy for capability X".
	Capabilities map[string][]warden.Stage
	// Lazy maps a capability to a function that builds its stages, called
	// once, on the first request for that capability: a process that decides
	// one request compiles only the policy that request needs. A capability in
	// both maps uses Capabilities. A builder that panics, or returns no
	// stages, leaves its capability denied (the panic is each decision's
	// reason).
	Lazy map[string]func() []warden.Stage
	// Tier resolves a request's tier; nil gives every request warden.DefaultTier.
	Tier TierFunc
	// StageTimeout bounds each stage; zero means DefaultStageTimeout.
	StageTimeout time.Duration
	// NoSandbox says no sandbox can run (sandbox.mode off): a sandbox verdict
	// then becomes ask, since the isolation it needs is not there.
	NoSandbox bool
}

// New builds a pipeline.
func New(c Config) *Pipeline {
	p := &Pipeline{global: c.Global, capabilities: c.Capabilities, tier: c.Tier, timeout: c.StageTimeout, noSandbox: c.NoSandbox}
	for name, build := range c.Lazy {
		if p.lazy == nil {
			p.lazy = make(map[string]*lazyStages, len(c.Lazy))
		}
		p.lazy[name] = &lazyStages{build: build}
	}
	if p.timeout <= 0 {
		p.timeout = DefaultStageTimeout
	}
	return p
}

// Decide runs every stage on req and returns the combined decision. It sets
// req.Tier from the policy first; a tier the caller put there is overwritten.
// Decide never returns an allow it could not justify: with no stages, or when
// the capability has no policy, the answer is deny.
func (p *Pipeline) Decide(ctx context.Context, req *warden.Request) warden.Decision {
	req.Tier = warden.DefaultTier
	if p != nil && p.tier != nil {
		req.Tier = p.tier(req).OrDefault()
	}
	var stages []warden.Stage
	if p != nil {
		stages = append(stages, p.global...)
		capStages, ok := p.capabilities[req.Capability]
		if l := p.lazy[req.Capability]; !ok && l != nil {
			capStages = l.get()
		}
		if len(capStages) == 0 {
			capStages = []warden.Stage{noPolicy{}}
		}
		stages = append(stages, capStages...)
	} else {
		stages = []warden.Stage{noPolicy{}}
	}

	timeout := DefaultStageTimeout
	if p != nil {
		timeout = p.timeout
	}
	d := warden.Decision{Tier: req.Tier, TraceID: req.TraceID}
	decisions := make([]warden.Decision, len(stages))
	d.Stages = runAll(ctx, stages, req, timeout, decisions)
	combine(&d, decisions)
	if d.Verdict == warden.Sandbox && p != nil && p.noSandbox {
		d.Verdict, d.Rule = warden.Ask, "pipeline.no_sandbox"
		d.Reason += " (no sandbox is available, sandbox.mode is off, so a human must confirm instead)"
	}
	return d
}

// combine sets the verdict to the strongest stage verdict. The reason and rule
// come from the first stage that gave it, except for allow, where the last
// stage (the capability's own) explains best why the action is fine.
func combine(d *warden.Decision, ds []warden.Decision) {
	verdicts := make([]warden.Verdict, len(ds))
	for i := range ds {
		verdicts[i] = ds[i].Verdict
		if ds[i].ManualOnly {
			d.ManualOnly = true
		}
	}
	d.Verdict = warden.Strongest(verdicts...)
	pick := -1
	for i := range ds {
		if ds[i].Verdict == d.Verdict {
			pick = i
			if d.Verdict != warden.Allow {
				break
			}
		}
	}
	if pick < 0 { // no stages at all
		d.Verdict, d.Rule, d.Reason = warden.Deny, "pipeline.empty", "no stage decided this request"
		return
	}
	d.Reason, d.Rule = ds[pick].Reason, ds[pick].Rule
	d.Span, d.Suggestion = ds[pick].Span, ds[pick].Suggestion
	// A sandbox profile or rewrite a stage asked for is kept whatever the verdict
	// (an approved ask still runs isolated). With one profile-giving stage per
	// capability today, the first one is it; ranking profiles by strength comes
	// with the sandbox engine.
	for i := range ds {
		if ds[i].Sandbox != "" && d.Sandbox == "" {
			d.Sandbox = ds[i].Sandbox
		}
		if ds[i].Rewrite != "" && d.Rewrite == "" {
			d.Rewrite = ds[i].Rewrite
		}
		d.GitConfig = d.GitConfig || ds[i].GitConfig
		d.GitWorktrees = d.GitWorktrees || ds[i].GitWorktrees
		for _, w := range ds[i].RemovedWorktrees {
			if !slices.Contains(d.RemovedWorktrees, w) {
				d.RemovedWorktrees = append(d.RemovedWorktrees, w)
			}
		}
		for _, w := range ds[i].Worktrees {
			if !slices.Contains(d.Worktrees, w) {
				d.Worktrees = append(d.Worktrees, w)
			}
		}
		for _, n := range ds[i].EnvUnset {
			if !slices.Contains(d.EnvUnset, n) {
				d.EnvUnset = append(d.EnvUnset, n)
			}
		}
		// The work trees to save before the command runs, whatever the
		// verdict: an approved ask that discards work saves it too.
		for _, t := range ds[i].Snapshot {
			if !slices.Contains(d.Snapshot, t) {
				d.Snapshot = append(d.Snapshot, t)
			}
		}
	}
}

// outcome is what one stage returned, or why it could not answer.
type outcome struct {
	i     int
	d     warden.Decision
	err   error
	dur   time.Duration
	stuck bool // the worker may still be inside this stage
}

// runAll runs the stages in order on one worker goroutine while this goroutine
// times each stage. A stage that overruns its deadline is recorded as a deny and
// abandoned (its context is cancelled); the remaining stages continue on a fresh
// worker, so one stuck stage cannot hold up or skip the others.
func runAll(ctx context.Context, stages []warden.Stage, req *warden.Request, timeout time.Duration, ds []warden.Decision) []warden.StageAnswer {
	answers := make([]warden.StageAnswer, len(stages))
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for next := 0; next < len(stages); {
		// The worker's context ends when no stage it still has could be on time.
		wctx, cancel := context.WithTimeout(ctx, timeout*time.Duration(len(stages)-next))
		ch := make(chan outcome, len(stages)-next)
		go work(wctx, stages, next, req, ch)
		for next < len(stages) {
			resetTimer(timer, timeout)
			var o outcome
			select {
			case o = <-ch:
			case <-ctx.Done():
				o = outcome{i: next, err: fmt.Errorf("request cancelled: %w", ctx.Err()), dur: timeout, stuck: true}
			case <-timer.C:
				o = outcome{i: next, err: fmt.Errorf("stage did not answer within %v", timeout), dur: timeout, stuck: true}
			}
			ds[o.i], answers[o.i] = record(stages[o.i], o)
			next++
			if o.stuck {
				break // start a fresh worker for the stages after the stuck one
			}
		}
		cancel()
	}
	return answers
}

func resetTimer(t *time.Timer, d time.Duration) {
	t.Stop()
	select {
	case <-t.C:
	default:
	}
	t.Reset(d)
}

// work runs stages[from:] in order and sends each outcome; it stops early once
// ctx is cancelled, because nobody reads its answers any more.
func work(ctx context.Context, stages []warden.Stage, from int, req *warden.Request, ch chan<- outcome) {
	for i := from; i < len(stages); i++ {
		if ctx.Err() != nil {
			return
		}
		start := time.Now()
		d, err := check(ctx, stages[i], req)
		if err == nil && ctx.Err() != nil {
			err = fmt.Errorf("stage answered after its request was cancelled: %w", ctx.Err())
		}
		ch <- outcome{i: i, d: d, err: err, dur: time.Since(start)}
	}
}

// check calls one stage, turning a panic into an error.
func check(ctx context.Context, s warden.Stage, req *warden.Request) (d warden.Decision, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = warden.Decision{}, fmt.Errorf("stage panicked: %v", r)
		}
	}()
	return s.Check(ctx, req)
}

// record turns an outcome into the stage's decision and its audit answer. An
// error or an invalid verdict becomes a deny with the cause recorded.
func record(s warden.Stage, o outcome) (warden.Decision, warden.StageAnswer) {
	name := stageName(s)
	ans := warden.StageAnswer{Stage: name, Duration: o.dur}
	if o.err == nil && !validVerdict(o.d.Verdict) {
		o.err = fmt.Errorf("stage returned an invalid verdict %d", uint8(o.d.Verdict))
	}
	if o.err != nil {
		d := warden.Denyf("pipeline.stage_failed", fmt.Sprintf("the %s check could not decide, so the request is denied: %v", name, o.err))
		ans.Verdict, ans.Reason, ans.Rule, ans.Error = d.Verdict, d.Reason, d.Rule, o.err.Error()
		return d, ans
	}
	if o.d.Rule == "" {
		o.d.Rule = name
	}
	ans.Verdict, ans.Reason, ans.Rule = o.d.Verdict, o.d.Reason, o.d.Rule
	return o.d, ans
}

func validVerdict(v warden.Verdict) bool {
	switch v {
	case warden.Allow, warden.Sandbox, warden.Ask, warden.Deny:
		return true
	}
	return false
}

// stageName returns s.Name(), surviving a Name that panics.
func stageName(s warden.Stage) (name string) {
	defer func() {
		if recover() != nil {
			name = fmt.Sprintf("%T", s)
		}
	}()
	if s == nil {
		return "<nil stage>"
	}
	return s.Name()
}

// lazyStages builds a capability's stages on first use.
type lazyStages struct {
	once   sync.Once
	build  func() []warden.Stage
	stages []warden.Stage
}

func (l *lazyStages) get() []warden.Stage {
	l.once.Do(func() {
		defer func() {
			if r := recover(); r != nil {
				l.stages = []warden.Stage{failedBuild{fmt.Errorf("building the capability's stages panicked: %v", r)}}
			}
		}()
		l.stages = l.build()
	})
	return l.stages
}

// failedBuild stands for the stages of a capability whose builder panicked:
// it fails every request, which the pipeline records as a deny.
type failedBuild struct{ err error }

func (failedBuild) Name() string { return "capability" }

func (f failedBuild) Check(context.Context, *warden.Request) (warden.Decision, error) {
	return warden.Decision{}, f.err
}

// noPolicy denies a request whose capability has no stages.
type noPolicy struct{}

func (noPolicy) Name() string { return "capability" }

func (noPolicy) Check(_ context.Context, req *warden.Request) (warden.Decision, error) {
	c := req.Capability
	if c == "" {
		c = "(none)"
	}
	return warden.Denyf("pipeline.no_policy", fmt.Sprintf("no policy for capability %s: warden denies what it has no rules for", c)), nil
}
