package hook

import (
	"context"
	"strings"

	"github.com/agentwarden/warden"
)

// codex speaks Codex's hook protocol, which follows Claude Code's wire format
// (PreToolUse is decided; PostToolUse is scanned and its outcome reported to
// a Recorder) with two limits: Codex cannot ask a person from a hook ("ask"
// fails open), and accepts "allow" only together with updatedInput.
// Refusals are therefore answered with exit status 2 and the reason on
// stderr, which every Codex version with hooks treats as a block; an allow
// is exit status 0 with no output.
type codex struct{}

const codexHost = "codex"

func (codex) handle(ctx context.Context, payload []byte, d Decider, runner FindRunner) (response, error) {
	var p basePayload
	if err := decodePayload(payload, &p); err != nil {
		return response{}, err
	}
	switch p.HookEventName {
	case "PreToolUse":
	case "PostToolUse":
		trace := callTrace(codexHost, p.SessionID, p.ToolUseID)
		n, held := 1, true
		if call, reqs, err := codexCall(&p, payload); err == nil {
			n, held = len(reqs), hostFileTool(call, reqs)
		}
		if err := releaseHostTool(ctx, d, p.SessionID, p.ToolUseID, held); err != nil {
			return response{}, err
		}
		// Codex cannot ask: an ask was refused, naming an approval.
		err := reportRan(ctx, d, RanCall{Host: codexHost, Session: p.SessionID, Tool: p.ToolName, ToolUseID: p.ToolUseID, TraceID: trace, Requests: n})
		if err != nil {
			return response{}, err
		}
		return scannedAnswer(ctx, d, codexHost, "PostToolUse", &p, trace), nil
	default:
		return response{}, unknownEvent(codexHost, p.HookEventName)
	}
	call, reqs, err := codexCall(&p, payload)
	if err != nil {
		return response{}, err
	}
	for _, r := range reqs {
		r.TraceID = callTrace(codexHost, p.SessionID, p.ToolUseID)
	}
	held, err := holdHostTool(ctx, d, p.SessionID, p.ToolUseID, hostFileTool(call, reqs), true)
	if err != nil {
		return response{}, err
	}
	dec, approvals, err := decideOpening(ctx, d, reqs, "hook:"+codexHost)
	if err == nil && held {
		err = settleHostTool(ctx, d, p.SessionID, p.ToolUseID, dec.Verdict)
	}
	if err != nil {
		return response{}, err
	}
	return codexRespond(dec, approvals, call, runner)
}

func (codex) block(msg string) response { return blockOnStderr(msg) }

// codexCall maps a PreToolUse payload to its requests: one per call, except
// apply_patch, which implies one filesystem write per file it touches.
func codexCall(p *basePayload, raw []byte) (toolCall, []*warden.Request, error) {
	in, err := toolInput(p.ToolInput)
	if err != nil {
		return toolCall{}, nil, err
	}
	call := toolCall{input: in}
	name := p.ToolName
	switch {
	case name == "":
		return toolCall{}, nil, warden.Errorf(warden.EInvalid, "PreToolUse payload has no tool_name")
	case name == "Bash":
		cmd, err := in.need(name, "command")
		if err != nil {
			return toolCall{}, nil, err
		}
		call.req = p.request(codexHost, raw, warden.CapShell, "exec", cmd)
		call.req.Params = in.pick("description", "timeout", "workdir")
		call.req.Cwd = runDir(p.Cwd, in, "workdir")
		call.shell = true
		call.req.Snapshots = true // it runs in warden exec, which saves discarded work (contain)
	case name == "apply_patch":
		patch, err := in.need(name, "command")
		if err != nil {
			return toolCall{}, nil, err
		}
		files := patchFiles(patch)
		if len(files) == 0 {
			return toolCall{}, nil, warden.Errorf(warden.EInvalid, "apply_patch call names no file")
		}
		reqs := make([]*warden.Request, len(files))
		for i, f := range files {
			reqs[i] = p.request(codexHost, raw, warden.CapFilesystem, "write", f)
		}
		return call, reqs, nil
	default:
		call.req = p.request(codexHost, raw, warden.CapTool, "call", name)
		if strings.HasPrefix(name, "mcp__") {
			call.req.Tool = name
			call.req.Params = in.params()
		}
	}
	return call, []*warden.Request{call.req}, nil
}

// patchFiles returns the files an apply_patch text adds, updates, deletes or
// moves to, in order, each once.
func patchFiles(patch string) []string {
	var files []string
	seen := map[string]bool{}
	for line := range strings.Lines(patch) {
		line = strings.TrimRight(line, "\r\n")
		for _, prefix := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
			if f, ok := strings.CutPrefix(line, prefix); ok {
				if f = strings.TrimSpace(f); f != "" && !seen[f] {
					seen[f] = true
					files = append(files, f)
				}
			}
		}
	}
	return files
}

// codexRespond maps a decision to Codex's answer. Codex cannot ask, so an ask
// blocks, naming the approvals warden opened for it.
func codexRespond(dec warden.Decision, approvals []string, call toolCall, runner FindRunner) (response, error) {
	switch dec.Verdict {
	case warden.Allow, warden.Sandbox:
		a, err := answerRun(dec, call, runner)
		switch {
		case err != nil:
			return response{}, err
		case a.noSandbox:
			return blockOnStderr(a.why + "; ask the user to run it themselves"), nil
		case a.ask:
			return blockOnStderr(a.why + askHint), nil
		case a.input != nil:
			out := claudeSpecific{HookEventName: "PreToolUse", PermissionDecision: "allow", UpdatedInput: a.input}
			return response{stdout: mustJSON(claudeAnswer{out}), status: statusOK}, nil
		}
		return response{status: statusOK}, nil
	case warden.Ask:
		return blockOnStderr(explain(dec) + retryHint(approvals)), nil
	default:
		return blockOnStderr(explain(dec)), nil
	}
}
