package hook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// After a call ran, Claude Code and Codex (PostToolUse) and Gemini CLI
// (AfterTool) report it. Besides the scan of its output, that report is
// the outcome of the call's decision, which a Recorder writes to the audit
// log: a call warden asked about that ran was approved at the host's
// prompt (where the host asks), or got past the hook (where the hook
// refused it); a denied call that ran got past the hook; a call with no
// decision ran without the hook being asked. The report finds its
// decision by trace id: derived from the call's id where the host gives
// one (callTrace), from its tool and input where it does not
// (inputTrace).

// reportRan tells d, when it is a Recorder, that the call c ran. A call
// without a trace id (no call id to find its decision by) is not
// reported. An error means the outcome could not be recorded.
func reportRan(ctx context.Context, d Decider, c RanCall) error {
	rec, ok := d.(Recorder)
	if !ok || c.TraceID == "" {
		return nil
	}
	return rec.Ran(ctx, c)
}

// inputTrace is the trace id of a call from a host that gives its calls
// no id (Gemini CLI): derived from the host, the session, the tool and its
// input (its JSON with sorted keys), so the report after the call ran,
// which carries the same input, finds the decision. Identical calls in a
// session share it; the report is judged by the newest decision. "" for a
// call without a session.
func inputTrace(host, session, tool string, input json.RawMessage) string {
	if session == "" || tool == "" {
		return ""
	}
	canon := []byte(strings.TrimSpace(string(input)))
	var v any
	if json.Unmarshal(input, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			canon = b
		}
	}
	sum := sha256.Sum256(append([]byte(tool+"\x00"), canon...))
	return callTrace(host, session, "input:"+hex.EncodeToString(sum[:]))
}

// contained reports whether cmd is a command the hook wrapped in runner's
// `warden exec` (see sandboxCommand): the host ran warden's sandbox, which
// decided the command again and recorded its run. A command the agent
// itself wrote in that form went through the same decision.
func contained(cmd string, runner FindRunner) bool {
	r := runner.find()
	if len(r) == 0 {
		return false
	}
	words := make([]string, 0, len(r)+1)
	for _, w := range r {
		q, err := syntax.Quote(w, syntax.LangBash)
		if err != nil {
			return false
		}
		words = append(words, q)
	}
	words = append(words, "--profile ")
	return strings.HasPrefix(cmd, strings.Join(words, " "))
}
