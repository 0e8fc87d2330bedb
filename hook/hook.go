// Package hook adapts the hook protocols of agent hosts (Claude Code, Codex,
// Gemini CLI, Cursor) to warden's gate, and installs warden's hook into each
// host's settings file.
//
// Run reads one host payload, turns it into the warden.Requests it implies,
// decides each through a Decider (the strongest verdict wins) and writes the
// host's answer. It fails closed: a payload it cannot read, an event it does not
// know, a request that does not validate or a decider error is answered with the
// host's blocking form (exit status 2 and a message on stderr), never an allow.
// Hosts treat a hook that times out or exits with another status as
// non-blocking, so Run only ever returns 0 or 2.
//
// Install and Uninstall merge warden's hook entry into a host's settings file,
// keeping every other key and hook, with a timestamped backup and an atomic
// write.
package hook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/agentwarden/warden"
)

// Decider decides one request; *gate.Gate implements it. An error means the
// request could not be decided (nor recorded), and the hook then blocks.
type Decider interface {
	Check(ctx context.Context, req *warden.Request) (warden.Decision, error)
}

// Opener is a Decider that can leave an ask open for a human. CheckOpen
// decides req and, when the answer is ask, opens an approval on channel (or
// joins the one already pending for the same input and session); the
// decision carries its id. Hosts that cannot ask a person themselves (Codex,
// Cursor before reading a file) use it, so the agent can tell its user which
// approval to answer in warden, then retry the call: the approve-once grant
// lets exactly that call through once.
type Opener interface {
	Decider
	CheckOpen(ctx context.Context, req *warden.Request, channel string) (warden.Decision, error)
}

// Recorder is a Decider that also records what a host reports after a call
// ran (Claude Code's and Codex's PostToolUse, Gemini CLI's AfterTool): for
// an ask the host put to its user, that the user approved it; for a call
// the hook refused, that it ran all the same; for a call with no decision,
// that the hook was not asked. The call's decision and the report share
// TraceID.
type Recorder interface {
	Decider
	Ran(ctx context.Context, call RanCall) error
}

// Ender is a Decider that also hears that a host's session ended (Claude
// Code's SessionEnd), and lets the session's sandbox world and /tmp go.
type Ender interface {
	Decider
	EndSession(ctx context.Context, session string) error
}

// RanCall is a host's report that a tool call ran.
type RanCall struct {
	Host, Session, Tool, ToolUseID string
	TraceID                        string // the trace id its decision was made under
	// Asked says the hook answered an ask by asking the host's user (Claude
	// Code's prompt in a session someone attends), so a call warden asked
	// about that ran was approved there. False where the hook answers an
	// ask with a refusal naming an approval in warden (Codex, Gemini CLI,
	// a headless Claude Code): such a call that ran got past the hook.
	Asked bool
	// Requests is how many requests the call's decision was made of (one
	// per file of a Codex patch, one per URL of a Gemini web_fetch): its
	// last Requests audit rows under TraceID. Zero means one.
	Requests int
}

// Exit statuses Run returns: every host reads 0 as "parse stdout" and 2 as
// "block this call".
const (
	statusOK    = 0
	statusBlock = 2
)

// Runner is the command line that starts `warden exec`, such as
// [/usr/local/bin/warden --home /root/.warden exec]. Hosts that can rewrite
// a shell command get every command the gate allows or sends to the
// sandbox wrapped in it. nil means no sandbox can run here, and such a
// command is answered as ask (or as the host's nearest refusal); empty but
// not nil means none can run and the user's policy runs them on the host.
type Runner []string

// FindRunner returns the Runner for a shell command. Run calls it at most
// once, and only when a host's shell command is allowed or sent to the
// sandbox: a hook whose decision came from the daemon then reads the policy
// file only for those calls. A nil FindRunner, or a nil Runner, means no
// sandbox can run here.
type FindRunner func() Runner

// find is f's Runner; nil for a nil f.
func (f FindRunner) find() Runner {
	if f == nil {
		return nil
	}
	return f()
}

// response is what a hook writes back and the status it exits with.
type response struct {
	stdout []byte // written as is, followed by a newline; nil writes nothing
	stderr string // written followed by a newline; empty writes nothing
	status int
}

// adapter speaks one host's protocol.
type adapter interface {
	// handle parses payload, decides what it implies through d and returns the
	// answer. An error means the payload could not be parsed or decided; Run
	// then answers with block.
	handle(ctx context.Context, payload []byte, d Decider, runner FindRunner) (response, error)
	// block is the host's blocking answer carrying msg.
	block(msg string) response
}

var adapters = map[string]adapter{
	"claude": claude{},
	"codex":  codex{},
	"cursor": cursor{},
	"gemini": gemini{},
}

// HostNames returns the hosts Run, Install and Uninstall know, sorted.
func HostNames() []string {
	names := make([]string, 0, len(adapters))
	for n := range adapters {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Run reads one host payload from stdin, decides every request it implies
// (strongest verdict wins), writes the host's response and returns the exit
// status, 0 or 2. It never panics; on any failure (unknown host, empty,
// oversized or malformed payload, unknown event, a request failing Validate, a
// decider error, a failed write to stdout) it answers with the host's blocking
// form: exit status 2 with a message on stderr (for Cursor also a deny on
// stdout), never an allow.
func Run(ctx context.Context, host string, stdin io.Reader, stdout, stderr io.Writer, d Decider, runner FindRunner) (status int) {
	if runner != nil {
		runner = sync.OnceValue(runner)
	}
	a, ok := adapters[host]
	if !ok {
		a = unknownHost{}
	}
	defer func() {
		if r := recover(); r != nil {
			writeQuietly(a.block("warden hook failed unexpectedly, so the call is blocked"), stdout, stderr)
			status = statusBlock
		}
	}()
	resp, err := answer(ctx, a, host, ok, stdin, d, runner)
	if err != nil {
		resp = a.block(failureMessage(err))
	}
	if err := resp.write(stdout, stderr); err != nil {
		if resp.status != statusBlock {
			writeQuietly(a.block("could not write the hook answer, so the call is blocked"), stdout, stderr)
		}
		return statusBlock
	}
	return resp.status
}

func answer(ctx context.Context, a adapter, host string, known bool, stdin io.Reader, d Decider, runner FindRunner) (response, error) {
	if !known {
		return response{}, warden.Errorf(warden.EInvalid, "unknown hook host %q", host).
			WithHint(fmt.Sprintf("use one of %v", HostNames()))
	}
	if d == nil {
		return response{}, warden.Errorf(warden.EInternal, "the hook has no gate to ask")
	}
	payload, err := readPayload(stdin)
	if err != nil {
		return response{}, err
	}
	return a.handle(ctx, payload, d, runner)
}

func (r response) write(stdout, stderr io.Writer) error {
	if r.stdout != nil {
		if _, err := stdout.Write(append(r.stdout, '\n')); err != nil {
			return err
		}
	}
	if r.stderr != "" {
		if _, err := io.WriteString(stderr, r.stderr+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// writeQuietly writes a blocking answer as well as it can: a writer that fails
// or panics must not turn the block into something else.
func writeQuietly(r response, stdout, stderr io.Writer) {
	defer func() { _ = recover() }()
	_ = r.write(stdout, stderr)
}

// failureMessage is the user-safe text for an error: the message and hint of a
// *warden.Error, never an internal error string.
func failureMessage(err error) string {
	var e *warden.Error
	if errors.As(err, &e) {
		return "warden blocked this call because it could not decide: " + warden.UserMessage(e)
	}
	return "warden blocked this call because it could not decide (internal error)"
}

// blockOnStderr is the blocking answer of hosts that read exit status 2 and a
// message on stderr.
func blockOnStderr(msg string) response {
	return response{stderr: msg, status: statusBlock}
}

// unknownHost answers for a host name Run does not know.
type unknownHost struct{}

func (unknownHost) handle(context.Context, []byte, Decider, FindRunner) (response, error) {
	return response{}, errors.New("unknown host")
}

func (unknownHost) block(msg string) response { return blockOnStderr(msg) }
