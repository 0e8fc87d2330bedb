package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/internal/execwire"
	"github.com/agentwarden/warden/sandbox"
)

func sandboxCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "sandbox",
		Short: "Long-lived sandboxes, and what this kernel can isolate with",
		Long: `A long-lived sandbox keeps its namespaces, mounts and limits between
commands, so each command in it starts faster than a one-shot warden exec.
A supervisor keeps it: it checks its health, marks it degraded when checks
fail, restarts it when its init dies or checks keep failing, and records
every transition (uninitialized, initializing, ready, degraded, recovering,
stopping, stopped) in the sandbox's event log and the audit log.`,
	}
	var jsonOut bool
	c.PersistentFlags().BoolVar(&jsonOut, "json", false, "print JSON")
	show := func(v any, text func()) error {
		if jsonOut {
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(v)
		}
		text()
		return nil
	}
	showInfo := func(infos ...sandbox.Info) func() {
		return func() {
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSTATE\tMODE\tPROFILE\tSINCE\tHEALTH")
			for _, i := range infos {
				health := i.Health
				if health == "" {
					health = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", i.Name, i.State, i.Mode, i.Profile, i.Since.Local().Format(time.DateTime), health)
			}
			tw.Flush()
			for _, i := range infos {
				for _, w := range i.Warnings {
					fmt.Fprintf(e.stderr, "warden: sandbox %s: %s\n", i.Name, w)
				}
			}
		}
	}

	var (
		profile string
		o       app.ExecOverride
		sizes   = map[string]*string{}
	)
	start := &cobra.Command{
		Use:   "start NAME",
		Short: "Start a long-lived sandbox around the current directory",
		Args:  cobra.ExactArgs(1),
		RunE: e.withApp(func(c *cobra.Command, a *app.App, args []string) error {
			if err := finishOverrides(c.Flags(), sizes, &o); err != nil {
				return err
			}
			info, err := a.SandboxStart(c.Context(), args[0], profile, "", o)
			if err != nil {
				return err
			}
			return show(info, showInfo(info))
		}),
	}
	start.Flags().StringVar(&profile, "profile", "", "sandbox profile from the policy file (default \"default\")")
	addOverrideFlags(start.Flags(), &o, sizes)

	var (
		base       warden.Request
		eo         app.ExecOverride
		execSize   = map[string]*string{}
		execNoWait bool
	)
	execC := &cobra.Command{
		Annotations: errorStatusIs(exitExecError),
		Use:         "exec NAME -- CMD [ARG…]",
		Short:       "Run a command in a running sandbox (decided and audited like warden exec)",
		Long: `Decide a command through the gate, exactly as warden exec does, and run it
in the running sandbox NAME. When a human must approve it, wait for the
answer (--no-wait: exit 126 at once). Exit statuses are warden exec's.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			if err := parseExecSizes(c.Flags(), execSize, &eo); err != nil {
				return err
			}
			setChanged(c.Flags(), &eo)
			a, err := e.open(c.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			cmdArgs := args[1:]
			if dash := c.ArgsLenAtDash(); dash != 1 {
				return warden.Errorf(warden.EInvalid, "write the command after --, like: warden sandbox exec %s -- make test", args[0])
			}
			var wait *app.AskWait
			if !execNoWait {
				wait = e.askWait("exec")
			}
			res, err := a.SandboxExec(c.Context(), args[0], app.ExecRequest{
				Args: cmdArgs, Override: eo, Base: base, Wait: wait, Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr,
			})
			e.status = reportExec(e, res, err)
			return nil
		},
	}
	ef := execC.Flags() // flags may follow NAME; the command follows --
	eo.Timeout = ef.Duration("timeout", 0, "wall-clock limit for this command (default: the sandbox's)")
	execSize["output-limit"] = ef.String("output-limit", "", "cap on stdout, and on stderr (default: the sandbox's)")
	ef.BoolVar(&execNoWait, "no-wait", false, "when a human must approve, exit 126 at once instead of waiting for the answer")
	addRequesterFlags(ef, &base)

	status := &cobra.Command{
		Use:   "status [NAME]",
		Short: "Show one sandbox, or every sandbox",
		Args:  cobra.MaximumNArgs(1),
		RunE: e.withApp(func(c *cobra.Command, a *app.App, args []string) error {
			m := a.Sandboxes()
			if len(args) == 1 {
				info, err := m.Status(args[0])
				if err != nil {
					return app.SandboxError(err)
				}
				return show(info, showInfo(info))
			}
			infos, err := m.List("")
			if err != nil {
				return err
			}
			return show(infos, showInfo(infos...))
		}),
	}
	stop := &cobra.Command{
		Use:   "stop NAME",
		Short: "Stop a sandbox: everything in it is killed",
		Args:  cobra.ExactArgs(1),
		RunE: e.withApp(func(c *cobra.Command, a *app.App, args []string) error {
			info, err := a.Sandboxes().Stop(c.Context(), args[0])
			if err != nil {
				return app.SandboxError(err)
			}
			return show(info, showInfo(info))
		}),
	}
	recoverC := &cobra.Command{
		Use:   "recover NAME",
		Short: "Restart a sandbox (through its supervisor, or with a new one)",
		Args:  cobra.ExactArgs(1),
		RunE: e.withApp(func(c *cobra.Command, a *app.App, args []string) error {
			info, err := a.Sandboxes().Recover(c.Context(), args[0])
			if err != nil {
				return app.SandboxError(err)
			}
			return show(info, showInfo(info))
		}),
	}
	events := &cobra.Command{
		Use:   "events NAME",
		Short: "Show a sandbox's lifecycle transitions, oldest first",
		Args:  cobra.ExactArgs(1),
		RunE: e.withApp(func(c *cobra.Command, a *app.App, args []string) error {
			evs, err := a.Sandboxes().Events(args[0])
			if err != nil {
				return app.SandboxError(err)
			}
			return show(evs, func() {
				for _, ev := range evs {
					fmt.Fprintf(e.stdout, "%s  %s -> %s  %s\n", ev.Time.Local().Format(time.DateTime), ev.From, ev.To, ev.Reason)
				}
			})
		}),
	}
	platform := &cobra.Command{
		Use:   "platform",
		Short: "What this kernel supports: user namespaces, Landlock, seccomp, cgroups",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			p := sandbox.Probe()
			return show(p, func() { printPlatform(e, p) })
		},
	}
	capabilities := &cobra.Command{
		Use:   "capabilities",
		Short: "What isolation this host can offer, by engine and mode",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			caps := app.SandboxCapabilities(sandbox.Probe())
			return show(caps, func() {
				for _, ec := range caps.Engines {
					fmt.Fprintf(e.stdout, "engine %s: %s\n", ec.Engine, ec.Status)
					for _, m := range ec.Modes {
						fmt.Fprintf(e.stdout, "  mode %-8s %s\n", m.Mode, m.Status)
					}
				}
				fmt.Fprintf(e.stdout, "auto picks: %s\n", caps.Auto)
			})
		},
	}
	supervise := &cobra.Command{
		Use:    "supervise NAME",
		Short:  "Keep a sandbox running (started by warden sandbox start)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			a, err := e.openServing(ctx)
			if err != nil {
				return err
			}
			defer a.Close()
			a.Supervises = args[0]
			mgr := a.Sandboxes()
			// A session's world also runs the session's commands for
			// warden-exec, sparing each a warden start of its own.
			// It stops when the world does, however that ends (stopped,
			// idle, failed to start), and stops what it still runs.
			serveCtx, stopServing := context.WithCancel(ctx)
			defer stopServing()
			serving := make(chan struct{})
			go func() {
				defer close(serving)
				info, err := mgr.Status(args[0])
				switch {
				case err != nil:
				case info.Spec.Session != "":
					serveExecs(serveCtx, a.Home, execwire.SocketPath(a.Home.Abs(), info.Spec.Session), args[0], info.Spec.Session)
				case app.IsOneShotWorld(args[0]):
					serveExecs(serveCtx, a.Home, execwire.OneShotSocketPath(a.Home.Abs(), args[0]), args[0], "")
				}
			}()
			err = mgr.Supervise(ctx, args[0])
			stopServing()
			<-serving
			return app.SandboxError(err)
		},
	}
	c.AddCommand(start, execC, status, stop, recoverC, events, platform, capabilities, supervise)
	return c
}

func printPlatform(e *env, p sandbox.Platform) {
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	fmt.Fprintf(e.stdout, "user namespaces   %s", yes(p.UserNamespaces))
	if p.UserNamespacesError != "" {
		fmt.Fprintf(e.stdout, " (%s)", p.UserNamespacesError)
	}
	fmt.Fprintf(e.stdout, "\nlandlock abi      %d\nseccomp           %s\n", p.LandlockABI, yes(p.Seccomp))
	fmt.Fprintf(e.stdout, "cgroup            v%d %s, writable %s", p.CgroupVersion, strings.Join(p.CgroupControllers, ","), yes(p.CgroupWritable))
	if p.CgroupError != "" {
		fmt.Fprintf(e.stdout, " (%s)", p.CgroupError)
	}
	var modes []string
	for _, m := range p.Modes {
		modes = append(modes, string(m))
	}
	fmt.Fprintf(e.stdout, "\nmodes             %s\n", strings.Join(modes, ", "))
	for _, m := range []sandbox.Mode{sandbox.ModeLight, sandbox.ModeStandard, sandbox.ModeMax} {
		if miss := p.Missing(m); miss != "" {
			fmt.Fprintf(e.stdout, "%-8s lacks:   %s\n", m, miss)
		}
	}
}
