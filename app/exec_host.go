package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/sandbox"
)

// execOnHost runs a command whose ask a human answered "run on host"
// (gate.HostGranted): on the host, unconfined, as the host would run it,
// with the caller's environment (r.Env, else this process's) unscrubbed (an
// SSH agent, a gh login), in the project directory. It is bounded only by
// the wall-clock and output limits of the profile it would have run under.
// The outcome is audited like any run, with the isolation it really had:
// profile host, mode off. The human's answer was recorded as an escalation
// when it was given.
func (a *App) execOnHost(ctx context.Context, r ExecRequest, req *warden.Request, d warden.Decision, dir string) (ExecResult, error) {
	lim, err := a.hostLimits(r)
	if err != nil {
		_ = a.execOutcome(ctx, req, warden.SandboxHost, sandbox.Result{}, sandbox.Limits{}, err)
		return ExecResult{Decision: d, Profile: warden.SandboxHost}, err
	}
	env := r.Env
	if env == nil {
		env = os.Environ()
	}
	spec := sandbox.Spec{Mode: sandbox.ModeOff, Project: dir, PassEnv: envNames(env), Limits: lim}
	eng, err := a.Engine()
	if err != nil {
		return ExecResult{Decision: d, Profile: warden.SandboxHost}, err
	}
	if r.Stderr != nil {
		fmt.Fprintf(r.Stderr, "warden: a human answered approval %s \"run on host\": the command runs on the host, outside the sandbox\n", d.ApprovalID)
	}
	cmd := sandbox.Command{Args: r.Args, Dir: dir, Env: env, Stdin: r.Stdin, Stdout: r.Stdout, Stderr: r.Stderr}
	res, runErr := eng.Run(ctx, spec, cmd)
	out := ExecResult{Result: res, Decision: d, Profile: warden.SandboxHost, Limits: lim}
	if err := a.execOutcome(ctx, req, warden.SandboxHost, res, lim, runErr); err != nil && runErr == nil {
		return out, err
	}
	var execErr *sandbox.ExecError
	if runErr != nil && !errors.As(runErr, &execErr) {
		runErr = warden.Errorf(warden.EUnavailable, "the command could not be run on the host: %v", runErr).Wrap(runErr)
	}
	return out, runErr
}

// hostLimits are the limits a command run on the host keeps: the wall clock
// and the output cap of the profile it would have run under (the one asked
// for, else workspace), as the caller's flags change them.
func (a *App) hostLimits(r ExecRequest) (sandbox.Limits, error) {
	name := r.Profile
	if name == "" {
		name = config.ProfileWorkspace
	}
	prof, ok := a.Policy.Sandbox.Profiles[name]
	if !ok {
		return sandbox.Limits{}, warden.Errorf(warden.EInvalid, "there is no sandbox profile %q", name).
			WithHint("name a profile under sandbox.profiles in " + config.FileName)
	}
	lim := sandbox.Limits{Wall: prof.Timeout, Output: prof.OutputLimit}
	setIf(&lim.Wall, r.Override.Timeout)
	setIf(&lim.Output, r.Override.OutputLimit)
	return lim, nil
}

// envNames are the names of the variables in env, so that a run on the host
// keeps all of them (sandbox.ScrubEnv drops credentials it is not told to
// pass).
func envNames(env []string) []string {
	names := make([]string, 0, len(env))
	for _, kv := range env {
		if name, _, ok := strings.Cut(kv, "="); ok && name != "" {
			names = append(names, name)
		}
	}
	return names
}
