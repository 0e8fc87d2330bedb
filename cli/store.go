package cli

import (
	"github.com/spf13/cobra"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
)

// openStoreOnly opens the database without reading the policy file, for
// commands that must work even when the policy is broken (audit verify).
func openStoreOnly(c *cobra.Command, home app.Home) (interface {
	warden.AuditStore
	Close() error
}, error) {
	return app.OpenStore(c.Context(), home)
}
