package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
)

func hookCmd(e *env) *cobra.Command {
	var remote bool
	c := &cobra.Command{
		Annotations: errorStatusIs(exitHookBlocked),
		Use:         "hook HOST",
		Short:       "Answer one agent-host hook payload on stdin (" + strings.Join(app.HookHosts(), ", ") + ")",
		Long: `Answer one agent-host hook payload on stdin, in the host's own protocol.

Every tool call the host sends is decided by the gate and audited. When warden
cannot decide (bad input, broken home, internal error) the answer blocks the
call: the hook never fails open. Install it with ` + "`warden install HOST`" + `.

With --remote the decision is made by the running daemon (warden serve), so
it shares its live feed and metrics; with no daemon on the home's socket the
hook decides in this process instead.`,
		// Exit statuses are the host's protocol, so failures never take cobra's
		// exit-1 path: several hosts let a tool call through on exit 1 (see Main).
		RunE: func(c *cobra.Command, args []string) error {
			ctx := app.WithHookEnv(c.Context(), e.environ)
			host := ""
			if len(args) > 0 {
				host = args[0]
			}
			if len(args) != 1 {
				err := warden.Errorf(warden.EInvalid, "warden hook takes one HOST: %s", strings.Join(app.HookHosts(), ", "))
				e.status = app.RunHookError(ctx, host, err, e.stdin, e.stdout, e.stderr)
				return nil
			}
			home, err := e.homeDir()
			if err != nil {
				e.status = app.RunHookError(ctx, host, err, e.stdin, e.stdout, e.stderr)
				return nil
			}
			if remote {
				e.status = app.RunHookRemote(ctx, home, host, e.stdin, e.stdout, e.stderr)
				return nil
			}
			if e.shared != nil { // a session's supervisor, for warden-exec
				e.status = app.RunHookWith(ctx, e.shared, host, e.stdin, e.stdout, e.stderr)
				return nil
			}
			e.status = app.RunHook(ctx, home, app.Options{Log: e.logger()}, host, e.stdin, e.stdout, e.stderr)
			return nil
		},
	}
	c.Flags().BoolVar(&remote, "remote", false, "decide through the running daemon when one serves this home")
	return c
}

func installCmd(e *env, remove bool) *cobra.Command {
	var user, project, anyPath, mcpServers bool
	verb, short := "install", "Add warden's hook to an agent host's settings (a backup is kept)"
	if remove {
		verb, short = "uninstall", "Remove exactly the hook entries `warden install` added"
	}
	c := &cobra.Command{
		Use:   verb + " HOST",
		Short: short + " (" + strings.Join(app.HookHosts(), ", ") + ")",
		Args:  rangeArgs(1, 1, "one HOST: "+strings.Join(app.HookHosts(), ", ")),
		RunE: func(c *cobra.Command, args []string) error {
			if user && project {
				return usageError(c, "--user and --project exclude each other")
			}
			scope := app.HookProject
			if user {
				scope = app.HookUser
			}
			projectDir, err := os.Getwd()
			if err != nil {
				return warden.Errorf(warden.EInvalid, "cannot find the current directory").Wrap(err)
			}
			homeDir, err := os.UserHomeDir()
			if err != nil {
				return warden.Errorf(warden.EInvalid, "cannot find your home directory").Wrap(err)
			}
			var res app.HookInstallResult
			if remove {
				res, err = app.UninstallHook(args[0], scope, projectDir, homeDir)
			} else {
				self, perr := os.Executable()
				if perr == nil {
					self, perr = filepath.EvalSymlinks(self)
				}
				if perr != nil {
					return warden.Errorf(warden.EInvalid, "cannot find the warden binary's path").Wrap(perr)
				}
				home, herr := e.homeDir()
				if herr != nil {
					return herr
				}
				if err := app.CheckHookHome(home); err != nil {
					return err
				}
				bin, berr := app.HookBinariesFor(self, scope, app.BinaryOptions{AnyPath: anyPath})
				if berr != nil {
					return berr
				}
				res, err = app.InstallHookWith(args[0], scope, projectDir, homeDir, bin, home)
				if err == nil && scope == app.HookProject {
					if named := app.HookHomeArg(home, homeDir); named != "" {
						fmt.Fprintf(e.stderr, "warden: the hook names the home %s, a path on this machine: whoever shares %s needs a warden home there (or use the default ~/.warden, or --user)\n", named, res.Path)
					}
					if filepath.IsAbs(bin.Warden) {
						fmt.Fprintf(e.stderr, "warden: --allow-any-path: the hook names %s, a path on this machine\n", bin.Warden)
					}
				}
			}
			if err != nil {
				return err
			}
			switch {
			case !res.Changed:
				fmt.Fprintf(e.stdout, "%s: nothing to change\n", res.Path)
			case remove:
				fmt.Fprintf(e.stdout, "removed warden's hook from %s\n", res.Path)
			default:
				fmt.Fprintf(e.stdout, "added warden's hook to %s\n", res.Path)
			}
			if res.Backup != "" {
				fmt.Fprintf(e.stdout, "backup of the previous file: %s\n", res.Backup)
			}
			if mcpServers {
				if err := e.wrapMCPServers(args[0], scope, projectDir, homeDir, remove, anyPath); err != nil {
					return err
				}
			}
			if !remove && !app.HookRewrites(args[0]) {
				fmt.Fprintf(e.stdout, "%s cannot rewrite a command: the commands warden allows run on the host, not in warden's sandbox (weaker than Claude Code, Codex and Gemini CLI; see `warden status`).\n", args[0])
			}
			if !remove && res.Changed && args[0] == "codex" {
				fmt.Fprintln(e.stdout, "Codex only runs hooks you trust: open its /hooks screen and trust this one.")
			}
			return nil
		},
	}
	c.Flags().BoolVar(&project, "project", false, "this project's settings (the default)")
	c.Flags().BoolVar(&user, "user", false, "your user settings, for every project")
	mcpHelp := "also run the host's configured MCP servers behind warden mcp (claude, codex, cursor, gemini)"
	if remove {
		mcpHelp = "also put back the host's MCP servers warden mcp was routing"
	}
	c.Flags().BoolVar(&mcpServers, "mcp", false, mcpHelp)
	if !remove {
		c.Flags().BoolVar(&anyPath, "allow-any-path", false, "accept this binary in a build or temporary directory (for tests), and name it by its absolute path where $PATH finds no warden or another one")
	}
	return c
}
