package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// recordingDecider is a fakeDecider that also hears the hosts' reports
// that a call ran.
type recordingDecider struct {
	fakeDecider
	ran []RanCall
}

func (r *recordingDecider) Ran(_ context.Context, c RanCall) error {
	r.ran = append(r.ran, c)
	return nil
}

// TestHostsReportTheCallsThatRan: Claude Code's and Codex's PostToolUse and
// Gemini CLI's AfterTool report the call to a Recorder under the trace id
// its decision was made with: the call id's for Claude Code and Codex, the
// tool and input's for Gemini (its keys in any order), each request of a
// Codex patch. A Gemini command the hook wrapped in warden exec is not
// reported (warden's sandbox decided and recorded that run); only Claude
// Code asks its user.
func TestHostsReportTheCallsThatRan(t *testing.T) {
	runner := Runner{"/opt/warden-exec", "/opt/warden", "--home", "/h 1", "exec"}
	find := func() Runner { return runner }
	run := func(host, payload string, d Decider) string {
		t.Helper()
		var out, errw bytes.Buffer
		if code := Run(context.Background(), host, strings.NewReader(payload), &out, &errw, d, find); code != 0 {
			t.Fatalf("%s %s: exit %d, %s%s", host, payload, code, out.String(), errw.String())
		}
		return out.String()
	}
	patch := `{"command":"*** Begin Patch\n*** Update File: a.go\n*** Add File: b.go\n*** End Patch\n"}`
	cases := []struct {
		name, host, before, after string
		want                      *RanCall // nil: not reported
	}{
		{name: "claude", host: "claude",
			before: `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/a"},"tool_use_id":"toolu_1"}`,
			after:  `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"/a"},"tool_response":{},"tool_use_id":"toolu_1"}`,
			want:   &RanCall{Host: "claude", Session: "s", Tool: "Read", ToolUseID: "toolu_1", Asked: true}},
		{name: "claude without a call id", host: "claude",
			after: `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"/a"},"tool_response":{}}`},
		{name: "codex patch", host: "codex",
			before: `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":` + patch + `,"tool_use_id":"call-1"}`,
			after:  `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"apply_patch","tool_input":` + patch + `,"tool_response":"ok","tool_use_id":"call-1"}`,
			want:   &RanCall{Host: "codex", Session: "s", Tool: "apply_patch", ToolUseID: "call-1", Requests: 2}},
		{name: "gemini", host: "gemini",
			before: `{"session_id":"s","hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":{"file_path":"/a","start_line":1}}`,
			after:  `{"session_id":"s","hook_event_name":"AfterTool","tool_name":"read_file","tool_input":{"start_line":1,"file_path":"/a"},"tool_response":{"llmContent":"x"}}`,
			want:   &RanCall{Host: "gemini", Session: "s", Tool: "read_file", Requests: 1}},
		{name: "gemini web_fetch", host: "gemini",
			before: `{"session_id":"s","hook_event_name":"BeforeTool","tool_name":"web_fetch","tool_input":{"prompt":"compare https://a.example and https://b.example"}}`,
			after:  `{"session_id":"s","hook_event_name":"AfterTool","tool_name":"web_fetch","tool_input":{"prompt":"compare https://a.example and https://b.example"},"tool_response":{}}`,
			want:   &RanCall{Host: "gemini", Session: "s", Tool: "web_fetch", Requests: 2}},
		{name: "gemini command run in warden's sandbox", host: "gemini",
			after: `{"session_id":"s","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"/opt/warden-exec /opt/warden --home '/h 1' exec --profile workspace --session s -- ls"},"tool_response":{}}`},
		{name: "gemini command that names another warden", host: "gemini",
			after: `{"session_id":"s","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"/tmp/warden --home '/h 1' exec --profile workspace -- ls"},"tool_response":{}}`,
			want:  &RanCall{Host: "gemini", Session: "s", Tool: "run_shell_command", Requests: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := &recordingDecider{fakeDecider: fakeDecider{verdict: "allow"}}
			if c.before != "" {
				run(c.host, c.before, d)
			}
			if out := run(c.host, c.after, d); strings.TrimSpace(out) != "{}" {
				t.Errorf("answer after the call = %q; want {}", out)
			}
			if c.want == nil {
				if len(d.ran) != 0 {
					t.Fatalf("reported %+v; want no report", d.ran)
				}
				return
			}
			if len(d.ran) != 1 {
				t.Fatalf("reported %+v; want one report", d.ran)
			}
			got := d.ran[0]
			if c.before != "" {
				for _, r := range d.reqs {
					if r.TraceID == "" || r.TraceID != got.TraceID {
						t.Errorf("decided under trace %q, reported under %q; want the same", r.TraceID, got.TraceID)
					}
				}
			} else if got.TraceID == "" {
				t.Errorf("reported without a trace id")
			}
			got.TraceID = ""
			if got != *c.want {
				t.Errorf("reported %+v; want %+v", got, *c.want)
			}
		})
	}
}

// TestInputTrace: a Gemini call's trace id depends on its host, session,
// tool and input, not on the order of the input's keys.
func TestInputTrace(t *testing.T) {
	in := json.RawMessage(`{"a":1,"b":"x"}`)
	base := inputTrace("gemini", "s", "t", in)
	if base == "" || base != inputTrace("gemini", "s", "t", json.RawMessage(`{ "b":"x", "a":1.0 }`)) {
		t.Errorf("inputTrace differs for the same input in another order")
	}
	for _, other := range []string{
		inputTrace("codex", "s", "t", in), inputTrace("gemini", "s2", "t", in),
		inputTrace("gemini", "s", "t2", in), inputTrace("gemini", "s", "t", json.RawMessage(`{"a":2,"b":"x"}`)),
	} {
		if other == base {
			t.Errorf("inputTrace is the same for another call")
		}
	}
	if inputTrace("gemini", "", "t", in) != "" {
		t.Errorf("inputTrace without a session is not empty")
	}
}
