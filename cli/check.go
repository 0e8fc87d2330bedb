package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/gate"
	"github.com/agentwarden/warden/shellguard"
)

func checkCmd(e *env) *cobra.Command {
	var (
		req      warden.Request
		params   []string
		exitCode bool
		explain  bool
		remote   bool
		wait     bool
		dryRun   bool
	)
	c := &cobra.Command{
		Use:   "check [CAPABILITY ACTION [RESOURCE]]",
		Short: "Decide one request and print the decision (JSON when piped)",
		Long: `Decide one request and print the decision as one JSON object on stdout;
at a terminal, a short summary for a person (--json: JSON there too).

With no arguments, the request is read as JSON from stdin, e.g.
  {"capability":"tool","action":"call","resource":"get_price","autonomous":true}

A check is a question: it reserves nothing. For a request that moves funds
the decision says whether the amount fits the daily spend cap now, but the
ledger is debited only by a trade that executes (warden trade), which checks
the cap again atomically. Every decision is recorded in the audit log before
it is printed. The exit
status is 0 when a decision was made (with --exit-code: 0 allow, 2 deny, 3 ask,
4 sandbox) and 1 when no decision could be made; then nothing is printed on
stdout and the caller must treat the request as denied.`,
		Example: `  warden check tool call get_price
  warden check trade swap ETH --param amount_usd=50 --tool swap_token --autonomous
  echo '{"capability":"tool","action":"call","resource":"transfer_token"}' | warden check`,
		Args: rangeArgs(0, 3, "no arguments (JSON on stdin) or CAPABILITY ACTION [RESOURCE]"),
		RunE: func(c *cobra.Command, args []string) error {
			r, err := buildRequest(c, e, args, req, params)
			if err != nil {
				return err
			}
			if remote {
				if explain {
					return usageError(c, "--explain works in this process only; drop --remote")
				}
				return e.checkRemote(c, r, wait, exitCode)
			}
			a, err := e.open(c.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			// A check is only a question: it never reserves the daily cap
			// or a rate slot (--dry-run is kept for old scripts).
			opt := gate.CheckOptions{DryRun: true}
			if wait {
				opt.Approval = "cli"
			}
			d, err := a.Gate.CheckWith(c.Context(), r, opt)
			if wait && err == nil && d.Verdict == warden.Ask {
				fmt.Fprintf(e.stderr, "warden: waiting for approval %s (`warden approvals approve %[1]s` or the web console)\n", d.ApprovalID)
				d, err = awaitQuestion(c.Context(), a.Gate, r, d)
			}
			if err != nil {
				return err
			}
			if err := e.printDecision(d, exitCode); err != nil {
				return err
			}
			if explain && r.Capability == warden.CapShell {
				env := shellguard.Env{Cwd: r.Cwd, Autonomous: r.Autonomous, Explain: true}
				sp, err := app.ExplainPolicy(a.Home, a.Policy, r.Cwd)
				if err != nil {
					fmt.Fprintf(e.stderr, "project policy: %v\n", err)
				}
				fmt.Fprint(e.stderr, shellguard.Classify(r.Resource, env, sp).Explain())
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringArrayVar(&params, "param", nil, "request parameter `KEY=VALUE` (VALUE is JSON when it parses as JSON, else a string); repeatable")
	f.StringVar(&req.Tool, "tool", "", "tool name whose tier governs the request")
	f.BoolVar(&req.Autonomous, "autonomous", false, "no human is in the loop this turn")
	f.StringVar(&req.RequestedBy, "requested-by", "", "who asks: agent, skill:NAME, cron:JOB, heartbeat, stoploss")
	f.StringVar(&req.Session, "session", "", "session id")
	f.StringVar(&req.Context, "context", "", "why the agent wants this")
	f.StringVar(&req.Cwd, "cwd", "", "working directory the request is relative to (default: the current directory)")
	f.BoolVar(&e.asJSON, "json", false, "print the decision as JSON at a terminal too (it always is when piped)")
	f.BoolVar(&exitCode, "exit-code", false, "encode the verdict in the exit status: 0 allow, 2 deny, 3 ask, 4 sandbox")
	f.BoolVar(&remote, "remote", false, "ask the running daemon (warden serve) instead of deciding in this process")
	f.BoolVar(&wait, "wait", false, "when the answer is ask, open an approval and wait for a human's answer; print the decision it ends in")
	f.BoolVar(&dryRun, "dry-run", false, "no effect: a check never reserves anything in the daily spend ledger")
	_ = f.MarkHidden("dry-run")
	f.BoolVar(&explain, "explain", false, "for a shell command, print on stderr how the guard read it: argv after unwrapping, path zones, rules")
	return c
}

// awaitQuestion waits for the approval a question's ask opened and returns the
// decision it ends in; an approved question is decided again, still
// reserving nothing.
func awaitQuestion(ctx context.Context, g *gate.Gate, r *warden.Request, d warden.Decision) (warden.Decision, error) {
	approved, denied, err := g.WaitAnswer(ctx, r, d)
	if err != nil || !approved {
		return denied, err
	}
	return g.CheckWith(ctx, r, gate.CheckOptions{DryRun: true})
}

// checkRemote decides r through the daemon and prints the decision.
func (e *env) checkRemote(c *cobra.Command, r *warden.Request, wait, exitCode bool) error {
	home, err := e.homeDir()
	if err != nil {
		return err
	}
	d, err := app.CheckRemote(c.Context(), home, r, wait)
	if err != nil {
		return err
	}
	return e.printDecision(d, exitCode)
}

// printDecision writes d as one JSON line, or for a person at a terminal
// (without --json) a short summary; with exitCode the verdict also becomes
// the exit status.
func (e *env) printDecision(d warden.Decision, exitCode bool) error {
	if e.forPeople(e.asJSON) {
		if exitCode {
			e.status = verdictStatus(d.Verdict)
		}
		if err := writeDecision(e.stdout, d, colour()); err != nil {
			return warden.Errorf(warden.EUnavailable, "write decision").Wrap(err)
		}
		return nil
	}
	out, err := json.Marshal(d)
	if err != nil {
		return warden.Errorf(warden.EInternal, "encode decision").Wrap(err)
	}
	if _, err := e.stdout.Write(append(out, '\n')); err != nil {
		return warden.Errorf(warden.EUnavailable, "write decision").Wrap(err)
	}
	if exitCode {
		e.status = verdictStatus(d.Verdict)
	}
	return nil
}

// buildRequest makes the request from the command line, or from stdin when no
// positional arguments are given.
func buildRequest(c *cobra.Command, e *env, args []string, flags warden.Request, params []string) (*warden.Request, error) {
	if len(args) == 0 {
		for _, name := range []string{"param", "tool", "autonomous", "requested-by", "session", "context", "cwd"} {
			if c.Flags().Changed(name) {
				return nil, usageError(c, "--"+name+" needs CAPABILITY ACTION [RESOURCE]; a JSON request on stdin carries its own fields")
			}
		}
		return warden.DecodeRequest(e.stdin)
	}
	if len(args) < 2 {
		return nil, usageError(c, "need CAPABILITY ACTION [RESOURCE]")
	}
	r := flags
	r.Capability, r.Action = args[0], args[1]
	if len(args) == 3 {
		r.Resource = args[2]
	}
	for _, p := range params {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, usageError(c, "--param "+p+" is not KEY=VALUE")
		}
		if r.Params == nil {
			r.Params = map[string]json.RawMessage{}
		}
		r.Params[k] = paramValue(v)
	}
	if r.Cwd == "" { // relative paths are judged against where warden runs
		r.Cwd, _ = os.Getwd()
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// paramValue keeps VALUE as JSON when it is valid JSON, else encodes it as a
// JSON string.
func paramValue(v string) json.RawMessage {
	if json.Valid([]byte(v)) {
		return json.RawMessage(v)
	}
	b, _ := json.Marshal(v)
	return b
}
