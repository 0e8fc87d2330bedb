package hook

import (
	"context"
	"encoding/json"

	"github.com/agentwarden/warden"
)

// cursor speaks Cursor's hook protocol: beforeShellExecution,
// beforeMCPExecution and beforeReadFile are decided; the after* events are
// acknowledged; anything else blocks. Cursor cannot rewrite a command, and
// beforeReadFile cannot ask.
type cursor struct{}

const cursorHost = "cursor"

// cursorPayload holds the fields warden reads. The file contents of
// beforeReadFile are deliberately not decoded.
type cursorPayload struct {
	ConversationID string          `json:"conversation_id"`
	HookEventName  string          `json:"hook_event_name"`
	WorkspaceRoots []string        `json:"workspace_roots"`
	Command        string          `json:"command"`
	Cwd            string          `json:"cwd"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	URL            string          `json:"url"`
	FilePath       string          `json:"file_path"`
}

// cursorAnswer is Cursor's before* output.
type cursorAnswer struct {
	Permission   string `json:"permission"`
	UserMessage  string `json:"user_message,omitempty"`
	AgentMessage string `json:"agent_message,omitempty"`
}

// cursorContentKeys are the beforeReadFile fields that carry file contents;
// they are dropped from Raw so they never reach the audit log.
var cursorContentKeys = []string{"content", "attachments"}

func (cursor) handle(ctx context.Context, payload []byte, d Decider, _ FindRunner) (response, error) {
	var p cursorPayload
	if err := decodePayload(payload, &p); err != nil {
		return response{}, err
	}
	var (
		req    *warden.Request
		canAsk = true
		err    error
	)
	switch p.HookEventName {
	case "beforeShellExecution":
		req, err = p.shell(payload)
	case "beforeMCPExecution":
		req, err = p.mcp(payload)
	case "beforeReadFile":
		req, err = p.readFile(payload)
		canAsk = false
	case "afterShellExecution", "afterMCPExecution", "afterFileEdit":
		return response{stdout: []byte("{}"), status: statusOK}, nil
	default:
		return response{}, unknownEvent(cursorHost, p.HookEventName)
	}
	if err != nil {
		return response{}, err
	}
	channel := ""
	if !canAsk {
		channel = "hook:" + cursorHost
	}
	dec, approvals, err := decideOpening(ctx, d, []*warden.Request{req}, channel)
	if err != nil {
		return response{}, err
	}
	return cursorRespond(dec, approvals, canAsk), nil
}

func (cursor) block(msg string) response {
	return response{
		stdout: mustJSON(cursorAnswer{Permission: "deny", UserMessage: msg, AgentMessage: msg}),
		stderr: msg,
		status: statusBlock,
	}
}

func (p *cursorPayload) request(raw []byte, capability, action, resource string) *warden.Request {
	cwd := p.Cwd
	if cwd == "" && len(p.WorkspaceRoots) > 0 {
		cwd = p.WorkspaceRoots[0]
	}
	return &warden.Request{
		Capability:  capability,
		Action:      action,
		Resource:    resource,
		RequestedBy: requestedBy,
		Session:     p.ConversationID,
		Host:        cursorHost,
		Cwd:         cwd,
		Raw:         json.RawMessage(raw),
	}
}

func (p *cursorPayload) shell(raw []byte) (*warden.Request, error) {
	if p.Command == "" {
		return nil, warden.Errorf(warden.EInvalid, "beforeShellExecution payload has no command")
	}
	return p.request(raw, warden.CapShell, "exec", p.Command), nil
}

// mcp maps beforeMCPExecution. Cursor documents tool_input as a JSON string
// holding the arguments; an object is accepted too.
func (p *cursorPayload) mcp(raw []byte) (*warden.Request, error) {
	if p.ToolName == "" {
		return nil, warden.Errorf(warden.EInvalid, "beforeMCPExecution payload has no tool_name")
	}
	req := p.request(raw, warden.CapTool, "call", p.ToolName)
	req.Tool = p.ToolName
	args := p.ToolInput
	var s string
	if json.Unmarshal(args, &s) == nil {
		args = json.RawMessage(s)
	}
	params := object{}
	switch {
	case len(args) == 0 || string(args) == "null":
	case json.Unmarshal(args, &params) == nil:
	default:
		params = object{"tool_input": p.ToolInput}
	}
	for key, v := range map[string]string{"server_url": p.URL, "server_command": p.Command} {
		if _, taken := params[key]; v != "" && !taken {
			params[key], _ = json.Marshal(v)
		}
	}
	req.Params = params.params()
	return req, nil
}

// readFile maps beforeReadFile, keeping the file's contents out of Raw.
func (p *cursorPayload) readFile(raw []byte) (*warden.Request, error) {
	if p.FilePath == "" {
		return nil, warden.Errorf(warden.EInvalid, "beforeReadFile payload has no file_path")
	}
	var all object
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, warden.Errorf(warden.EInvalid, "hook payload is not one JSON object")
	}
	for _, k := range cursorContentKeys {
		delete(all, k)
	}
	stripped, err := json.Marshal(all)
	if err != nil {
		return nil, warden.Errorf(warden.EInternal, "encode the payload without file contents").Wrap(err)
	}
	return p.request(stripped, warden.CapFilesystem, "read", p.FilePath), nil
}

// cursorRespond maps a decision to Cursor's output. Cursor cannot run a
// command inside warden's sandbox, so a sandbox verdict asks; where Cursor
// cannot ask (beforeReadFile), ask becomes deny naming the approval warden
// opened for it.
func cursorRespond(dec warden.Decision, approvals []string, canAsk bool) response {
	var out cursorAnswer
	switch dec.Verdict {
	case warden.Allow:
		out.Permission = "allow"
	case warden.Ask, warden.Sandbox:
		msg := explain(dec)
		if canAsk {
			out = cursorAnswer{Permission: "ask", UserMessage: msg, AgentMessage: msg}
		} else {
			msg += retryHint(approvals)
			out = cursorAnswer{Permission: "deny", UserMessage: msg, AgentMessage: msg}
		}
	default:
		msg := explain(dec)
		out = cursorAnswer{Permission: "deny", UserMessage: msg, AgentMessage: msg}
	}
	return response{stdout: mustJSON(out), status: statusOK}
}
