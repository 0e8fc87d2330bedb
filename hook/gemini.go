package hook

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agentwarden/warden"
)

// gemini speaks Gemini CLI's hook protocol: BeforeTool is decided, AfterTool
// is scanned and its outcome reported to a Recorder, anything else blocks.
// Gemini CLI's "ask" answer forces its confirmation prompt, but a headless
// run (gemini -p) then ends silently: exit 0, no output, no word to the
// model. Neither its payload nor its environment says whether a person is at
// the prompt, so warden never answers ask: it opens an approval and denies,
// naming it, and the agent retries once a human answered it in warden.
type gemini struct{}

const geminiHost = "gemini"

// geminiAnswer is Gemini CLI's BeforeTool output.
type geminiAnswer struct {
	Decision           string          `json:"decision"`
	Reason             string          `json:"reason,omitempty"`
	HookSpecificOutput *geminiSpecific `json:"hookSpecificOutput,omitempty"`
}

type geminiSpecific struct {
	HookEventName string          `json:"hookEventName"`
	ToolInput     json.RawMessage `json:"tool_input"`
}

func (gemini) handle(ctx context.Context, payload []byte, d Decider, runner FindRunner) (response, error) {
	var p basePayload
	if err := decodePayload(payload, &p); err != nil {
		return response{}, err
	}
	switch p.HookEventName {
	case "BeforeTool":
	case "AfterTool":
		return geminiAfterTool(ctx, d, &p, payload, runner)
	default:
		return response{}, unknownEvent(geminiHost, p.HookEventName)
	}
	call, err := geminiCall(&p, payload)
	if err != nil {
		return response{}, err
	}
	call.req.TraceID = inputTrace(geminiHost, p.SessionID, p.ToolName, p.ToolInput)
	reqs := []*warden.Request{call.req}
	if p.ToolName == "web_fetch" {
		reqs = fetchRequests(call.req)
	}
	// Gemini gives a call no id: its lease is named by its trace, which
	// AfterTool finds again from the same tool and input.
	held, err := holdHostTool(ctx, d, p.SessionID, call.req.TraceID, hostFileTool(call, reqs), true)
	if err != nil {
		return response{}, err
	}
	dec, approvals, err := decideOpening(ctx, d, reqs, "hook:"+geminiHost)
	if err == nil && held {
		err = settleHostTool(ctx, d, p.SessionID, call.req.TraceID, dec.Verdict)
	}
	if err != nil {
		return response{}, err
	}
	return geminiRespond(dec, approvals, call, runner)
}

func (gemini) block(msg string) response { return blockOnStderr(msg) }

// geminiCall maps a BeforeTool payload to its request.
func geminiCall(p *basePayload, raw []byte) (toolCall, error) {
	in, err := toolInput(p.ToolInput)
	if err != nil {
		return toolCall{}, err
	}
	call := toolCall{input: in}
	name := p.ToolName
	var capability, action, resource string
	switch name {
	case "":
		return toolCall{}, warden.Errorf(warden.EInvalid, "BeforeTool payload has no tool_name")
	case "run_shell_command":
		capability, action = warden.CapShell, "exec"
		resource, err = in.need(name, "command")
		call.shell = true
	case "read_file":
		capability, action = warden.CapFilesystem, "read"
		if resource, err = in.first("", "file_path", "absolute_path"); err == nil && resource == "" {
			err = warden.Errorf(warden.EInvalid, "read_file call has no tool_input.file_path")
		}
	case "write_file", "replace":
		capability, action = warden.CapFilesystem, "write"
		resource, err = in.need(name, "file_path")
	case "glob":
		// A relative pattern lists below dir_path (or the working
		// directory): the guard judges where it leads.
		capability, action = warden.CapFilesystem, "list"
		var dir, pattern string
		if dir, err = in.first("", "dir_path", "path"); err == nil {
			pattern, err = in.first("", "pattern")
		}
		resource = globResource(dir, pattern, p.Cwd)
	case "search_file_content", "grep_search":
		// A search pattern is a regular expression, never a path.
		capability, action = warden.CapFilesystem, "list"
		resource, err = in.first(p.Cwd, "dir_path", "path")
	case "list_directory":
		// The names in one directory, as the pattern DIR/* lists them.
		capability, action = warden.CapFilesystem, "list"
		resource, err = in.first(p.Cwd, "dir_path", "path")
		resource = oneLevel(resource)
	case "web_fetch":
		capability, action = warden.CapNetwork, "fetch"
		resource, err = in.need(name, "prompt")
	case "google_web_search":
		// A search goes to the host's provider: the web_search tool.
		capability, action, resource = warden.CapTool, "call", "web_search"
		_, err = in.need(name, "query")
	default:
		capability, action, resource = warden.CapTool, "call", name
	}
	if err != nil {
		return toolCall{}, err
	}
	call.req = p.request(geminiHost, raw, capability, action, resource)
	switch {
	case call.shell:
		call.req.Params = in.pick("description", "dir_path", "is_background")
		call.req.Cwd = runDir(p.Cwd, in, "dir_path")
		call.req.Snapshots = true // it runs in warden exec, which saves discarded work (contain)
	case name == "google_web_search":
		call.req.Params = in.pick("query")
	case capability == warden.CapTool && strings.HasPrefix(name, "mcp_"):
		call.req.Tool = name
		call.req.Params = in.params()
	}
	return call, nil
}

// fetchRequests splits a web_fetch request, whose resource is the prompt, into
// one request per http(s) URL the prompt names; with none it is kept whole.
func fetchRequests(req *warden.Request) []*warden.Request {
	var reqs []*warden.Request
	seen := map[string]bool{}
	for _, f := range strings.Fields(req.Resource) {
		u := strings.TrimRight(f, ".,;:!?)]}>'\"")
		u = strings.TrimLeft(u, "([{<'\"")
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") || seen[u] {
			continue
		}
		seen[u] = true
		r := *req
		r.Resource = u
		reqs = append(reqs, &r)
	}
	if len(reqs) == 0 {
		return []*warden.Request{req}
	}
	return reqs
}

// geminiRespond maps a decision to Gemini CLI's BeforeTool output. What
// needs a person is denied, with what to do: answer the approvals warden
// opened (then retry), or run it yourself.
func geminiRespond(dec warden.Decision, approvals []string, call toolCall, runner FindRunner) (response, error) {
	var out geminiAnswer
	switch dec.Verdict {
	case warden.Allow, warden.Sandbox:
		a, err := answerRun(dec, call, runner)
		if err != nil {
			return response{}, err
		}
		out.Decision = "allow"
		if a.input != nil {
			out.HookSpecificOutput = &geminiSpecific{HookEventName: "BeforeTool", ToolInput: a.input}
		}
		switch {
		case a.noSandbox:
			out.Decision, out.Reason = "deny", a.why+"; ask the user to run it themselves"
		case a.ask:
			out.Decision, out.Reason = "deny", a.why+askHint
		}
	case warden.Ask:
		out.Decision, out.Reason = "deny", explain(dec)+retryHint(approvals)
	default:
		out.Decision, out.Reason = "deny", explain(dec)
	}
	return response{stdout: mustJSON(out), status: statusOK}, nil
}

// geminiAfterTool answers AfterTool, which Gemini CLI sends only for a call
// that ran: its output is scanned, and its outcome reported. Gemini gives a
// call no id, so the decision is found by the call's tool and input
// (inputTrace). A shell command the hook wrapped in warden exec arrives
// wrapped (Gemini hands AfterTool the input it ran): warden's sandbox
// decided and recorded that run, so it is not reported.
func geminiAfterTool(ctx context.Context, d Decider, p *basePayload, payload []byte, runner FindRunner) (response, error) {
	trace := inputTrace(geminiHost, p.SessionID, p.ToolName, p.ToolInput)
	held := true
	if call, err := geminiCall(p, payload); err == nil {
		held = hostFileTool(call, []*warden.Request{call.req})
	}
	if err := releaseHostTool(ctx, d, p.SessionID, trace, held); err != nil {
		return response{}, err
	}
	if p.ToolName == "run_shell_command" {
		if in, err := toolInput(p.ToolInput); err == nil {
			if cmd, _, _ := in.str("command"); contained(cmd, runner) {
				trace = ""
			}
		}
	}
	n := 1
	if p.ToolName == "web_fetch" {
		if call, err := geminiCall(p, payload); err == nil {
			n = len(fetchRequests(call.req))
		}
	}
	// warden never answers Gemini CLI with ask: an ask was refused, naming
	// an approval.
	if err := reportRan(ctx, d, RanCall{Host: geminiHost, Session: p.SessionID, Tool: p.ToolName, TraceID: trace, Requests: n}); err != nil {
		return response{}, err
	}
	return scannedAnswer(ctx, d, geminiHost, "AfterTool", p, trace), nil
}
