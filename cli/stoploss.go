package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/finance/stoploss"
)

func stoplossCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "stoploss",
		Short: "Stop-loss rules and the monitor that closes positions through the gate",
		Long: `Stop-loss rules close a holding or a position when its price crosses a line:
fixed_percent (threshold below the entry), trailing (threshold below the peak
since entry; it only moves up), time_based (held longer than max age), each
with an optional take profit. The monitor runs inside ` + "`warden serve`" + `, or once
per call with ` + "`warden stoploss run --once`" + ` (for cron). Every close it issues
goes through the full pipeline and is audited like any trade; while the kill
switch is on it waits for a human (stopLoss.killSwitchExits).`,
	}
	var (
		kind       string
		threshold  float64
		takeProfit float64
		maxAge     time.Duration
		basis      string
		entry      float64
	)
	add := &cobra.Command{
		Use:   "add TARGET",
		Short: "Add a rule on a holding (CHAIN:SYMBOL, e.g. base:WETH) or a position id",
		Example: `  warden stoploss add base:WETH --type trailing --threshold 0.05
  warden stoploss add base:cbBTC --type fixed_percent --threshold 0.10 --take-profit 0.25
  warden stoploss add POSITION_ID --type fixed_percent --threshold 0.10 --basis margin
  warden stoploss add base:WETH --type time_based --max-age 24h`,
		Args: rangeArgs(1, 1, "TARGET"),
		RunE: e.withApp(func(c *cobra.Command, a *app.App, args []string) error {
			m, err := a.StopLoss(false)
			if err != nil {
				return err
			}
			r := stoploss.Rule{Target: args[0], Kind: stoploss.Kind(kind), ThresholdPct: threshold, TakeProfitPct: takeProfit,
				MaxAge: maxAge, Basis: basis, Entry: entry, By: "cli"}
			r, err = m.AddRule(c.Context(), r)
			if err != nil {
				return err
			}
			meta := fmt.Sprintf(`{"rule":%q,"target":%q}`, r.ID, r.Target)
			if err := a.Event(c.Context(), "stoploss_rule_added", warden.SevInfo, "stop-loss rule added: "+r.Target, []byte(meta)); err != nil {
				return err
			}
			return e.printJSON(r)
		}),
	}
	f := add.Flags()
	f.StringVar(&kind, "type", "", "fixed_percent, trailing or time_based")
	f.Float64Var(&threshold, "threshold", 0, "stop distance as a fraction (0.10 is 10 %), from the entry (fixed_percent) or the peak (trailing)")
	f.Float64Var(&takeProfit, "take-profit", 0, "also exit this fraction above the entry (0: none)")
	f.DurationVar(&maxAge, "max-age", 0, "time_based: how long the target may be held, e.g. 24h")
	f.StringVar(&basis, "basis", "", "price (default) or margin: for a leveraged position, the move times the leverage")
	f.Float64Var(&entry, "entry", 0, "entry price of a holding (default: the current price)")

	list := &cobra.Command{
		Use:   "list",
		Short: "Print the active rules as JSON lines",
		Args:  rangeArgs(0, 0, "no arguments"),
		RunE: e.withApp(func(c *cobra.Command, a *app.App, _ []string) error {
			rules, err := a.Store.StopLoss().Rules(c.Context())
			if err != nil {
				return err
			}
			for _, r := range rules {
				if err := e.printJSON(r); err != nil {
					return err
				}
			}
			return nil
		}),
	}
	remove := &cobra.Command{
		Use:   "remove ID",
		Short: "Remove a rule (it stays in the database, marked removed)",
		Args:  rangeArgs(1, 1, "ID"),
		RunE: e.withApp(func(c *cobra.Command, a *app.App, args []string) error {
			if err := a.Store.StopLoss().RemoveRule(c.Context(), args[0]); err != nil {
				return err
			}
			meta := fmt.Sprintf(`{"rule":%q}`, args[0])
			return a.Event(c.Context(), "stoploss_rule_removed", warden.SevInfo, "stop-loss rule removed: "+args[0], []byte(meta))
		}),
	}
	var once, wait bool
	run := &cobra.Command{
		Use:   "run --once",
		Short: "Check every rule once against current prices and close what triggered",
		Long: `Check every rule once: read the portfolio and prices, update each trailing
stop's peak, and send the closes that triggered through the gate. Prints one
JSON line per watched target. Use it from cron; ` + "`warden serve`" + ` runs the same
monitor continuously.`,
		Args: rangeArgs(0, 0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			if !once {
				return usageError(c, "pass --once (the continuous monitor runs in `warden serve`)")
			}
			a, err := e.open(c.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			m, err := a.StopLoss(wait)
			if err != nil {
				return err
			}
			results, err := m.RunOnce(c.Context())
			for _, r := range results {
				line := struct {
					Target   string           `json:"target"`
					Rule     string           `json:"rule,omitempty"`
					Outcome  stoploss.Outcome `json:"outcome"`
					Decision *warden.Decision `json:"decision,omitempty"`
					Fill     *finance.Fill    `json:"fill,omitempty"`
					Deferred bool             `json:"deferred,omitempty"`
					Error    string           `json:"error,omitempty"`
				}{Target: r.Target, Rule: r.Rule, Outcome: r.Outcome, Decision: r.Decision, Fill: r.Fill, Deferred: r.Deferred}
				if r.Err != nil {
					line.Error = warden.UserMessage(r.Err)
				}
				if perr := e.printJSON(line); perr != nil {
					return perr
				}
			}
			return err
		},
	}
	run.Flags().BoolVar(&once, "once", false, "check once and exit")
	run.Flags().BoolVar(&wait, "wait", false, "when a close asks (the kill switch is on), wait for a human's answer")
	c.AddCommand(add, list, remove, run)
	return c
}
