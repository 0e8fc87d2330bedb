package app

import (
	"context"
	"os"

	"github.com/agentwarden/warden/hook"
)

// WithHookEnv returns ctx carrying the environment the agent host started
// the hook with, which the hook adapters read (Claude Code says there
// whether a person is at its prompt): environ, the client's for a hook a
// session's supervisor answers, or this process's own when nil.
func WithHookEnv(ctx context.Context, environ []string) context.Context {
	if environ == nil {
		environ = os.Environ()
	}
	return hook.WithHostEnv(ctx, environ)
}
