package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden/app"
)

func migrateCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Bring a fleet's PostgreSQL database to the schema this warden knows",
		Long: `Applies the fleet database's migrations (embedded in warden, versioned), each in
its own transaction; daemons migrating at once wait for each other. Run it
once per upgrade, as the role that owns warden's tables (see docs/fleet.md),
before starting the new warden: a daemon refuses a schema it does not know.
The database is the policy's store.dsn, or --store.`,
		Example: `  PGPASSWORD=… warden migrate --store postgres://warden_owner@db.internal/warden`,
		Args:    rangeArgs(0, 0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			home, err := e.homeDir()
			if err != nil {
				return err
			}
			from, to, err := app.Migrate(c.Context(), home, e.storeDSN)
			if err != nil {
				return err
			}
			if from == to {
				fmt.Fprintf(e.stdout, "the fleet database is at schema version %d, the one this warden knows; nothing to do\n", to)
				return nil
			}
			fmt.Fprintf(e.stdout, "migrated the fleet database from schema version %d to %d\n", from, to)
			return nil
		},
	}
}
