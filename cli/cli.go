// Package cli is warden's command line: one cobra command per verb, each a thin
// layer over package app. Main returns the process exit status; the mapping from
// outcomes to exit status lives in exit.go and nowhere else.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/sandbox"
)

// env is what every command needs: where the home is and the standard streams.
type env struct {
	home   string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// storeDSN is --store: a fleet's postgres:// URL, overriding the
	// policy's store.dsn.
	storeDSN string
	// status is set by commands whose exit status encodes an outcome rather
	// than an error (check --exit-code, audit verify).
	status int

	// A `warden exec` a session's supervisor runs for warden-exec (see
	// serveExecs) has the client's directory and environment, not this
	// process's (""/nil: this process's own). supervises names the
	// sandbox this process supervises; fallback is set, instead of a
	// status, when the run must go to a warden process of its own.
	dir        string
	environ    []string
	supervises string
	fallback   string
	// asJSON is a command's --json: JSON for a person at a terminal too.
	asJSON bool
	// shared, when set, is the opened home a command uses instead of
	// opening its own (the supervisor's); it is not closed by the command.
	shared *app.App
	// only, when set, is the one command a supervisor's request runs
	// ("hook" or "exec"): the only one built.
	only string
}

// homeDir is the home --home, $WARDEN_HOME or the default names, as an
// absolute path: a relative one is taken from the directory the command
// runs in (the client's, for a command a supervisor runs).
func (e *env) homeDir() (app.Home, error) {
	h := app.Home(e.home)
	if e.home == "" {
		var err error
		if h, err = app.DefaultHome(); err != nil {
			return "", err
		}
	}
	if !filepath.IsAbs(string(h)) && e.dir != "" {
		h = app.Home(filepath.Join(e.dir, string(h)))
	}
	return app.Home(h.Abs()), nil
}

func (e *env) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// open opens the home for a command that decides or reads the log. Close
// it with e.release.
func (e *env) open(ctx context.Context) (*app.App, error) {
	if e.shared != nil {
		return e.shared, nil
	}
	home, err := e.homeDir()
	if err != nil {
		return nil, err
	}
	a, err := app.Open(ctx, home, app.Options{Log: e.logger(), Store: e.storeDSN})
	if err == nil {
		a.Supervises = e.supervises
	}
	return a, err
}

// release closes a home e.open opened, unless it is the shared one.
func (e *env) release(a *app.App) {
	if a != e.shared {
		a.Close()
	}
}

// withApp is a command's RunE that opens the home, runs run with it and
// closes it.
func (e *env) withApp(run func(c *cobra.Command, a *app.App, args []string) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		a, err := e.open(c.Context())
		if err != nil {
			return err
		}
		defer a.Close()
		return run(c, a, args)
	}
}

// openServing opens the home for a long-lived command (the proxy, a
// sandbox's supervisor): its decisions go straight into the database.
func (e *env) openServing(ctx context.Context) (*app.App, error) {
	home, err := e.homeDir()
	if err != nil {
		return nil, err
	}
	return app.Open(ctx, home, app.Options{Log: e.logger(), OpenDatabase: true, Store: e.storeDSN})
}

// Main runs warden with args (without the program name) and returns the exit
// status.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	return e.main(ctx, args)
}

// main runs warden with args in e and returns the exit status.
func (e *env) main(ctx context.Context, args []string) int {
	root := newRoot(e)
	root.SetArgs(args)
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil {
		fmt.Fprintln(e.stderr, "warden: "+warden.UserMessage(err))
		return exitStatusOf(cmd, err)
	}
	return e.status
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:           "warden",
		Short:         "warden is the security gate every action of an AI agent passes through",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&e.home, "home", "", "warden home directory (default $WARDEN_HOME or ~/.warden)")
	root.PersistentFlags().StringVar(&e.storeDSN, "store", "", "a fleet's PostgreSQL database, postgres://USER@HOST/DATABASE (no password: it comes from store.passwordFile, store.passwordEnv or PGPASSWORD); overrides store.dsn")
	// A supervisor serves one command per request (hook or exec): it
	// builds only that one, not the whole tree, for every request.
	switch e.only {
	case "hook":
		root.AddCommand(hookCmd(e))
	case "exec":
		root.AddCommand(execCmd(e))
	default:
		root.AddCommand(initCmd(e), checkCmd(e), configCmd(e), auditCmd(e), killCmd(e), unkillCmd(e),
			hookCmd(e), installCmd(e, false), installCmd(e, true), fsCmd(e), execCmd(e), sandboxCmd(e), proxyCmd(e),
			serveCmd(e), migrateCmd(e), mcpCmd(e), approvalsCmd(e), tokenCmd(e), tradeCmd(e), portfolioCmd(e), stoplossCmd(e), signerCmd(e), statusCmd(e), versionCmd(e), undoCmd(e))
		root.AddCommand(injectCmds(e)...)
		setVersion(root)
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if strings.HasPrefix(err.Error(), "unknown shorthand flag") {
			return warden.Errorf(warden.EInvalid, "%s", err.Error()).
				WithHint("a value that starts with '-' goes after --, e.g. `warden config set KEY -- -5`; see `" + c.CommandPath() + " --help`")
		}
		return usageError(c, err.Error())
	})
	strictCommands(root)
	return root
}

// usageError is a bad command line: what was wrong and how to get help.
func usageError(c *cobra.Command, msg string) error {
	return warden.Errorf(warden.EInvalid, "%s", msg).WithHint("see `" + c.CommandPath() + " --help`")
}

// rangeArgs accepts min to max positional arguments and otherwise says what
// the command takes.
func rangeArgs(min, max int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) < min || len(args) > max {
			return usageError(c, fmt.Sprintf("%s takes %s", c.CommandPath(), what))
		}
		return nil
	}
}

// Run is the entry point for cmd/warden.
func Run() int {
	sandbox.Main() // a sandbox's init or stage never returns from here
	return Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

var errVerifyFailed = errors.New("audit chain does not verify")
