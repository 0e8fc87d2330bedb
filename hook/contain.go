package hook

import (
	"encoding/json"

	"github.com/agentwarden/warden"
)

// Profiles a shell call is contained in, by verdict. A decision that names
// its own profile (Decision.Sandbox) keeps it.
const (
	profileAllowed   = "workspace"
	profileSandboxed = "guard"
	// ProfileHost in a decision's Sandbox means the user's policy runs this
	// command on the host (shell.host): it is not wrapped.
	ProfileHost = warden.SandboxHost
)

// ruleOnceGrant is the rule of a decision an approve-once grant settled
// (gate's "grant." + warden.GrantOnce).
const ruleOnceGrant = "grant.once"

// placement is where a shell call the gate allowed or sandboxed runs.
type placement int

const (
	// placeAsk: no sandbox can run here, so a human is asked first.
	placeAsk placement = iota
	// placeHost: as the host would run it, unwrapped (the user's rule).
	placeHost
	// placeContained: wrapped in warden exec; input holds the new input.
	placeContained
)

// contain decides where a shell call with an allow or sandbox verdict
// runs, and for a contained call returns the tool input with the command
// wrapped in warden exec under the verdict's profile. Every allowed command
// runs in the workspace sandbox, every sandboxed one in the guard sandbox;
// only a rule the user wrote (ProfileHost, or a policy that runs commands on
// the host where no sandbox can) leaves one on the host. Where no sandbox
// can run, the call is asked about.
//
// A command whose decision names work to save first (Decision.Snapshot)
// runs only in warden exec, which saves it: where it would run on the host
// instead, it is asked about.
func contain(dec warden.Decision, call toolCall, runner FindRunner) (placement, json.RawMessage, error) {
	onHost := placeHost
	if len(dec.Snapshot) > 0 {
		onHost = placeAsk
	}
	if dec.Verdict == warden.Allow && dec.Sandbox == ProfileHost {
		return onHost, nil, nil
	}
	r := runner.find()
	switch {
	case r == nil:
		return placeAsk, nil, nil
	case len(r) == 0:
		return onHost, nil, nil
	}
	if dec.Sandbox == "" || dec.Sandbox == ProfileHost {
		dec.Sandbox = profileAllowed
		if dec.Verdict == warden.Sandbox {
			dec.Sandbox = profileSandboxed
		}
	}
	cmd, _, _ := call.input.str("command")
	var flags []string
	if dec.Rule == ruleOnceGrant && dec.ApprovalID != "" {
		// The once grant is used up by this decision: the approval covers
		// the run too, rather than warden exec asking a second time.
		flags = append(flags, "--approval", dec.ApprovalID)
	}
	wrapped, err := sandboxCommand(r, dec, call.req, cmd, flags...)
	if err != nil {
		return placeAsk, nil, err
	}
	in, err := call.input.withString("command", wrapped)
	if err != nil {
		return placeAsk, nil, warden.Errorf(warden.EInternal, "rewrite the command for the sandbox").Wrap(err)
	}
	return placeContained, in, nil
}

// runAnswer is where a call with an allow or sandbox verdict goes, in
// terms every host speaks: run it (input, when set, is the tool input to
// run instead), or ask a person first (why says why; noSandbox says the
// reason is that no sandbox can run here, not the guard's doubt).
type runAnswer struct {
	ask       bool
	why       string
	noSandbox bool
	input     json.RawMessage
}

// answerRun decides how an allowed or sandboxed call runs: a shell command
// contained as contain says, any other tool as it is when allowed and
// asked about when the guard wanted it sandboxed (only shell commands can
// be).
func answerRun(dec warden.Decision, call toolCall, runner FindRunner) (runAnswer, error) {
	if !call.shell {
		if dec.Verdict == warden.Allow {
			return runAnswer{}, nil
		}
		return runAnswer{ask: true, why: explain(dec)}, nil
	}
	where, in, err := contain(dec, call, runner)
	switch {
	case err != nil:
		return runAnswer{}, err
	case where == placeContained:
		return runAnswer{input: in}, nil
	case where == placeHost:
		return runAnswer{}, nil
	}
	return runAnswer{ask: true, why: noSandboxReason(dec), noSandbox: true}, nil
}

// noSandboxReason is what a host is told when a command would run in a
// sandbox but none can run here.
func noSandboxReason(dec warden.Decision) string {
	if len(dec.Snapshot) > 0 {
		return "this command discards uncommitted work, which warden saves first only when it runs in warden's sandbox, and here it would run on the host, so warden asks: " + explain(dec)
	}
	return "no sandbox can run here, so warden asks before this runs on the host: " + explain(dec)
}

// askContained is the tool input for a shell call the gate asks about, for
// a host that asks its user and then runs what the hook gave it: the
// command wrapped in warden exec under the workspace profile, marked as
// approved by the host's user (warden exec records that, and a deny still
// refuses). nil when no sandbox can run here: an approved command then runs
// on the host as written, which is the human's answer.
func askContained(dec warden.Decision, call toolCall, runner FindRunner) (json.RawMessage, error) {
	r := runner.find()
	if len(r) == 0 {
		return nil, nil
	}
	dec.Sandbox = profileAllowed
	cmd, _, _ := call.input.str("command")
	wrapped, err := sandboxCommand(r, dec, call.req, cmd, "--host-approved")
	if err != nil {
		return nil, err
	}
	in, err := call.input.withString("command", wrapped)
	if err != nil {
		return nil, warden.Errorf(warden.EInternal, "rewrite the command for the sandbox").Wrap(err)
	}
	return in, nil
}
