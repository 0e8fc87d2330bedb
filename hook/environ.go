package hook

import (
	"context"
	"strings"
)

// hostEnvKey is the context key of the host's environment.
type hostEnvKey struct{}

// WithHostEnv returns ctx carrying env, the environment the agent host
// started the hook with (for a hook a session's supervisor answers, the
// client's environment, not the supervisor's). Adapters read there what a
// host says about itself, such as whether a person is at its prompt; with
// none in ctx they cannot tell.
func WithHostEnv(ctx context.Context, env []string) context.Context {
	return context.WithValue(ctx, hostEnvKey{}, env)
}

// hostEnv is name's value in the host's environment (the last one wins, as
// in a shell); ok is false when it is not set or ctx carries none.
func hostEnv(ctx context.Context, name string) (value string, ok bool) {
	env, _ := ctx.Value(hostEnvKey{}).([]string)
	for _, kv := range env {
		if k, v, found := strings.Cut(kv, "="); found && k == name {
			value, ok = v, true
		}
	}
	return value, ok
}

// attendance is whether a person is at the host's own prompt to answer an
// ask.
type attendance int

const (
	// attendanceUnknown: the host does not say.
	attendanceUnknown attendance = iota
	// attended: an interactive session; the host's prompt answers an ask.
	attended
	// unattended: a headless run (claude -p, the SDK): nobody answers the
	// host's prompt, which turns an ask into its own denial.
	unattended
)

// claudeAttendance reads CLAUDE_CODE_SESSION_ATTENDED, which Claude Code
// sets for its hooks and tools: "1" in an interactive session, "0" in a
// headless one (-p, the SDK).
func claudeAttendance(ctx context.Context) attendance {
	switch v, _ := hostEnv(ctx, "CLAUDE_CODE_SESSION_ATTENDED"); v {
	case "1":
		return attended
	case "0":
		return unattended
	}
	return attendanceUnknown
}
