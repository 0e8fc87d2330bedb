package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/agentwarden/warden"
	"github.com/google/uuid"
)

// maxPayloadBytes bounds one host payload. Claude Code and Gemini send a whole
// file's new contents with a write, so this is larger than
// warden.MaxRequestBytes.
const maxPayloadBytes = 8 << 20

// requestedBy is what every hook request names as its requester.
const requestedBy = "agent"

// askHint is added where a host cannot ask a person itself and warden opened
// no approval to answer.
const askHint = "; ask the user to run it themselves or approve it in warden, then retry"

// retryHint is what the agent and its user read when warden opened approvals
// for a host that cannot ask: which approvals to answer, and to retry.
func retryHint(approvals []string) string {
	if len(approvals) == 0 {
		return askHint
	}
	if len(approvals) == 1 {
		return "; warden opened approval " + approvals[0] + " for a human: ask the user to approve it (`warden approvals approve " +
			approvals[0] + "`, the web console or Telegram), then retry exactly the same call"
	}
	return "; warden opened approvals " + strings.Join(approvals, ", ") + " for a human: ask the user to approve them " +
		"(`warden approvals approve ID`, the web console or Telegram), then retry exactly the same call"
}

// readPayload reads one payload: non-empty, at most maxPayloadBytes, one JSON
// object with nothing after it. It returns the object's bytes without
// surrounding white space.
func readPayload(r io.Reader) ([]byte, error) {
	if r == nil {
		return nil, warden.Errorf(warden.EInvalid, "no hook payload on stdin")
	}
	data, err := io.ReadAll(io.LimitReader(r, maxPayloadBytes+1))
	if err != nil {
		return nil, warden.Errorf(warden.EInvalid, "read the hook payload").Wrap(err)
	}
	if len(data) > maxPayloadBytes {
		return nil, warden.Errorf(warden.EInvalid, "hook payload is larger than %d bytes", maxPayloadBytes)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, warden.Errorf(warden.EInvalid, "no hook payload on stdin").
			WithHint("the host sends one JSON object per call; run `warden hook HOST` only from the host's hook settings")
	}
	if data[0] != '{' || !json.Valid(data) {
		return nil, warden.Errorf(warden.EInvalid, "hook payload is not one JSON object")
	}
	return data, nil
}

// decodePayload decodes payload into v. Hosts add fields over time, so unknown
// fields are ignored; a known field of the wrong type is an error.
func decodePayload(payload []byte, v any) error {
	if err := json.Unmarshal(payload, v); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			return warden.Errorf(warden.EInvalid, "hook payload field %q must be %v, not a JSON %s", typ.Field, typ.Type, typ.Value)
		}
		return warden.Errorf(warden.EInvalid, "hook payload is malformed").Wrap(err)
	}
	return nil
}

// basePayload holds the fields Claude Code, Codex and Gemini CLI share.
type basePayload struct {
	SessionID     string          `json:"session_id"`
	Cwd           string          `json:"cwd"`
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	ToolUseID     string          `json:"tool_use_id"`
	// ToolResponse is what the tool returned (PostToolUse, AfterTool).
	ToolResponse json.RawMessage `json:"tool_response"`
}

// traceSpace is the UUID namespace of trace ids derived from a host's call id.
var traceSpace = uuid.MustParse("5d3c6a0e-7f1b-4c9a-9e1d-2b8f4a6c0d17")

// callTrace is the trace id of a host's tool call: derived from the host,
// session and call id, so the report a host sends after the call ran finds
// the call's decision; "" (the gate assigns one) without a call id.
func callTrace(host, session, toolUseID string) string {
	if toolUseID == "" {
		return ""
	}
	return uuid.NewSHA1(traceSpace, []byte(host+"\x00"+session+"\x00"+toolUseID)).String()
}

// request starts a request for host from the base payload.
func (p *basePayload) request(host string, raw []byte, capability, action, resource string) *warden.Request {
	return &warden.Request{
		Capability:  capability,
		Action:      action,
		Resource:    resource,
		RequestedBy: requestedBy,
		Session:     p.SessionID,
		Host:        host,
		Cwd:         p.Cwd,
		Raw:         json.RawMessage(raw),
	}
}

// runDir is the directory a host runs a shell call in: the tool input's
// field (Codex's workdir, Gemini CLI's dir_path), relative to the working
// directory, when the call names one; the working directory otherwise. The
// command is judged where it runs.
func runDir(cwd string, in object, field string) string {
	dir, present, err := in.str(field)
	if err != nil || !present || dir == "" {
		return cwd
	}
	switch {
	case filepath.IsAbs(dir):
		return filepath.Clean(dir)
	case cwd == "":
		return cwd
	}
	return filepath.Join(cwd, dir)
}

// object is a decoded JSON object whose values stay raw.
type object map[string]json.RawMessage

// toolInput decodes a tool_input that must be a JSON object; absent or null is
// an empty object.
func toolInput(raw json.RawMessage) (object, error) {
	in := object{}
	if len(raw) == 0 || string(raw) == "null" {
		return in, nil
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, warden.Errorf(warden.EInvalid, "hook payload tool_input is not a JSON object")
	}
	return in, nil
}

// str returns the string at key; ok is false when the key is absent or null.
func (o object) str(key string) (s string, ok bool, err error) {
	raw, present := o[key]
	if !present || string(raw) == "null" {
		return "", false, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, warden.Errorf(warden.EInvalid, "tool_input.%s must be a string", key)
	}
	return s, true, nil
}

// need returns the non-empty string at key, or an error naming tool and key.
func (o object) need(tool, key string) (string, error) {
	s, ok, err := o.str(key)
	if err != nil {
		return "", err
	}
	if !ok || s == "" {
		return "", warden.Errorf(warden.EInvalid, "%s call has no tool_input.%s", tool, key)
	}
	return s, nil
}

// first returns the first non-empty string among keys, else fallback.
func (o object) first(fallback string, keys ...string) (string, error) {
	for _, k := range keys {
		s, ok, err := o.str(k)
		if err != nil {
			return "", err
		}
		if ok && s != "" {
			return s, nil
		}
	}
	return fallback, nil
}

// pick returns the params among keys that are present, or nil.
func (o object) pick(keys ...string) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for _, k := range keys {
		if v, ok := o[k]; ok {
			if out == nil {
				out = map[string]json.RawMessage{}
			}
			out[k] = v
		}
	}
	return out
}

// params returns all of o as request params, or nil when empty.
func (o object) params() map[string]json.RawMessage {
	if len(o) == 0 {
		return nil
	}
	return map[string]json.RawMessage(o)
}

// isTrue reports whether key holds JSON true.
func (o object) isTrue(key string) bool {
	return string(bytes.TrimSpace(o[key])) == "true"
}

// withString returns a copy of o with key set to the string s, as JSON.
func (o object) withString(key, s string) (json.RawMessage, error) {
	out := make(object, len(o)+1)
	for k, v := range o {
		out[k] = v
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	out[key] = b
	return json.Marshal(out)
}

// decide validates every request, then decides each through d and returns
// the decision with the strongest verdict (the first of equals). It stops at
// the first deny. Any error, or no request at all, is returned as an error.
func decide(ctx context.Context, d Decider, reqs []*warden.Request) (warden.Decision, error) {
	best, _, err := decideOpening(ctx, d, reqs, "")
	return best, err
}

// decideOpening is decide for a host that cannot ask: with a channel and an
// Opener, every ask opens (or joins) an approval, and their ids come back in
// the order of reqs.
func decideOpening(ctx context.Context, d Decider, reqs []*warden.Request, channel string) (warden.Decision, []string, error) {
	if len(reqs) == 0 {
		return warden.Decision{}, nil, warden.Errorf(warden.EInvalid, "the hook payload implies no request")
	}
	for _, r := range reqs {
		if err := r.Validate(); err != nil {
			return warden.Decision{}, nil, err
		}
	}
	opener, _ := d.(Opener)
	var (
		best      warden.Decision
		approvals []string
	)
	for i, r := range reqs {
		var (
			dec warden.Decision
			err error
		)
		if r.Capability == warden.CapShell && r.Snapshots && r.Unset == nil {
			// The command runs in warden exec, which decides it again
			// under its own environment: the host's stands for it here.
			if env, ok := ctx.Value(hostEnvKey{}).([]string); ok {
				r.Unset = warden.UnsetIn(env)
			}
		}
		if opener != nil && channel != "" {
			dec, err = opener.CheckOpen(ctx, r, channel)
		} else {
			dec, err = d.Check(ctx, r)
		}
		if err != nil {
			return warden.Decision{}, nil, err
		}
		if dec.Verdict == warden.Ask && dec.ApprovalID != "" {
			approvals = append(approvals, dec.ApprovalID)
		}
		if i == 0 || dec.Verdict.Stronger(best.Verdict) {
			best = dec
		}
		if best.Verdict == warden.Deny {
			break
		}
	}
	return best, approvals, nil
}

// explain is the reason a person and the agent see: the decision's reason and
// the rule that decided.
func explain(d warden.Decision) string {
	reason := strings.TrimSpace(d.Reason)
	if reason == "" {
		reason = "warden gave no reason"
	}
	if d.Rule != "" {
		reason += " (warden rule " + d.Rule + ")"
	}
	return reason
}

// globResource is what a glob tool lists: a relative pattern joined to the
// directory it is given (so the guard judges where it leads), an absolute or
// "~" pattern as it is, the directory when there is no pattern, and the
// working directory when there is neither.
func globResource(dir, pattern, cwd string) string {
	switch {
	case strings.ContainsAny(dir, "*?[]{}"):
		// The directory is a name, never a pattern: one with glob
		// characters (a symlink a command made, k[e]ys) is judged as
		// itself, a listing of its whole tree, not as a pattern that
		// would judge only what lies before them.
		return dir
	case pattern == "" && dir == "":
		return cwd
	case pattern == "":
		return dir
	case dir != "" && !strings.HasPrefix(pattern, "/") && !strings.HasPrefix(pattern, "~"):
		return strings.TrimSuffix(dir, "/") + "/" + pattern
	}
	return pattern
}

// oneLevel is the listing pattern of the names in the directory dir (an
// LS tool's): DIR/*, which the filesystem guard judges as a listing of
// names one level deep, not a search of the tree. A dir with glob
// characters of its own is left whole (judged as its tree, the stricter).
func oneLevel(dir string) string {
	if dir == "" || strings.ContainsAny(dir, "*?[]{}\\") {
		return dir
	}
	return strings.TrimSuffix(dir, "/") + "/*"
}

// sandboxCommand is what runs instead of cmd under a sandbox verdict: cmd,
// or the decision's rewrite of it, run by bash inside warden exec under the
// decision's profile, for the same requester (req may be nil); a command
// that is one program with literal words (directArgs) runs without the
// bash, which would only exec it. warden exec decides the command again
// before it runs (its command line is cmd either way).
func sandboxCommand(runner Runner, d warden.Decision, req *warden.Request, cmd string, flags ...string) (string, error) {
	if d.Rewrite != "" {
		cmd = d.Rewrite
	}
	profile := d.Sandbox
	if profile == "" {
		profile = "guard"
	}
	words := append(append([]string{}, runner...), "--profile", profile)
	// warden exec decides the command again: as the same requester, so an
	// autonomous turn stays autonomous and the two decisions share a session.
	if req != nil {
		if req.Session != "" {
			words = append(words, "--session", req.Session)
		}
		if req.RequestedBy != "" {
			words = append(words, "--requested-by", req.RequestedBy)
		}
		if req.Autonomous {
			words = append(words, "--autonomous")
		}
	}
	words = append(words, flags...)
	if argv, ok := directArgs(cmd); ok {
		words = append(append(words, "--"), argv...)
	} else {
		words = append(words, "--", "bash", "-c", cmd)
	}
	for i, w := range words {
		q, err := syntax.Quote(w, syntax.LangBash)
		if err != nil {
			return "", warden.Errorf(warden.EInvalid, "the command cannot be passed to the sandbox: %v", err)
		}
		words[i] = q
	}
	return strings.Join(words, " "), nil
}

// mustJSON encodes the fixed answer structs of this package, which cannot
// fail to encode.
// HTML characters are not escaped, so a command reads as written.
func mustJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("hook: encode answer: " + err.Error())
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
