package cli

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/internal/execwire"
	"github.com/agentwarden/warden/sandbox"
)

// Exit statuses of `warden exec` when the command itself did not run to an
// exit status of its own; they follow the shell's conventions.
const (
	exitExecError    = 125 // warden could not set up or run the sandbox
	exitExecRefused  = 126 // the gate refused the command, or it cannot be executed
	exitExecNotFound = 127 // no such command inside the sandbox
)

func execCmd(e *env) *cobra.Command {
	var (
		profile      string
		noWait       bool
		hostApproved bool
		approvalID   string
		base         warden.Request
		o            app.ExecOverride
		sizes        = map[string]*string{}
	)
	c := &cobra.Command{
		Annotations: errorStatusIs(exitExecError),
		Use:         "exec [flags] -- CMD [ARG…]",
		Short:       "Run a command inside warden's sandbox",
		Long: `Decide a command through the gate and run it inside the isolation its
profile gives (default: the "workspace" profile, or the profile the gate
names when it sends the command to the sandbox). Flags override the profile for
this run. The command's stdout and stderr pass through, each up to the output
limit.

The exit status is the command's. A command killed by a signal exits 128+N
(the limit that killed it, if one did, is said on stderr and audited); warden
itself exits 125 when it cannot build the sandbox, 126 when the gate refuses
the command, and 127 when the command does not exist inside the sandbox.

When the policy asks a human, warden opens an approval, says on stderr where
to answer it, and waits for the answer (until the approval expires): the
command runs if it is approved, and exits 126 if it is denied or expires.
With --no-wait an ask exits 126 at once.`,
		Example: `  warden exec -- make test
  warden exec --profile guard -- bash -c 'curl example.com | sh'
  warden exec --mode max --memory 128M --cpu 5s -- python3 script.py`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := finishOverrides(c.Flags(), sizes, &o); err != nil {
				return err
			}
			if base.Session == "" && !hostApproved && approvalID == "" {
				// A one-shot run goes to the supervisor of the sandbox kept
				// for this directory's one-shot runs, when one runs.
				if status, ok := e.handOff(c.Flags(), profile, args); ok {
					e.status = status
					return nil
				}
			}
			if base.Session == "" && e.supervises == "" && (o.Mode == nil || *o.Mode != "light" && *o.Mode != "off") {
				// A one-shot run: its sandbox's init starts now, beside
				// the policy's load and the decision (sandbox.StartEarly).
				if _, ok := e.stdin.(*os.File); ok || e.stdin == nil {
					// A stage early only where the run will likely need
					// one: not in the workspace profile, where the command
					// starts from the init's restricted thread.
					stage := profile != "" && profile != config.ProfileWorkspace || o.NoSpawn != nil && *o.NoSpawn
					sandbox.StartEarly("", stage)
					defer sandbox.DiscardEarly()
				}
			}
			a, err := e.open(c.Context())
			if err != nil {
				return err
			}
			defer e.release(a)
			var wait *app.AskWait
			if !noWait && !hostApproved {
				wait = e.askWait("exec")
			}
			res, err := a.Exec(c.Context(), app.ExecRequest{
				Args: args, Dir: e.dir, Env: e.environ, Profile: profile, Override: o, Base: base, Wait: wait, HostApproved: hostApproved, Approval: approvalID,
				Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr,
			})
			if e.supervises != "" && errors.Is(err, sandbox.ErrSelfRestart) {
				e.fallback = "the sandbox this run goes to must start anew under the current policy"
				return nil
			}
			e.status = reportExec(e, res, err)
			return nil
		},
	}
	f := c.Flags()
	f.SetInterspersed(false)
	f.StringVar(&profile, "profile", "", "sandbox profile from the policy file")
	f.BoolVar(&noWait, "no-wait", false, "when a human must approve, exit 126 at once instead of waiting for the answer")
	// Only a hook writes this, into the command an agent host runs after its
	// user approved it at the host's own prompt; an agent cannot run warden
	// exec itself (shell.self_protect), and inside a sandbox warden's home
	// is masked.
	f.BoolVar(&hostApproved, "host-approved", false, "the agent host's user approved this command at the host's prompt")
	_ = f.MarkHidden("host-approved")
	// Only a hook writes this too: the approval its decision of the command
	// used, which then covers the run it rewrote the command into.
	f.StringVar(&approvalID, "approval", "", "the approval a hook's decision of this command used")
	_ = f.MarkHidden("approval")
	addOverrideFlags(f, &o, sizes)
	addRequesterFlags(f, &base)
	return c
}

// handOff hands this one-shot `warden exec` (its flags, profile and command)
// to the supervisor of the sandbox kept for the one-shot runs of this
// directory and profile (app/oneshot.go), which runs it as this process
// would: its decision, audit, approvals and exit status, in that sandbox.
// ok is false when no supervisor took it and nothing ran: this process
// then runs it itself. Only a process with its three standard streams as
// files, of the default store, hands a run off.
func (e *env) handOff(flags *pflag.FlagSet, profile string, args []string) (status int, ok bool) {
	if e.supervises != "" || e.storeDSN != "" {
		return 0, false
	}
	var streams [3]int
	for i, s := range []any{e.stdin, e.stdout, e.stderr} {
		f, isFile := s.(*os.File)
		if !isFile {
			return 0, false
		}
		streams[i] = int(f.Fd())
	}
	home, err := e.homeDir()
	if err != nil {
		return 0, false
	}
	dir := e.dir
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return 0, false
		}
	}
	self, err := os.Executable()
	if err != nil {
		return 0, false
	}
	conn, err := execwire.Dial(execwire.OneShotSocketPath(home.Abs(), app.OneShotWorld(profile, dir)))
	if err != nil {
		return 0, false
	}
	defer conn.Close()
	line := []string{"--home", home.Abs(), "exec"}
	flags.Visit(func(f *pflag.Flag) {
		if f.Name == "home" || f.Name == "store" {
			return
		}
		if sv, isSlice := f.Value.(pflag.SliceValue); isSlice {
			for _, v := range sv.GetSlice() {
				line = append(line, "--"+f.Name+"="+v)
			}
			return
		}
		line = append(line, "--"+f.Name+"="+f.Value.String())
	})
	line = append(append(line, "--"), args...)
	env := e.environ
	if env == nil {
		env = os.Environ()
	}
	req := execwire.Request{Version: execwire.Version, Warden: self, Args: line, Dir: dir, Env: env}
	if !req.Sendable() {
		return 0, false
	}
	status, err = conn.Call(req, streams)
	switch {
	case errors.Is(err, execwire.ErrFallback):
		return 0, false
	case err != nil:
		// It may have run: it is not run again.
		fmt.Fprintf(e.stderr, "warden: %v\n", err)
		return exitExecError, true
	}
	return status, true
}

// askWait is how a one-shot command waits for a human's answer to an ask: it
// opens an approval on channel and says on stderr where to answer it.
func (e *env) askWait(channel string) *app.AskWait {
	return &app.AskWait{Channel: channel, Notify: func(id string) {
		fmt.Fprintf(e.stderr, "warden: waiting for approval %s (`warden approvals approve %[1]s`, the web console or Telegram)\n", id)
	}}
}

// addRequesterFlags are the flags that say who asks.
func addRequesterFlags(f *pflag.FlagSet, base *warden.Request) {
	f.StringVar(&base.Session, "session", "", "session id")
	f.StringVar(&base.RequestedBy, "requested-by", "", "who asks: agent, skill:NAME, cron:JOB")
	f.BoolVar(&base.Autonomous, "autonomous", false, "no human is in the loop this turn")
	f.StringVar(&base.Context, "context", "", "why the agent wants this")
}

// addOverrideFlags are the flags that override a sandbox profile.
func addOverrideFlags(f *pflag.FlagSet, o *app.ExecOverride, sizes map[string]*string) {
	o.Mode = f.String("mode", "", "isolation: light, standard, max (off only where the policy allows it)")
	f.StringSliceVar(&o.ReadWrite, "rw", nil, "also let the command write this path (repeatable)")
	f.StringSliceVar(&o.ReadOnly, "ro", nil, "also let the command read this path (repeatable)")
	o.Network = f.String("net", "", "network: none or proxy")
	f.BoolVar(&o.Signer, "signer", false, "reach warden's signing endpoint at $WARDEN_SIGNER_URL with $WARDEN_SIGNER_TOKEN (needs warden serve, which holds the key)")
	f.StringSliceVar(&o.AllowDomains, "allow-domain", nil, "domain the proxy may reach (repeatable)")
	sizes["memory"] = f.String("memory", "", "memory cap, like 64M")
	sizes["output-limit"] = f.String("output-limit", "", "cap on stdout, and on stderr, like 1M")
	sizes["file-size"] = f.String("file-size", "", "largest file the command may write, like 1G")
	o.CPU = f.Duration("cpu", 0, "CPU time limit per process, like 10s")
	o.Timeout = f.Duration("timeout", 0, "wall-clock limit for the whole command, like 30s")
	o.Pids = f.Int("pids", 0, "most processes at once")
	o.NoSpawn = f.Bool("no-spawn", false, "forbid creating processes")
	f.StringSliceVar(&o.Env, "env", nil, "keep this credential-like environment variable (repeatable)")
	o.Strict = f.Bool("strict", false, "refuse to run with less isolation than the mode asks for")
}

// finishOverrides parses the size flags and drops the overrides that were
// not given, so the profile's values stand.
func finishOverrides(f *pflag.FlagSet, sizes map[string]*string, o *app.ExecOverride) error {
	if err := parseExecSizes(f, sizes, o); err != nil {
		return err
	}
	setChanged(f, o)
	return nil
}

// reportExec says on stderr what warden has to say about a run (where it
// had less isolation than asked, a refusal, the limit that killed it) and
// returns the exit status `warden exec` documents.
func reportExec(e *env, res app.ExecResult, err error) int {
	for _, w := range res.Warnings {
		fmt.Fprintf(e.stderr, "warden: sandbox: %s\n", w)
	}
	var refused *app.Refused
	var execErr *sandbox.ExecError
	switch {
	case errors.As(err, &refused):
		fmt.Fprintf(e.stderr, "warden: %s\n", refused.Error())
		return exitExecRefused
	case errors.As(err, &execErr):
		fmt.Fprintf(e.stderr, "warden: %s\n", execErr.Error())
		if execErr.Err == syscall.ENOENT {
			return exitExecNotFound
		}
		return exitExecRefused
	case err != nil:
		fmt.Fprintf(e.stderr, "warden: %s\n", warden.UserMessage(err))
		return exitExecError
	}
	if res.Limit != sandbox.LimitNone {
		fmt.Fprintf(e.stderr, "warden: the command was %s\n", res.Limit.Describe(res.Limits))
	}
	if res.NoSpawnFailed {
		// bash says only "fork: Operation not permitted".
		why := ""
		if res.Decision.Verdict == warden.Sandbox && res.Decision.Rule != "" {
			why = " (" + res.Decision.Rule + ": " + res.Decision.Reason + ")"
		}
		fmt.Fprintf(e.stderr, "warden: the command ran in the %s sandbox%s, where no new process may start: a line that starts other programs (a pipeline, $(…), a script, make) fails there; run the part the guard named on its own\n", res.Profile, why)
	}
	return res.ExitCode
}

// setChanged clears the overrides whose flags were not given, so the
// profile's values stand.
func setChanged(f *pflag.FlagSet, o *app.ExecOverride) {
	unlessChanged(f, "mode", &o.Mode)
	unlessChanged(f, "net", &o.Network)
	unlessChanged(f, "cpu", &o.CPU)
	unlessChanged(f, "timeout", &o.Timeout)
	unlessChanged(f, "pids", &o.Pids)
	unlessChanged(f, "no-spawn", &o.NoSpawn)
	unlessChanged(f, "strict", &o.Strict)
}

// unlessChanged clears *p unless flag name was given.
func unlessChanged[T any](f *pflag.FlagSet, name string, p **T) {
	if !f.Changed(name) {
		*p = nil
	}
}

func parseExecSizes(f *pflag.FlagSet, sizes map[string]*string, o *app.ExecOverride) error {
	for name, v := range sizes {
		if !f.Changed(name) {
			continue
		}
		n, err := sandbox.ParseBytes(*v)
		if err != nil {
			return warden.Errorf(warden.EInvalid, "--%s: %v", name, err)
		}
		switch name {
		case "memory":
			o.Memory = &n
		case "output-limit":
			o.OutputLimit = &n
		case "file-size":
			o.FileSize = &n
		}
	}
	return nil
}
