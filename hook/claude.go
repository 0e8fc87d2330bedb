package hook

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agentwarden/warden"
)

// claude speaks Claude Code's command-hook protocol: PreToolUse is decided
// (a call of Claude Code's own file tools with the session's sandboxes
// held: hold.go); PostToolUse is scanned and reported to a Recorder, which
// records the outcome (the user approved an ask at Claude Code's prompt, a
// refused call ran, a call had no decision); PostToolUse and
// PostToolUseFailure release the call's hold; SessionEnd ends the
// session's sandbox; anything else blocks.
type claude struct{}

const claudeHost = "claude"

// claudeAnswer is Claude Code's PreToolUse output.
type claudeAnswer struct {
	HookSpecificOutput claudeSpecific `json:"hookSpecificOutput"`
}

type claudeSpecific struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision"`
	PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
}

func (claude) handle(ctx context.Context, payload []byte, d Decider, runner FindRunner) (response, error) {
	var p basePayload
	if err := decodePayload(payload, &p); err != nil {
		return response{}, err
	}
	switch p.HookEventName {
	case "PreToolUse":
	case "PostToolUseFailure":
		// The tool ran and failed, or was stopped: its hold ends.
		if err := releaseHostTool(ctx, d, p.SessionID, p.ToolUseID, claudeHeld(&p, payload)); err != nil {
			return response{}, err
		}
		return response{stdout: []byte("{}"), status: statusOK}, nil
	case "PostToolUse":
		if err := releaseHostTool(ctx, d, p.SessionID, p.ToolUseID, claudeHeld(&p, payload)); err != nil {
			return response{}, err
		}
		trace := callTrace(claudeHost, p.SessionID, p.ToolUseID)
		// An ask was put to the user at Claude Code's prompt unless the
		// run is headless, where the hook denied it naming an approval.
		asked := claudeAttendance(ctx) != unattended
		err := reportRan(ctx, d, RanCall{Host: claudeHost, Session: p.SessionID, Tool: p.ToolName, ToolUseID: p.ToolUseID, TraceID: trace, Asked: asked})
		if err != nil {
			return response{}, err
		}
		return claudeScanned(ctx, d, &p, trace), nil
	case "SessionEnd":
		if e, ok := d.(Ender); ok && p.SessionID != "" {
			if err := e.EndSession(ctx, p.SessionID); err != nil {
				return response{}, err
			}
		}
		return response{stdout: []byte("{}"), status: statusOK}, nil
	default:
		return response{}, unknownEvent(claudeHost, p.HookEventName)
	}
	rewritten, err := mapSessionTmp(ctx, d, &p)
	if err != nil {
		return response{}, err
	}
	call, err := claudeCall(&p, payload)
	if err != nil {
		return response{}, err
	}
	call.rewritten = rewritten
	call.req.TraceID = callTrace(claudeHost, p.SessionID, p.ToolUseID)
	// Where nobody may be at Claude Code's prompt, an ask also opens an
	// approval in warden, which a human answers there before the agent
	// retries; an interactive session asks at Claude Code's prompt only.
	who := claudeAttendance(ctx)
	channel := ""
	if who != attended {
		channel = "hook:" + claudeHost
	}
	held, err := holdHostTool(ctx, d, p.SessionID, p.ToolUseID, hostFileTool(call, []*warden.Request{call.req}), false)
	if err != nil {
		return response{}, err
	}
	dec, approvals, err := decideOpening(ctx, d, []*warden.Request{call.req}, channel)
	if err == nil && held {
		err = settleHostTool(ctx, d, p.SessionID, p.ToolUseID, dec.Verdict)
	}
	if err != nil {
		return response{}, err
	}
	return claudeRespond(dec, approvals, who, call, runner)
}

func (claude) block(msg string) response { return blockOnStderr(msg) }

// claudeHeld reports whether the call a PostToolUse reports was held (one
// of Claude Code's own file tools, or one the hook cannot read).
func claudeHeld(p *basePayload, payload []byte) bool {
	call, err := claudeCall(p, payload)
	return err != nil || hostFileTool(call, []*warden.Request{call.req})
}

// claudeScanned is Claude Code's PostToolUse answer (see scannedAnswer).
func claudeScanned(ctx context.Context, d Decider, p *basePayload, trace string) response {
	return scannedAnswer(ctx, d, claudeHost, "PostToolUse", p, trace)
}

// toolCall is one parsed tool call: its request and what a rewrite needs.
type toolCall struct {
	req   *warden.Request
	input object
	shell bool // a shell command in input["command"]
	// rewritten is the tool's input with its paths in /tmp led to the
	// session's /tmp (mapSessionTmp), which the host must run it with;
	// nil when nothing was rewritten.
	rewritten json.RawMessage
}

// claudeCall maps a PreToolUse payload to its request.
func claudeCall(p *basePayload, raw []byte) (toolCall, error) {
	in, err := toolInput(p.ToolInput)
	if err != nil {
		return toolCall{}, err
	}
	call := toolCall{input: in}
	name := p.ToolName
	switch name {
	case "":
		return toolCall{}, warden.Errorf(warden.EInvalid, "PreToolUse payload has no tool_name")
	case "Bash":
		cmd, err := in.need(name, "command")
		if err != nil {
			return toolCall{}, err
		}
		call.req = p.request(claudeHost, raw, warden.CapShell, "exec", cmd)
		call.req.Params = in.pick("description", "timeout", "run_in_background", "dangerouslyDisableSandbox")
		call.shell = true
		call.req.Snapshots = true // it runs in warden exec, which saves discarded work (contain)
	case "Read":
		path, err := in.need(name, "file_path")
		if err != nil {
			return toolCall{}, err
		}
		call.req = p.request(claudeHost, raw, warden.CapFilesystem, "read", path)
	case "Write", "Edit", "MultiEdit":
		path, err := in.need(name, "file_path")
		if err != nil {
			return toolCall{}, err
		}
		call.req = p.request(claudeHost, raw, warden.CapFilesystem, "write", path)
	case "NotebookEdit":
		path, err := in.first("", "notebook_path", "file_path")
		if err != nil {
			return toolCall{}, err
		}
		if path == "" {
			return toolCall{}, warden.Errorf(warden.EInvalid, "NotebookEdit call has no tool_input.notebook_path")
		}
		call.req = p.request(claudeHost, raw, warden.CapFilesystem, "write", path)
	case "Glob":
		// The pattern lists below path (or the working directory): a
		// relative pattern is judged where it leads from there.
		dir, err := in.first("", "path")
		if err != nil {
			return toolCall{}, err
		}
		pattern, err := in.first("", "pattern")
		if err != nil {
			return toolCall{}, err
		}
		call.req = p.request(claudeHost, raw, warden.CapFilesystem, "list", globResource(dir, pattern, p.Cwd))
	case "Grep":
		// Grep's pattern is a regular expression, not a path: what it reads
		// is path, or the working directory, whole.
		where, err := in.first(p.Cwd, "path")
		if err != nil {
			return toolCall{}, err
		}
		call.req = p.request(claudeHost, raw, warden.CapFilesystem, "list", where)
	case "LS":
		// LS lists the names in one directory, as the pattern DIR/* does.
		where, err := in.first(p.Cwd, "path")
		if err != nil {
			return toolCall{}, err
		}
		call.req = p.request(claudeHost, raw, warden.CapFilesystem, "list", oneLevel(where))
	case "WebFetch":
		url, err := in.need(name, "url")
		if err != nil {
			return toolCall{}, err
		}
		call.req = p.request(claudeHost, raw, warden.CapNetwork, "fetch", url)
	case "WebSearch":
		// A search goes to the host's own provider, not to a URL the agent
		// picks: it is the web_search tool, judged by its tier.
		if _, err := in.need(name, "query"); err != nil {
			return toolCall{}, err
		}
		call.req = p.request(claudeHost, raw, warden.CapTool, "call", "web_search")
		call.req.Params = in.pick("query")
	default:
		call.req = p.request(claudeHost, raw, warden.CapTool, "call", name)
		if strings.HasPrefix(name, "mcp__") {
			call.req.Tool = name
			call.req.Params = in.params()
		}
	}
	return call, nil
}

// claudeRespond maps a decision to Claude Code's PreToolUse output. An ask
// is Claude Code's own prompt in an interactive session; in a headless one
// (who is unattended) it is a denial naming the approvals warden opened, so
// the agent can tell its user which to answer and retry; where Claude Code
// does not say, it is the prompt, and its reason names the approvals (a
// headless Claude Code hands that reason to the agent with its denial).
func claudeRespond(dec warden.Decision, approvals []string, who attendance, call toolCall, runner FindRunner) (response, error) {
	out := claudeSpecific{HookEventName: "PreToolUse"}
	switch dec.Verdict {
	case warden.Allow, warden.Sandbox:
		if call.shell && dec.Verdict == warden.Sandbox && call.input.isTrue("dangerouslyDisableSandbox") {
			out.PermissionDecision = "deny"
			out.PermissionDecisionReason = "warden lets this command run only inside its sandbox, and the call asks to disable the sandbox: " + explain(dec)
			break
		}
		a, err := answerRun(dec, call, runner)
		if err != nil {
			return response{}, err
		}
		out.PermissionDecision, out.UpdatedInput = "allow", a.input
		if !call.shell {
			out.UpdatedInput = call.rewritten
		}
		if a.ask {
			out.PermissionDecision, out.PermissionDecisionReason = "ask", a.why
		}
	case warden.Ask:
		out.PermissionDecision, out.PermissionDecisionReason = "ask", explain(dec)
		switch who {
		case unattended:
			out.PermissionDecision, out.PermissionDecisionReason = "deny", explain(dec)+retryHint(approvals)
		case attendanceUnknown:
			if len(approvals) > 0 {
				out.PermissionDecisionReason += retryHint(approvals)
			}
		}
		if out.PermissionDecision == "ask" && call.shell {
			// Once the user approves at Claude Code's prompt, the command
			// runs contained all the same, in the workspace sandbox.
			in, err := askContained(dec, call, runner)
			if err != nil {
				return response{}, err
			}
			out.UpdatedInput = in
		}
		if out.PermissionDecision == "ask" && !call.shell {
			out.UpdatedInput = call.rewritten
		}
	default:
		out.PermissionDecision, out.PermissionDecisionReason = "deny", explain(dec)
	}
	return response{stdout: mustJSON(claudeAnswer{out}), status: statusOK}, nil
}

// unknownEvent is the error for an event a host adapter does not handle.
func unknownEvent(host, event string) error {
	if event == "" {
		return warden.Errorf(warden.EInvalid, "%s hook payload has no hook_event_name", host)
	}
	return warden.Errorf(warden.EInvalid, "%s hook event %q is not one warden handles", host, event).
		WithHint("install the hook with `warden install " + host + "`, which registers only the events warden decides")
}
