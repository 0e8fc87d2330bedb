package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/config"
)

func configCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "config",
		Short: "Read, change and validate the policy file (warden.yaml)",
		Args:  rangeArgs(0, 0, "a subcommand: list, get, set or validate"),
		RunE:  func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(
		&cobra.Command{
			Use:   "list",
			Short: "List every key with its effective value",
			Args:  rangeArgs(0, 0, "no arguments"),
			RunE: func(c *cobra.Command, _ []string) error {
				l, err := loadConfig(e)
				if err != nil {
					return err
				}
				if e.asJSON {
					return writeConfigJSON(e.stdout, l.List())
				}
				for _, kv := range l.List() {
					fmt.Fprintf(e.stdout, "%s = %s\n", kv.Key, config.FormatValue(kv.Value))
				}
				return nil
			},
		},
		&cobra.Command{
			Use:   "get KEY",
			Short: "Print the effective value of a dotted key, as JSON",
			Args:  rangeArgs(1, 1, "one dotted KEY, e.g. safety.dailySpendCap"),
			RunE: func(c *cobra.Command, args []string) error {
				l, err := loadConfig(e)
				if err != nil {
					return err
				}
				v, err := l.Get(args[0])
				if err != nil {
					return err
				}
				fmt.Fprintln(e.stdout, config.FormatValue(v))
				return nil
			},
		},
		&cobra.Command{
			Use:   "set KEY VALUE",
			Short: "Change one key; VALUE is a scalar, or a JSON/YAML list or map",
			Example: `  warden config set safety.dailySpendCap 1500
  warden config set safety.blockedTokens '["SQUID","SAFEMARS","FOO"]'
  warden config set tools.tiers.deploy_site 4`,
			Args: rangeArgs(2, 2, "KEY VALUE"),
			RunE: func(c *cobra.Command, args []string) error {
				key, value := args[0], args[1]
				if strings.EqualFold(key, "safety.killSwitchActive") {
					return warden.Errorf(warden.EInvalid, "the emergency stop is not changed with config set").
						WithHint("use `warden kill` to turn it on and `warden unkill` (at a terminal) to turn it off")
				}
				home, err := e.homeDir()
				if err != nil {
					return err
				}
				if err := app.CheckSetting(key, value); err != nil {
					return err
				}
				if err := config.Set(home.PolicyPath(), key, value); err != nil {
					return err
				}
				meta, _ := json.Marshal(map[string]string{"key": key, "value": value, "by": currentUser()})
				if err := e.event(c.Context(), warden.EventConfigChanged, warden.SevWarn, "policy changed: "+key, meta); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "%s set\n", key)
				return nil
			},
		},
		&cobra.Command{
			Use:   "validate",
			Short: "Check the policy file without running anything; exit 1 on any problem",
			Args:  rangeArgs(0, 0, "no arguments"),
			RunE: func(c *cobra.Command, _ []string) error {
				home, err := e.homeDir()
				if err != nil {
					return err
				}
				l, err := config.Validate(home.PolicyPath())
				if l != nil {
					for _, p := range l.Problems {
						fmt.Fprintln(e.stderr, p.Error())
					}
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "%s is valid\n", home.PolicyPath())
				return nil
			},
		},
	)
	if list, _, err := c.Find([]string{"list"}); err == nil && list != c {
		list.Flags().BoolVar(&e.asJSON, "json", false, "one JSON object of every key and its value, in file order")
	}
	return c
}

func loadConfig(e *env) (*config.Loaded, error) {
	home, err := e.homeDir()
	if err != nil {
		return nil, err
	}
	l, err := config.Load(home.PolicyPath())
	if err != nil {
		return nil, err
	}
	for _, p := range l.Problems {
		fmt.Fprintln(e.stderr, "warning: "+p.Error()+" (this section uses its defaults)")
	}
	return l, nil
}
