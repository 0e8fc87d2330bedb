package hook

import (
	"bytes"
	"context"
	"io"
	"time"
)

// boundedGrace is how long Bounded waits, once its context has ended, for
// an answer that may still come (a decider that saw the deadline and is
// returning its error) before it blocks the call itself.
var boundedGrace = time.Second

// Bounded runs one hook invocation (run, writing the host's answer to the
// writers it is given) and returns its exit status, but never later than
// ctx's end plus a moment: a hook still deciding then (stuck in a system
// call, waiting on a lock or a file that does not see the context) answers
// in host's blocking form instead, since a host that times the hook out
// lets the call through (Codex, Gemini CLI). What run writes is passed on
// only when it finishes in time, so a late answer never follows the block.
func Bounded(ctx context.Context, host string, stdout, stderr io.Writer, run func(stdout, stderr io.Writer) int) int {
	type result struct {
		status   int
		out, err bytes.Buffer
	}
	done := make(chan *result, 1)
	go func() {
		r := &result{status: statusBlock}
		defer func() {
			if recover() != nil {
				r.out.Reset()
				r.err.Reset()
				r.status = blockIn(host, "warden hook failed unexpectedly, so the call is blocked", &r.out, &r.err)
			}
			done <- r
		}()
		r.status = run(&r.out, &r.err)
	}()
	var r *result
	select {
	case r = <-done:
	case <-ctx.Done():
		select {
		case r = <-done:
		case <-time.After(boundedGrace):
			return blockIn(host, "warden could not decide within the hook's time limit, so the call is blocked; try again, and if it keeps happening look for a warden process that is stuck or a home on a disk that does not answer", stdout, stderr)
		}
	}
	if _, err := stdout.Write(r.out.Bytes()); err != nil {
		return statusBlock
	}
	_, _ = stderr.Write(r.err.Bytes())
	return r.status
}

// blockIn writes host's blocking answer with msg and returns its status.
func blockIn(host, msg string, stdout, stderr io.Writer) int {
	a, ok := adapters[host]
	if !ok {
		a = unknownHost{}
	}
	resp := a.block(msg)
	writeQuietly(resp, stdout, stderr)
	return resp.status
}
