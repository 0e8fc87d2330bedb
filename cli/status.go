package cli

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
)

// statusCmd shows where the commands of each agent host run: whether
// warden's hook is installed for it and whether what it allows is
// contained in a sandbox.
func statusCmd(e *env) *cobra.Command {
	var jsonOut bool
	c := &cobra.Command{
		Use:   "status",
		Short: "Which agent hosts have warden's hook, and whether their commands run contained",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			home, err := e.homeDir()
			if err != nil {
				return err
			}
			p, _, err := home.LoadPolicy()
			if err != nil {
				return err
			}
			projectDir, err := os.Getwd()
			if err != nil {
				return warden.Errorf(warden.EInvalid, "cannot find the current directory").Wrap(err)
			}
			userHome, _ := os.UserHomeDir()
			hosts := app.Containment(p, projectDir, userHome)
			readOnly := app.ProjectReadOnly(projectDir, userHome)
			if jsonOut {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				out := map[string]any{"home": home.Abs(), "hosts": hosts}
				if readOnly != "" {
					out["project_read_only"] = readOnly
				}
				return enc.Encode(out)
			}
			fmt.Fprintf(e.stdout, "home: %s\n", home.Abs())
			if readOnly != "" {
				fmt.Fprintf(e.stdout, "project: read-only to the agent's commands, as git on this machine runs code of it by itself (%s); point that setting at a program installed outside the project to let them write it\n", readOnly)
			}
			for _, h := range hosts {
				installed := "hook not installed"
				if h.Installed != "" {
					installed = "hook in " + h.Installed
				}
				contained := "contained"
				if !h.Contained {
					contained = "NOT contained"
				}
				fmt.Fprintf(e.stdout, "%-7s %s; %s: %s\n", h.Host, installed, contained, h.Why)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&jsonOut, "json", false, "print JSON")
	return c
}
