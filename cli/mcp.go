package cli

import (
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
)

func mcpCmd(e *env) *cobra.Command {
	var o app.MCPOptions
	var headers []string
	c := &cobra.Command{
		Use:   "mcp [--name NAME] (-- SERVER COMMAND… | --upstream URL)",
		Short: "Run an MCP server behind warden: tool calls gated, tool lists filtered, results scanned",
		Long: `Run an MCP server behind warden's gate. The MCP client (an agent host) starts
warden mcp instead of the server and talks to it on stdin and stdout; warden
starts the server command after -- (or connects to a Streamable HTTP server
with --upstream URL) and passes the conversation through, judging it:

  tools/list  tools the policy denies outright (tools.denied, the kill
              switch, tier 3 on autonomous turns) are hidden, and so are tools
              whose description or schema reads as a prompt injection
  tools/call  decided like every warden request: capability tool, resource
              mcp__NAME__TOOL, params the arguments, the tier from
              tools.tiers (an unknown tool is tier 3). A deny is answered with
              an isError result the model can read; an ask is put to the
              client as an elicitation when it can ask its user, else waits
              (--wait) for the approval warden opened and, unanswered, is
              refused naming it (approve it, then retry the call)
  results     sanitised, scanned for prompt injection and fenced in random
              delimiters; a flagged result comes with a warning, one scoring
              at or above --block-score is withheld

The server command runs under warden exec in the workspace sandbox (its
start decided and audited like any command; /tmp is private to it, and its
network goes through the egress proxy); --no-sandbox runs it on the host.

A tool whose definition changes after it was first seen asks again until a
call to it is approved. Every call is audited: its decision, then an
action_result event with the server, tool, argument hash, verdict and result
size. See docs/mcp.md.

With --upstream and --listen ADDRESS, warden serves MCP clients over
Streamable HTTP at http://ADDRESS/ instead of stdin and stdout.`,
		Example: `  warden mcp --name fs -- npx -y @modelcontextprotocol/server-filesystem ~/project
  warden mcp --name github --upstream https://api.githubcopilot.com/mcp/
  warden mcp --name remote --upstream http://127.0.0.1:9000/mcp --listen 127.0.0.1:7400`,
		RunE: func(c *cobra.Command, args []string) error {
			dash := c.ArgsLenAtDash()
			switch {
			case o.Upstream != "" && len(args) > 0:
				return usageError(c, "give either a server command after -- or --upstream URL, not both")
			case o.Upstream == "" && (dash < 0 || len(args) == 0):
				return usageError(c, "give the MCP server's command after --, e.g. warden mcp --name fs -- npx -y @modelcontextprotocol/server-filesystem DIR, or --upstream URL")
			case dash > 0:
				return usageError(c, "unexpected arguments before --: "+strings.Join(args[:dash], " "))
			case o.Listen != "" && o.Upstream == "":
				return usageError(c, "--listen serves a Streamable HTTP server given with --upstream")
			case o.BlockScore < 0 || o.BlockScore > 1:
				return usageError(c, fmt.Sprintf("--block-score %v is out of range; give a score in (0, 1], or 1 to withhold only certain injections", o.BlockScore))
			}
			for _, h := range headers {
				name, env, ok := strings.Cut(h, "=")
				if !ok || name == "" || env == "" {
					return usageError(c, "--header-env "+h+" is not HEADER=ENVVAR")
				}
				v, set := os.LookupEnv(env)
				if !set {
					return usageError(c, "--header-env "+name+": $"+env+" is not set")
				}
				if o.Upstream == "" {
					return usageError(c, "--header-env goes with --upstream")
				}
				if o.Headers == nil {
					o.Headers = http.Header{}
				}
				o.Headers.Add(name, v)
			}
			o.Command = args
			if o.Name == "" {
				o.Name = defaultMCPName(o)
			}
			if err := app.CheckMCPName(o.Name); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			a, err := e.openServing(ctx)
			if err != nil {
				return err
			}
			defer a.Close()
			if o.Listen != "" {
				o.Ready = func(addr string) {
					fmt.Fprintf(e.stderr, "warden mcp: serving %s at http://%s/\n", o.Name, addr)
				}
			}
			return a.RunMCP(ctx, o, e.stdin, e.stdout, e.stderr)
		},
	}
	f := c.Flags()
	f.StringVar(&o.Name, "name", "", "the server's name in tool names, mcp__NAME__TOOL (default: from the command or URL)")
	f.StringVar(&o.Upstream, "upstream", "", "the `URL` of a Streamable HTTP MCP server, instead of a command")
	f.StringArrayVar(&headers, "header-env", nil, "with --upstream: send the header `HEADER=ENVVAR`, its value from the environment variable (e.g. Authorization=GITHUB_MCP_AUTH); repeatable")
	f.StringVar(&o.Listen, "listen", "", "with --upstream: serve clients over Streamable HTTP on this `ADDRESS` instead of stdin/stdout")
	f.BoolVar(&o.NoSandbox, "no-sandbox", false, "run the server command on the host instead of under warden exec in the workspace sandbox")
	f.BoolVar(&o.Autonomous, "autonomous", false, "the client's turns have no human in the loop (tier 3 tools are denied, and hidden, unless autopilot is on)")
	f.StringVar(&o.Session, "session", "", "the warden session the calls belong to (default: one per run, so \"approve for this session\" lasts while the host keeps the server)")
	f.BoolVar(&o.NoWrap, "no-wrap", false, "pass result text sanitised and scanned but not fenced in delimiters")
	f.Float64Var(&o.BlockScore, "block-score", 0, "withhold a result whose injection score is at least this (default: the policy's inject.blockScore, 0.9 unless set)")
	f.DurationVar(&o.Wait, "wait", 0, "how long a call waits for a human's approval before it is refused naming it (default 2m; negative: never wait)")
	return c
}

// defaultMCPName names a server after its package or command, or its
// URL's host: @modelcontextprotocol/server-filesystem → filesystem.
func defaultMCPName(o app.MCPOptions) string {
	var base string
	if o.Upstream != "" {
		base = o.Upstream
		if i := strings.Index(base, "://"); i >= 0 {
			base = base[i+3:]
		}
		base, _, _ = strings.Cut(base, "/")
		base, _, _ = strings.Cut(base, ":")
		base = strings.ReplaceAll(base, ".", "-")
	} else {
		for _, a := range o.Command {
			if !strings.HasPrefix(a, "-") && a != "npx" && a != "uvx" && a != "node" && a != "python3" && a != "python" && a != "bunx" {
				base = a
				break
			}
		}
		base = filepath.Base(base)
		if at := strings.LastIndex(base, "@"); at > 0 {
			base = base[:at] // a version
		}
		base = strings.TrimPrefix(strings.TrimPrefix(base, "server-"), "mcp-server-")
		base = strings.TrimSuffix(strings.TrimSuffix(base, ".js"), ".py")
	}
	var b strings.Builder
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	for strings.Contains(name, "--") {
		name = strings.ReplaceAll(name, "--", "-")
	}
	if name == "" {
		return "server"
	}
	return name
}

// wrapMCPServers routes (or, with undo, puts back) the MCP servers host
// is configured with, and says what it did to each.
func (e *env) wrapMCPServers(host string, scope app.HookScope, projectDir, homeDir string, undo, anyPath bool) error {
	home, err := e.homeDir()
	if err != nil {
		return err
	}
	cmd := "warden"
	if !undo {
		self, err := os.Executable()
		if err == nil {
			self, err = filepath.EvalSymlinks(self)
		}
		if err != nil {
			return warden.Errorf(warden.EInvalid, "cannot find the warden binary's path").Wrap(err)
		}
		bin, err := app.HookBinariesFor(self, scope, app.BinaryOptions{AnyPath: anyPath})
		if err != nil {
			return err
		}
		cmd = bin.Warden
	}
	res, err := app.WrapMCPServers(host, scope, projectDir, homeDir, cmd, home, undo)
	if err != nil {
		return err
	}
	for _, s := range res.Servers {
		line := fmt.Sprintf("MCP server %s: %s", s.Name, s.Action)
		if s.Why != "" {
			line += " (" + s.Why + ")"
		}
		fmt.Fprintln(e.stdout, line)
	}
	switch {
	case res.Changed:
		fmt.Fprintf(e.stdout, "rewrote %s (backup: %s)\n", res.Path, res.Backup)
	case len(res.Servers) == 0:
		fmt.Fprintf(e.stdout, "%s: no MCP servers configured\n", res.Path)
	}
	return nil
}
