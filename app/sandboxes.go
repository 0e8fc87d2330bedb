package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/sandbox"
)

// RunDir is where long-lived sandboxes keep their state, inside warden's
// home (so denied to agents and hidden inside every sandbox).
const RunDir = "run"

// Engine is the sandbox engine the policy names (sandbox.engine): auto and
// native are the native engine; docker is refused until it exists.
func (a *App) Engine() (sandbox.Engine, error) {
	switch a.Policy.Sandbox.Engine {
	case "", "auto", "native":
		return a.Sandboxes(), nil
	}
	return nil, warden.Errorf(warden.EUnavailable, "the %s sandbox engine is not available yet", a.Policy.Sandbox.Engine).
		WithHint("set sandbox.engine to auto or native in " + config.FileName)
}

// Sandboxes is the native engine's manager of the home's long-lived
// sandboxes. Each lifecycle transition is audited as a sandbox_lifecycle
// security event.
func (a *App) Sandboxes() *sandbox.Manager {
	home := a.Home.Abs()
	return &sandbox.Manager{
		Dir:    filepath.Join(home, RunDir),
		Native: sandbox.Native{GitGuard: a.gitGuard},
		Egress: a.worldEgress,
		Self:   a.Supervises,
		Supervisor: func(name string) *exec.Cmd {
			exe, err := os.Executable()
			if err != nil {
				exe = "/proc/self/exe"
			}
			return exec.Command(exe, "--home", home, "sandbox", "supervise", name)
		},
		Emit: func(ev sandbox.Event) {
			sev := warden.SevInfo
			if ev.To == sandbox.StateDegraded || ev.To == sandbox.StateRecovering {
				sev = warden.SevWarn
			}
			meta, _ := json.Marshal(map[string]any{"sandbox": ev.Name, "from": ev.From.String(), "to": ev.To.String(), "reason": ev.Reason})
			e := &warden.SecurityEvent{ID: NewID(), CreatedAt: ev.Time, Type: warden.EventSandboxLifecycle, Severity: sev}
			if err := appendEvent(context.Background(), a.Store, e, fmt.Sprintf("sandbox %s: %s -> %s: %s", ev.Name, ev.From, ev.To, ev.Reason), meta); err != nil {
				a.Log.Warn("could not audit a sandbox lifecycle event", "sandbox", ev.Name, "err", warden.UserMessage(err))
			}
		},
	}
}

// SandboxStart starts long-lived sandbox name under a profile (default
// "default"), with overrides, around the project dir ("" = the current
// directory).
func (a *App) SandboxStart(ctx context.Context, name, profile, dir string, o ExecOverride) (sandbox.Info, error) {
	if profile == "" {
		profile = config.ProfileDefault
	}
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return sandbox.Info{}, warden.Errorf(warden.EInvalid, "find the current directory").Wrap(err)
		}
	}
	// The run directory exists before the spec lists warden's home for
	// masking, so the sandbox's own control socket is masked in it too.
	if err := os.MkdirAll(filepath.Join(a.Home.Abs(), RunDir), 0o700); err != nil {
		return sandbox.Info{}, warden.Errorf(warden.EInvalid, "create %s", RunDir).Wrap(err)
	}
	spec, err := a.sandboxSpec(profile, dir, o, nil, nil)
	if c, ok := spec.Egress.(io.Closer); ok {
		defer c.Close() // the manager refuses network proxy; nothing may be left behind
	}
	if err != nil {
		return sandbox.Info{}, err
	}
	eng, err := a.Engine()
	if err != nil {
		return sandbox.Info{}, err
	}
	info, err := eng.Start(ctx, name, profile, spec)
	return info, SandboxError(err)
}

// SandboxExec decides a command through the gate, exactly as Exec does, and
// runs it in long-lived sandbox name. A command the gate sends to a sandbox
// profile other than the one the sandbox runs is refused: it would run with
// other isolation than the policy asks for.
func (a *App) SandboxExec(ctx context.Context, name string, r ExecRequest) (ExecResult, error) {
	m, err := a.Engine()
	if err != nil {
		return ExecResult{}, err
	}
	info, err := m.Status(name)
	if err != nil {
		return ExecResult{}, SandboxError(err)
	}
	if r.Dir == "" {
		r.Dir = info.Spec.Project
	}
	req, d, _, err := a.decideExec(ctx, r)
	if err != nil {
		return ExecResult{Decision: d}, err
	}
	if d.Verdict == warden.Sandbox && d.Sandbox != "" && d.Sandbox != info.Profile {
		refused := warden.Denyf("sandbox.profile_mismatch", fmt.Sprintf("the policy runs this command under sandbox profile %s, and sandbox %s runs profile %s; run it with `warden exec --profile %s`, or in a sandbox started with that profile", d.Sandbox, name, info.Profile, d.Sandbox))
		err := &Refused{Decision: refused}
		_ = a.execOutcome(ctx, &req, info.Profile, sandbox.Result{}, sandbox.Limits{}, err)
		return ExecResult{Decision: d, Profile: info.Profile}, err
	}
	var lim sandbox.Limits
	setIf(&lim.Wall, r.Override.Timeout)
	setIf(&lim.Output, r.Override.OutputLimit)
	res, runErr := m.Exec(ctx, name, sandbox.Command{
		Args: r.Args, Dir: r.Dir, Env: os.Environ(), Stdin: r.Stdin, Stdout: r.Stdout, Stderr: r.Stderr,
	}, lim)
	limits := info.Spec.Limits
	if lim.Wall > 0 {
		limits.Wall = lim.Wall
	}
	if lim.Output > 0 {
		limits.Output = lim.Output
	}
	out := ExecResult{Result: res, Decision: d, Profile: info.Profile, Limits: limits}
	if err := a.execOutcome(ctx, &req, info.Profile, res, limits, runErr); err != nil && runErr == nil {
		return out, err
	}
	return out, SandboxError(runErr)
}

// SandboxError gives an engine error a code and a user message; an
// ExecError (command not found…) passes through for its exit status.
func SandboxError(err error) error {
	var execErr *sandbox.ExecError
	var werr *warden.Error
	switch {
	case err == nil, errors.As(err, &execErr), errors.As(err, &werr):
		return err
	case errors.Is(err, os.ErrNotExist):
		return warden.Errorf(warden.ENotFound, "%v", err).WithHint("see `warden sandbox status` for the sandboxes there are, or start one with `warden sandbox start NAME`").Wrap(err)
	}
	return warden.Errorf(warden.EUnavailable, "%v", err).Wrap(err)
}

// SandboxCaps is what isolation this host can offer, by engine and mode.
type SandboxCaps struct {
	Engines []EngineCaps `json:"engines"`
	Auto    string       `json:"auto"` // the engine sandbox.engine auto picks
}

// EngineCaps is one engine's availability and its modes.
type EngineCaps struct {
	Engine string     `json:"engine"`
	Status string     `json:"status"`
	Modes  []ModeCaps `json:"modes,omitempty"`
}

// ModeCaps says whether a mode runs here with everything it promises.
type ModeCaps struct {
	Mode   sandbox.Mode `json:"mode"`
	Status string       `json:"status"`
}

// SandboxCapabilities reports what a host with platform p can offer.
func SandboxCapabilities(p sandbox.Platform) SandboxCaps {
	native := EngineCaps{Engine: "native", Status: "available"}
	if !slices.Contains(p.Modes, sandbox.ModeLight) {
		native.Status = "unavailable: " + p.Missing(sandbox.ModeLight)
	}
	for _, m := range []sandbox.Mode{sandbox.ModeLight, sandbox.ModeStandard, sandbox.ModeMax} {
		st := "full isolation"
		if m == sandbox.ModeLight {
			st = "Landlock, seccomp and rlimits without namespaces: host processes stay visible, and denied paths inside readable directories cannot be masked (it refuses instead)"
		}
		switch miss := p.Missing(m); {
		case !slices.Contains(p.Modes, m) && slices.Contains(p.Modes, sandbox.ModeLight):
			st = "runs as light mode, with a warning (--strict refuses): lacks " + miss
		case !slices.Contains(p.Modes, m):
			st = "unavailable: lacks " + miss
		case miss != "":
			st = "runs with less: " + miss
		}
		native.Modes = append(native.Modes, ModeCaps{Mode: m, Status: st})
	}
	docker := EngineCaps{Engine: "docker", Status: "not available: warden has no docker engine yet"}
	return SandboxCaps{Engines: []EngineCaps{native, docker}, Auto: "native"}
}
