package mcp

import (
	"context"
	"io"
	"log/slog"

	"github.com/agentwarden/warden"
)

// allowAll is a Gate that allows everything and records nothing.
type allowAll struct{}

func (allowAll) Check(context.Context, *warden.Request, *Distrust) (warden.Decision, error) {
	return warden.Decision{Verdict: warden.Allow}, nil
}
func (allowAll) Preview(context.Context, *warden.Request) warden.Decision {
	return warden.Decision{Verdict: warden.Allow}
}
func (allowAll) Await(_ context.Context, _ *warden.Request, d warden.Decision) (warden.Decision, error) {
	return d, nil
}
func (allowAll) Answer(context.Context, string, bool, string) error { return nil }
func (allowAll) Record(context.Context, Event) error                { return nil }

func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
