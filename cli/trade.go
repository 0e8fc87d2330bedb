package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/finance"
)

func tradeCmd(e *env) *cobra.Command {
	var (
		req    warden.Request
		params []string
		dryRun bool
		wait   bool
	)
	c := &cobra.Command{
		Use:   "trade ACTION TOKEN",
		Short: "Check a trade through every stage and execute it on the configured backend",
		Long: `Check a trade through the gate (the global stages and the finance stack:
token safety, recipients, sizing, exposure, slippage, the risk floor) and, when
it is allowed, execute it on the configured backend (the embedded paper
exchange by default). ACTION is one of ` + strings.Join(finance.Actions, ", ") + `.

An allowed trade reserves its amount in the daily ledger atomically; if the
backend does not execute it, the reservation is released. --dry-run decides
and records without reserving or executing anything.

Prints one JSON object: the decision, and the fill when it executed. Exit
status: 0 executed (or allowed, with --dry-run), 2 denied, 3 waiting for a
human (approve it and run the same command again, or use --wait), 1 when
nothing could be decided or the backend failed.`,
		Example: `  warden trade buy ETH --param chain=base --param amount_usd=250
  warden trade swap cbBTC --param chain=base --param token_in=WETH --param amount_usd=400
  warden trade perp_open ETH-PERP --param chain=arbitrum --param amount_usd=300 --param leverage=5
  warden trade sell ETH --param chain=base --param amount_usd=100 --dry-run`,
		Args: rangeArgs(2, 2, "ACTION TOKEN"),
		RunE: func(c *cobra.Command, args []string) error {
			r, err := buildRequest(c, e, append([]string{warden.CapTrade}, args...), req, params)
			if err != nil {
				return err
			}
			a, err := e.open(c.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			t, err := a.Trader()
			if err != nil {
				return err
			}
			ex, err := t.Execute(c.Context(), r, finance.DecideOptions{DryRun: dryRun, Wait: wait})
			if ex.Decision.TraceID != "" {
				perr := error(nil)
				if e.forPeople(e.asJSON) {
					perr = writeTrade(e.stdout, ex, colour())
				} else {
					perr = e.printJSON(ex)
				}
				if perr != nil {
					return perr
				}
				e.status = verdictStatus(ex.Decision.Verdict)
			}
			return err
		},
	}
	f := c.Flags()
	f.StringArrayVar(&params, "param", nil, "order parameter `KEY=VALUE`: chain, amount_usd, token_in, token_out, leverage, side, recipient, max_slippage, win_probability, payoff_ratio, position; repeatable")
	f.StringVar(&req.Tool, "tool", "", "tool name whose tier governs the request")
	f.BoolVar(&req.Autonomous, "autonomous", false, "no human is in the loop this turn")
	f.StringVar(&req.RequestedBy, "requested-by", "", "who asks: agent, skill:NAME, cron:JOB")
	f.StringVar(&req.Session, "session", "", "session id")
	f.StringVar(&req.Context, "context", "", "why the agent wants this")
	f.BoolVar(&dryRun, "dry-run", false, "decide and record, but reserve and execute nothing")
	f.BoolVar(&wait, "wait", false, "when the answer is ask, open an approval and wait for a human's answer")
	f.BoolVar(&e.asJSON, "json", false, "print JSON at a terminal too (it always is when piped)")
	return c
}

func portfolioCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "portfolio",
		Short: "Print the trading backend's portfolio and exposure (JSON when piped or with --json)",
		Args:  rangeArgs(0, 0, "no arguments"),
		RunE: e.withApp(func(c *cobra.Command, a *app.App, _ []string) error {
			b, err := a.Backend()
			if err != nil {
				return err
			}
			p, err := b.Portfolio(c.Context())
			if err != nil {
				return warden.Errorf(warden.EUnavailable, "the %s backend could not report the portfolio", b.Name()).Wrap(err)
			}
			if e.forPeople(e.asJSON) {
				return writePortfolio(e.stdout, b.Name(), &p)
			}
			return e.printJSON(struct {
				Backend  string             `json:"backend"`
				Value    warden.USD         `json:"value_usd"`
				Exposure finance.Exposure   `json:"exposure"`
				Holdings []finance.Holding  `json:"holdings"`
				Position []finance.Position `json:"positions"`
			}{b.Name(), p.ValueUSD(), p.Exposure(), p.Holdings, p.Positions})
		}),
	}
	c.Flags().BoolVar(&e.asJSON, "json", false, "print JSON at a terminal too (it always is when piped)")
	return c
}
