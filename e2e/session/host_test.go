package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// What became of a tool call.
const (
	verdictAllow = "allow"
	verdictAsk   = "ask"
	verdictDeny  = "deny"
	// verdictNone: the hook gave no decision (it failed with a status other
	// than 2, or printed none), so Claude Code falls back to its own
	// permission prompt in its default mode: an ask.
	verdictNone = "no decision"
	// verdictDirect: no hook at all, for the judges' own tests.
	verdictDirect = "direct"
)

// Timeouts of the emulated host.
const (
	hookTimeout    = 60 * time.Second // Claude Code's default for a command hook
	defaultTimeout = 30 * time.Second // for one command, unless its step says
	outputCap      = 1 << 20
)

// A result is what became of one Bash tool call.
type result struct {
	Tool      string // "" for Bash, else the tool (Command is then its tool_input)
	Command   string // as the agent wrote it
	Verdict   string
	Reason    string
	Ran       string // the command the host ran; "" when it ran nothing
	Contained bool   // the hook rewrote the command into `warden exec`
	Exit      int
	Output    string // stdout and stderr, interleaved
	TimedOut  bool
	Elapsed   time.Duration
}

// ran reports whether the host ran the command.
func (r result) ran() bool { return r.Ran != "" }

// asked reports whether a human would have been asked.
func (r result) asked() bool { return r.Verdict == verdictAsk || r.Verdict == verdictNone }

// where says how the command ran, for reports.
func (r result) where() string {
	switch {
	case !r.ran():
		return "not run"
	case r.Verdict == verdictDirect:
		return "run directly"
	case r.Tool != "":
		return "run by the host itself"
	case r.Contained:
		return "run in warden exec"
	default:
		return "run on the host"
	}
}

// A host plays Claude Code for one session in a world: each Bash call goes
// to the PreToolUse hooks, then runs (or not) as their answer says, then
// goes to the PostToolUse hooks.
type host struct {
	w      *world
	direct bool   // run every command with no hook (the judges' own tests)
	cwd    string // the working directory the host reports and runs in; "" = the project
	calls  int
	mu     sync.Mutex
	pgids  []int
}

func newHost(w *world, direct bool) *host { return &host{w: w, direct: direct} }

// newHostIn is newHost for a session whose host reports, and runs its
// commands in, the working directory cwd ("" = the project).
func newHostIn(w *world, direct bool, cwd string) *host {
	return &host{w: w, direct: direct, cwd: cwd}
}

// call makes one Bash tool call.
func (h *host) call(cmd string, timeout time.Duration) result {
	return h.callTool("", cmd, timeout)
}

// callTool makes one tool call: a Bash command (tool ""), or a call of
// another of Claude Code's tools with input (its tool_input as JSON), which
// Claude Code runs itself, on the host, when the hook lets it (runTool).
func (h *host) callTool(tool, input string, timeout time.Duration) result {
	h.calls++
	id := fmt.Sprintf("toolu_e2e_%s_%03d", h.w.session, h.calls)
	r := result{Tool: tool, Command: input, Verdict: verdictDirect, Ran: input}
	if !h.direct {
		r = h.decide(id, tool, input)
	}
	if !r.ran() {
		return r
	}
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	start := time.Now()
	if tool == "" {
		r.Exit, r.Output, r.TimedOut = h.run(r.Ran, timeout)
	} else {
		r.Exit, r.Output = h.runTool(tool, r.Ran, timeout)
	}
	r.Elapsed = time.Since(start)
	if !h.direct {
		h.post(id, r)
	}
	return r
}

// dir is where the host's tools work: the case's @cwd, else the project.
func (h *host) dir() string {
	if h.cwd != "" {
		return h.cwd
	}
	return h.w.project
}

// toolInput is a call's tool_input: a Bash command's, or another tool's JSON.
func toolInput(tool, input string) map[string]any {
	if tool == "" {
		return map[string]any{"command": input, "description": "e2e session step"}
	}
	var in map[string]any
	if err := json.Unmarshal([]byte(input), &in); err != nil {
		panic("the corpus parser let through a tool_input that is not a JSON object: " + input)
	}
	return in
}

// payload is a Claude Code hook payload for a tool call.
func (h *host) payload(event, id, tool, input string, extra map[string]any) []byte {
	name := tool
	if name == "" {
		name = "Bash"
	}
	p := map[string]any{
		"session_id":      h.w.session,
		"transcript_path": h.w.transcript,
		"cwd":             h.dir(),
		"permission_mode": "default",
		"hook_event_name": event,
		"tool_name":       name,
		"tool_input":      toolInput(tool, input),
		"tool_use_id":     id,
	}
	for k, v := range extra {
		p[k] = v
	}
	b, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	return b
}

// decide asks the PreToolUse hooks, as Claude Code does: exit 2 blocks with
// stderr as the reason; exit 0 with JSON decides; any other failure is not
// a decision, so the host's own prompt asks.
func (h *host) decide(id, tool, cmd string) result {
	r := result{Tool: tool, Command: cmd, Verdict: verdictNone}
	payload := h.payload("PreToolUse", id, tool, cmd, nil)
	hooks := h.w.hooks["PreToolUse"]
	if tool != "" {
		hooks = h.w.allHooks["PreToolUse"]
	}
	for _, hookCmd := range hooks {
		stdout, stderr, code, err := h.hook(hookCmd, payload)
		switch {
		case err != nil:
			r.Reason = "the hook did not run: " + err.Error()
			return r
		case code == 2:
			r.Verdict, r.Reason = verdictDeny, strings.TrimSpace(stderr)
			return r
		case code != 0:
			r.Reason = fmt.Sprintf("the hook failed with status %d: %s", code, strings.TrimSpace(stderr))
			return r
		}
		var ans struct {
			Continue *bool  `json:"continue"`
			Decision string `json:"decision"`
			Reason   string `json:"reason"`
			Specific struct {
				Decision     string         `json:"permissionDecision"`
				Reason       string         `json:"permissionDecisionReason"`
				UpdatedInput map[string]any `json:"updatedInput"`
			} `json:"hookSpecificOutput"`
		}
		if strings.TrimSpace(stdout) == "" || json.Unmarshal([]byte(stdout), &ans) != nil {
			r.Reason = "the hook printed no decision: " + clip(stdout, 200)
			return r
		}
		if ans.Continue != nil && !*ans.Continue {
			r.Verdict, r.Reason = verdictDeny, "the hook stopped the session: "+ans.Reason
			return r
		}
		decision, reason := ans.Specific.Decision, ans.Specific.Reason
		switch ans.Decision { // the older top-level form
		case "block":
			decision, reason = "deny", ans.Reason
		case "approve":
			decision, reason = "allow", ans.Reason
		}
		r.Reason = reason
		switch decision {
		case "deny":
			r.Verdict = verdictDeny
			return r
		case "ask":
			r.Verdict = verdictAsk
			return r
		case "allow":
			r.Verdict, r.Ran = verdictAllow, cmd
			if tool != "" {
				if ans.Specific.UpdatedInput != nil { // the hook changed the input
					b, _ := json.Marshal(ans.Specific.UpdatedInput)
					r.Ran = string(b)
				}
				continue
			}
			if c, ok := ans.Specific.UpdatedInput["command"].(string); ok && c != "" {
				r.Ran = c
				r.Contained = c != cmd && strings.Contains(c, h.w.h.warden) && strings.Contains(c, " exec ")
			}
		default:
			r.Reason = "the hook printed no permissionDecision: " + clip(stdout, 200)
			return r
		}
	}
	return r
}

// post tells the PostToolUse hooks what ran; their answer changes nothing
// that already happened.
func (h *host) post(id string, r result) {
	payload := h.payload("PostToolUse", id, r.Tool, r.Ran, map[string]any{
		"tool_response": map[string]any{"stdout": clip(r.Output, 30000), "stderr": "", "interrupted": r.TimedOut, "isImage": false},
	})
	hooks := h.w.hooks["PostToolUse"]
	if r.Tool != "" {
		hooks = h.w.allHooks["PostToolUse"]
	}
	for _, hookCmd := range hooks {
		_, _, _, _ = h.hook(hookCmd, payload)
	}
}

// end tells the SessionEnd hooks, if any are installed, that the session
// is over, and kills what the session's commands left running.
func (h *host) end() {
	payload, _ := json.Marshal(map[string]any{
		"session_id": h.w.session, "transcript_path": h.w.transcript, "cwd": h.dir(),
		"hook_event_name": "SessionEnd", "reason": "exit",
	})
	for _, hookCmd := range h.w.hooks["SessionEnd"] {
		_, _, _, _ = h.hook(hookCmd, payload)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, pg := range h.pgids {
		_ = syscall.Kill(-pg, syscall.SIGKILL)
	}
	h.pgids = nil
}

// hook runs one hook command with payload on stdin, in the project, with
// the host's environment.
func (h *host) hook(hookCmd string, payload []byte) (stdout, stderr string, code int, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), hookTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, "bash", "-c", hookCmd)
	c.Dir, c.Env = h.dir(), h.w.hookEnv
	c.Stdin = bytes.NewReader(payload)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err = c.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.String(), errb.String(), exit.ExitCode(), nil
	}
	if err != nil {
		return out.String(), errb.String(), -1, err
	}
	return out.String(), errb.String(), 0, nil
}

// run runs a command as Claude Code's Bash tool does: bash -c in the
// project, with the host's environment, no stdin, and a timeout that kills
// the command's whole process group. What it leaves running in the
// background lives on until the session ends.
func (h *host) run(cmd string, timeout time.Duration) (exit int, output string, timedOut bool) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c := exec.CommandContext(ctx, "bash", "-c", cmd)
	c.Dir, c.Env = h.dir(), h.w.cmdEnv
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = 3 * time.Second // a background process holding the output open
	out := &capped{max: outputCap}
	c.Stdout, c.Stderr = out, out
	err := c.Start()
	if err != nil {
		return -1, err.Error(), false
	}
	h.mu.Lock()
	h.pgids = append(h.pgids, c.Process.Pid)
	h.mu.Unlock()
	err = c.Wait()
	timedOut = ctx.Err() != nil
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		exit = ee.ExitCode()
		if exit < 0 { // killed by a signal
			exit = 128 + int(ee.Sys().(syscall.WaitStatus).Signal())
		}
	case err != nil && !errors.Is(err, exec.ErrWaitDelay):
		exit = -1
	}
	return exit, out.String(), timedOut
}

// capped keeps the first max bytes written to it.
type capped struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// clip shortens s for a report, keeping its end (where errors are).
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
