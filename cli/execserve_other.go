//go:build !linux || !(amd64 || arm64)

package cli

import (
	"context"

	"github.com/agentwarden/warden/app"
)

// serveExecs does nothing: session sandbox worlds exist on Linux only.
func serveExecs(context.Context, app.Home, string, string, string) {}
