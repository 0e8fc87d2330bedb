package cli

import (
	"bytes"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/config"
)

func initCmd(e *env) *cobra.Command {
	var force, yes bool
	c := &cobra.Command{
		Use:   "init",
		Short: "Create a warden home: a commented default policy file and the audit database",
		Args:  rangeArgs(0, 0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			home, err := e.homeDir()
			if err != nil {
				return err
			}
			if old, err := os.ReadFile(home.PolicyPath()); force && !yes && err == nil && !bytes.Equal(old, config.DefaultFile()) {
				ok, err := confirmAtTerminal(e, "Replace "+home.PolicyPath()+" with the default policy (a backup is kept)? Type 'replace' to confirm: ", "replace")
				if err != nil {
					return warden.Errorf(warden.EConflict, "warden init --force replaces your policy file and needs a human's confirmation at a terminal").Wrap(err).
						WithHint("run it in an interactive terminal, or add --yes if you mean it")
				}
				if !ok {
					fmt.Fprintln(e.stdout, "not confirmed: the policy file stays as it is")
					return nil
				}
			}
			res, err := app.InitHome(c.Context(), home, force)
			if err != nil {
				return err
			}
			if res.Backup != "" {
				fmt.Fprintf(e.stdout, "kept the replaced policy file as %s\n", res.Backup)
			}
			if res.Wrote {
				fmt.Fprintf(e.stdout, "wrote %s\n", home.PolicyPath())
			} else {
				fmt.Fprintf(e.stdout, "kept the existing %s (use --force to overwrite it)\n", home.PolicyPath())
			}
			fmt.Fprintf(e.stdout, "audit database %s\n", home.DatabasePath())
			fmt.Fprintf(e.stdout, "chain anchor %s, checkpoint key %s (mode 0600)\n", home.AnchorPath(), home.KeyPath())
			return nil
		},
	}
	c.Flags().BoolVar(&force, "force", false, "overwrite an existing policy file with the defaults (a backup is kept; asks at a terminal)")
	c.Flags().BoolVar(&yes, "yes", false, "with --force: do not ask at a terminal")
	return c
}
