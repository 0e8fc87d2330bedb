package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden/app"
)

func initCmd(e *env) *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:   "init",
		Short: "Create a warden home: a commented default policy file and the audit database",
		Args:  rangeArgs(0, 0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			home, err := e.homeDir()
			if err != nil {
				return err
			}
			created, err := app.Init(c.Context(), home, force)
			if err != nil {
				return err
			}
			if created {
				fmt.Fprintf(e.stdout, "wrote %s\n", home.PolicyPath())
			} else {
				fmt.Fprintf(e.stdout, "kept the existing %s (use --force to overwrite it)\n", home.PolicyPath())
			}
			fmt.Fprintf(e.stdout, "audit database %s\n", home.DatabasePath())
			return nil
		},
	}
	c.Flags().BoolVar(&force, "force", false, "overwrite an existing policy file with the defaults")
	return c
}
