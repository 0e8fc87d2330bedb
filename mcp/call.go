package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/inject"
	"github.com/agentwarden/warden/redact"
	"github.com/agentwarden/warden/tools"
)

// toolCall is one tools/call on its way through the proxy.
type toolCall struct {
	id       jsonrpc.ID
	tool     string // the server's name for it
	req      *warden.Request
	dec      warden.Decision
	argsHash string
	start    time.Time
}

// toolCall decides a tools/call from the client: forwarded when the gate
// allows it, else answered with an isError result saying why. cctx ends
// when the client cancels the call; ctx is the session's.
func (s *session) toolCall(cctx, ctx context.Context, m *jsonrpc.Request) {
	var params struct {
		Name           string                     `json:"name"`
		Arguments      json.RawMessage            `json:"arguments"`
		Meta           map[string]json.RawMessage `json:"_meta"`
		RequestState   string                     `json:"requestState"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	if err := json.Unmarshal(m.Params, &params); err != nil || params.Name == "" {
		s.replyError(ctx, m.ID, jsonrpc.CodeInvalidParams, "warden: tools/call needs params {\"name\": TOOL, \"arguments\": {…}}; it was not forwarded")
		return
	}
	// encoding/json matches keys case-insensitively, the last one winning:
	// {"name":"delete_repo","Name":"echo"} would be judged as echo while a
	// case-sensitive server runs delete_repo.
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(m.Params, &keys); err != nil {
		s.replyError(ctx, m.ID, jsonrpc.CodeInvalidParams, "warden: tools/call needs params {\"name\": TOOL, \"arguments\": {…}}; it was not forwarded")
		return
	}
	if err := ambiguous(keys, "name", "arguments", "_meta", "requestState", "inputResponses"); err != nil {
		s.replyError(ctx, m.ID, jsonrpc.CodeInvalidParams, "warden: the params of a tools/call are ambiguous ("+err.Error()+"); it was not forwarded")
		return
	}
	args := map[string]json.RawMessage{}
	if a := params.Arguments; len(a) > 0 && string(a) != "null" {
		if err := json.Unmarshal(a, &args); err != nil {
			s.replyError(ctx, m.ID, jsonrpc.CodeInvalidParams, "warden: the arguments of a tools/call must be a JSON object; it was not forwarded")
			return
		}
	}
	name := ToolName(s.p.Server, params.Name)
	c := &toolCall{id: m.ID, tool: params.Name, start: time.Now(), argsHash: argsHash(params.Arguments)}
	c.req = &warden.Request{Capability: warden.CapTool, Action: tools.ActionCall, Resource: name, Tool: name,
		Params: args, Autonomous: s.p.Autonomous, Session: s.p.Session, Host: "mcp", RequestedBy: "agent", Raw: m.Params, Cwd: s.p.Cwd}
	if !s.defs.checked(params.Name) {
		s.listTools(cctx, params.Name)
	}
	distrust := s.defs.distrust(params.Name)
	d, err := s.p.Gate.Check(cctx, c.req, distrust)
	if err != nil {
		s.refuse(ctx, c, "warden could not decide this call, so it is refused: "+warden.UserMessage(err))
		return
	}
	asked := d.Verdict == warden.Ask
	ours := strings.HasPrefix(params.RequestState, mrtrState)
	switch {
	case asked && multiRoundTrip(params.Meta) && !d.ManualOnly && d.ApprovalID != "":
		// A stateless (2026-07-28) client: the ask goes back as an
		// input_required result, and the client retries with its user's
		// answer, which is this approval's.
		answer, ok := params.InputResponses[mrtrKey]
		if !ok || params.RequestState != mrtrState+d.ApprovalID {
			c.dec = d
			res := s.inputRequired(c.req, d)
			b, _ := json.Marshal(res)
			c.finish(ctx, s, "input_required", len(b), nil)
			s.reply(ctx, c.id, res)
			return
		}
		var er sdk.ElicitResult
		approve := false
		if json.Unmarshal(answer, &er) == nil {
			v, _ := er.Content["approve"].(bool)
			approve = er.Action == "accept" && v
		}
		if err := s.p.Gate.Answer(ctx, d.ApprovalID, approve, "mcp-client"); err != nil {
			s.p.Log.Warn("mcp: could not record the client's answer", "approval", d.ApprovalID, "error", err)
		}
		if d, err = s.p.Gate.Await(cctx, c.req, d); err != nil {
			c.dec = d
			s.refuse(ctx, c, "warden: the answer to approval "+d.ApprovalID+" could not be read, so the call is refused: "+warden.UserMessage(err))
			return
		}
	case asked:
		if d, err = s.ask(cctx, c.req, d); err != nil {
			c.dec = d
			s.refuse(ctx, c, err.Error())
			return
		}
	}
	c.dec = d
	switch d.Verdict {
	case warden.Allow, warden.Sandbox:
	default:
		s.refuse(ctx, c, refusal(name, d))
		return
	}
	if distrust != nil && (asked || strings.HasPrefix(d.Rule, "grant.") || d.Rule == "approvals.always") {
		// A human approved a call to the changed tool (now, or by the
		// answer a retry uses): its new definition is the one seen.
		s.defs.accept(ctx, params.Name)
	}
	if ours {
		m = withoutAnswer(m) // the server never asked for it
	}
	s.track(m.ID, pending{method: "tools/call", call: c})
	s.toServer(ctx, m)
}

// The stateless protocol's multi round trip (SEP-2322): the proxy's input
// request is keyed mrtrKey, and its request state is mrtrState plus the
// approval's id.
const (
	mrtrKey   = "warden-approval"
	mrtrState = "warden-approval:"
)

// multiRoundTrip reports whether a request's _meta says its client speaks
// the stateless protocol (2026-07-28 or later) and can elicit.
func multiRoundTrip(meta map[string]json.RawMessage) bool {
	var version string
	if json.Unmarshal(meta["io.modelcontextprotocol/protocolVersion"], &version) != nil || version < "2026-07-28" {
		return false
	}
	var caps struct {
		Elicitation json.RawMessage `json:"elicitation"`
	}
	return json.Unmarshal(meta["io.modelcontextprotocol/clientCapabilities"], &caps) == nil &&
		len(caps.Elicitation) > 0 && string(caps.Elicitation) != "null"
}

// inputRequired is the result that puts an ask to a stateless client.
func (s *session) inputRequired(req *warden.Request, d warden.Decision) map[string]any {
	return map[string]any{
		"content":    []any{},
		"resultType": "input_required",
		"inputRequests": map[string]any{
			mrtrKey: map[string]any{"method": "elicitation/create", "params": s.elicitation(req, d)},
		},
		"requestState": mrtrState + d.ApprovalID,
	}
}

// withoutAnswer is a tools/call without the input responses and request
// state the proxy asked for.
func withoutAnswer(m *jsonrpc.Request) *jsonrpc.Request {
	var p map[string]json.RawMessage
	if json.Unmarshal(m.Params, &p) != nil {
		return m
	}
	delete(p, "inputResponses")
	delete(p, "requestState")
	b, err := json.Marshal(p)
	if err != nil {
		return m
	}
	return &jsonrpc.Request{ID: m.ID, Method: m.Method, Params: b}
}

// argsHash is the SHA-256 of the arguments as sent: the audit records it,
// never the values.
func argsHash(raw json.RawMessage) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// refusal is the text of a denied call's isError result.
func refusal(name string, d warden.Decision) string {
	why := d.Reason
	if why == "" {
		why = "the policy does not allow it"
	}
	if d.Verdict == warden.Ask {
		return fmt.Sprintf("warden: %s still needs a human's approval: %s (rule %s). The call did not reach the server; ask the user to approve it in warden, then call the tool again.", name, why, d.Rule)
	}
	return fmt.Sprintf("warden denied %s: %s (rule %s). The call did not reach the server.", name, why, d.Rule)
}

// refuse answers the call with an isError result saying why, and records
// its outcome.
func (s *session) refuse(ctx context.Context, c *toolCall, why string) {
	res := toolError(why)
	b, _ := json.Marshal(res)
	c.finish(ctx, s, "refused", len(b), nil)
	s.reply(ctx, c.id, res)
}

// ask gets an ask answered: by the client's user through elicitation when
// the client can ask (never for tier 4, which only warden's own channels
// answer), else by waiting for the approval warden opened. An error says
// the call is refused and why (it names the approval to answer).
func (s *session) ask(ctx context.Context, req *warden.Request, d warden.Decision) (warden.Decision, error) {
	if d.ApprovalID == "" {
		return d, fmt.Errorf("warden: %s needs a human's approval, and no approval could be opened: %s", req.Resource, d.Reason)
	}
	s.mu.Lock()
	elicit := s.elicit
	s.mu.Unlock()
	if elicit && !d.ManualOnly {
		approve, err := s.elicitApproval(ctx, req, d)
		if err == nil {
			if err := s.p.Gate.Answer(ctx, d.ApprovalID, approve, "mcp-client"); err != nil {
				s.p.Log.Warn("mcp: could not record the client's answer", "approval", d.ApprovalID, "error", err)
			}
			return s.p.Gate.Await(ctx, req, d)
		}
		s.p.Log.Warn("mcp: the client did not answer the elicitation; waiting for the approval instead", "approval", d.ApprovalID, "error", err)
	}
	wait := s.p.Wait
	if wait == 0 {
		wait = DefaultWait
	}
	pendingMsg := fmt.Errorf("warden: %s needs a human's approval (%s). Approval %s is waiting: approve it with `warden approvals approve %[3]s` or in the web console, then call the tool again",
		req.Resource, d.Reason, d.ApprovalID)
	if wait < 0 {
		return d, pendingMsg
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	out, err := s.p.Gate.Await(wctx, req, d)
	if err != nil {
		return d, pendingMsg
	}
	return out, nil
}

// elicitSchema asks for one boolean.
var elicitSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"approve": map[string]any{"type": "boolean", "title": "Allow this call", "description": "Allow the agent to make this tool call once"},
	},
	"required": []string{"approve"},
}

// elicitation is the form that asks the client's user about a call.
func (s *session) elicitation(req *warden.Request, d warden.Decision) *sdk.ElicitParams {
	args, _ := json.Marshal(req.Params)
	msg := fmt.Sprintf("warden: allow the agent to call %s with %s? %s (approval %s)", req.Resource, inject.Clip(string(redact.JSON(args)), 600), d.Reason, d.ApprovalID)
	return &sdk.ElicitParams{Mode: "form", Message: msg, RequestedSchema: elicitSchema}
}

// elicitApproval puts the ask to the client's user. approve is true only for
// an accepted form with approve set to true.
func (s *session) elicitApproval(ctx context.Context, req *warden.Request, d warden.Decision) (bool, error) {
	r, err := s.request(ctx, "elicitation/create", s.elicitation(req, d))
	if err != nil {
		return false, err
	}
	if r.Error != nil {
		return false, r.Error
	}
	var er sdk.ElicitResult
	if err := json.Unmarshal(r.Result, &er); err != nil {
		return false, fmt.Errorf("the client's answer is not an elicitation result: %w", err)
	}
	approve, _ := er.Content["approve"].(bool)
	return er.Action == "accept" && approve, nil
}

// finish records the call's outcome: the server, the tool, the argument
// hash, the verdict and the result's size (never the arguments or the
// result).
func (c *toolCall) finish(ctx context.Context, s *session, outcome string, size int, sc *scanned) {
	meta := map[string]any{
		"server": s.p.Server, "tool": c.tool, "args_sha256": c.argsHash, "verdict": c.dec.Verdict.String(),
		"outcome": outcome, "result_bytes": size, "duration_ms": time.Since(c.start).Milliseconds(),
	}
	sev := warden.SevInfo
	if sc != nil && sc.res.Injection {
		meta["injection_score"] = sc.res.Score
		meta["injection_categories"] = sc.res.Categories
		sev = warden.SevWarn
	}
	ev := Event{Type: warden.EventActionResult, Severity: sev, TraceID: c.dec.TraceID, Meta: meta,
		Summary: fmt.Sprintf("MCP %s %s: %s (%d bytes)", s.p.Server, c.tool, outcome, size)}
	if err := s.p.Gate.Record(context.WithoutCancel(ctx), ev); err != nil {
		s.p.Log.Warn("mcp: could not record a call's outcome", "tool", c.tool, "error", err)
	}
}

// callResult treats the server's answer to an allowed call.
func (s *session) callResult(ctx context.Context, c *toolCall, m *jsonrpc.Response) *jsonrpc.Response {
	r, outcome, sc := s.guardedResult(ctx, ToolName(s.p.Server, c.tool), c.dec.TraceID, c.tool, m)
	c.finish(ctx, s, outcome, len(m.Result), &sc)
	return r
}

// taskResult treats the server's answer to tasks/result: the result of a
// task-augmented tools/call, which reaches the model as the call's own
// would (the call itself was answered with the task).
func (s *session) taskResult(ctx context.Context, m *jsonrpc.Response) *jsonrpc.Response {
	r, _, _ := s.guardedResult(ctx, "a task's result from "+s.p.Server, "", "tasks/result", m)
	return r
}

// guardedResult is a tool result as passed on (withheld when it cannot be
// read or reads as a prompt injection), its outcome and what the scan
// found; an injection found is recorded under trace, from source.
func (s *session) guardedResult(ctx context.Context, name, trace, source string, m *jsonrpc.Response) (*jsonrpc.Response, string, scanned) {
	out, sc, err := s.p.guardResult(name, m.Result)
	if sc.res.Injection {
		s.recordInjection(ctx, trace, source, sc)
	}
	switch {
	case err != nil:
		b, _ := json.Marshal(toolError(fmt.Sprintf("warden withheld the result of %s: it could not be read (%v)", name, err)))
		return &jsonrpc.Response{ID: m.ID, Result: b}, "withheld", sc
	case sc.withheld:
		b, _ := json.Marshal(withheldResult(name, sc))
		return &jsonrpc.Response{ID: m.ID, Result: b}, "withheld", sc
	case sc.res.Injection:
		return &jsonrpc.Response{ID: m.ID, Result: out}, "flagged", sc
	}
	return &jsonrpc.Response{ID: m.ID, Result: out}, "forwarded", sc
}
