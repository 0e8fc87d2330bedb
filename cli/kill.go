package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/safety"
)

func killCmd(e *env) *cobra.Command {
	var reason string
	c := &cobra.Command{
		Use:   "kill",
		Short: "Turn the emergency stop on: every tier 2+ action is denied until `warden unkill`",
		Long: `Turn the emergency stop on. While it is on, every action of tier 2 or above is
denied, for every agent that uses this home. Turning it on needs no
confirmation; turning it off (warden unkill) needs a human at a terminal.`,
		Args: rangeArgs(0, 0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			home, err := e.homeDir()
			if err != nil {
				return err
			}
			// The stop's own state file: a broken or missing policy file
			// cannot block it.
			if err := app.SetKillWith(home, e.storeDSN, true, currentUser(), reason, time.Now()); err != nil {
				return err
			}
			meta, _ := json.Marshal(map[string]string{"reason": reason, "by": currentUser()})
			if err := e.event(c.Context(), warden.EventKillSwitchOn, warden.SevCritical, "emergency stop turned on", meta); err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, "emergency stop is ON: tier 2+ actions are denied until a human runs `warden unkill` at a terminal")
			return nil
		},
	}
	c.Flags().StringVar(&reason, "reason", "", "why, for the audit log")
	return c
}

func unkillCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "unkill",
		Short: "Turn the emergency stop off (tier 4: a human must confirm at a terminal)",
		Args:  rangeArgs(0, 0, "no arguments"),
		RunE: e.withApp(func(c *cobra.Command, a *app.App, _ []string) error {
			req := &warden.Request{Capability: warden.CapTool, Action: "call", Resource: safety.ReleaseTool, RequestedBy: "cli:" + currentUser()}
			d, err := a.Gate.Check(c.Context(), req)
			if err != nil {
				return err
			}
			switch d.Verdict {
			case warden.Allow:
			case warden.Ask:
				ok, err := confirmAtTerminal(e, "Turn the emergency stop OFF and let agents act again? Type 'unkill' to confirm: ", "unkill")
				if err != nil {
					return err
				}
				if !ok {
					fmt.Fprintln(e.stdout, "not confirmed: the emergency stop stays on")
					e.status = exitDeny
					return nil
				}
			default:
				fmt.Fprintln(e.stdout, "denied: "+d.Reason)
				e.status = exitDeny
				return nil
			}
			if err := app.SetKillWith(a.Home, e.storeDSN, false, currentUser(), "", a.Now()); err != nil {
				return err
			}
			meta, _ := json.Marshal(map[string]string{"trace_id": d.TraceID, "confirmed_by": currentUser(), "channel": "terminal"})
			if err := a.Event(c.Context(), warden.EventKillSwitchOff, warden.SevCritical, "emergency stop turned off after confirmation at a terminal", meta); err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, "emergency stop is OFF")
			return nil
		}),
	}
}

// confirmAtTerminal asks on the controlling terminal and reports whether the
// answer was exactly want. With no terminal it refuses: an agent piping "yes"
// into stdin is not a human.
func confirmAtTerminal(e *env, prompt, want string) (bool, error) {
	tty, err := openTerminal()
	if err != nil {
		return false, warden.Errorf(warden.EConflict, "this needs a human at a terminal, and there is none").Wrap(err).
			WithHint("run it yourself in an interactive terminal")
	}
	defer tty.Close()
	fmt.Fprint(tty, prompt)
	line, err := bufio.NewReader(io.LimitReader(tty, 256)).ReadString('\n')
	if err != nil && line == "" {
		return false, nil
	}
	return strings.TrimSpace(line) == want, nil
}

func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return fmt.Sprintf("uid:%d", os.Getuid())
}
