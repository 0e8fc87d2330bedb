package cli

import (
	"fmt"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/signing"
)

func serveCmd(e *env) *cobra.Command {
	var noProxy bool
	c := &cobra.Command{
		Use:   "serve",
		Short: "Run the daemon: the gate, approvals, the live audit feed, the HTTP API and the web console",
		Long: `Run warden as a daemon in the foreground until SIGTERM or SIGINT.

It listens on a Unix socket in the home (mode 0600; approvals.daemon.socket
moves it) and, when approvals.daemon.tcp is set, on TCP too, where every
request must carry a token and an HMAC signature. On the socket a request
without a token is an agent's: it may check requests and wait for
approvals. Answering approvals, changing the policy and the kill switch
need an operator token; the first start writes one to
$WARDEN_HOME/api/operator.token, which the CLI on this machine uses.

It also runs the egress proxy on network.listen (127.0.0.1:4750 by default;
--no-proxy runs none): point an agent at it with HTTP_PROXY and HTTPS_PROXY.
A host the policy asks about waits there for an approval, answered like any
other; the answer covers the host and port.

The web console is at /console/ on the TCP address; log in with the
operator token. A changed policy file takes effect on the next request
(the addresses to listen on and network.resolver take a restart).
Shutdown finishes requests in flight and flushes the audit log.`,
		Example: `  warden serve
  warden config set approvals.daemon.tcp 127.0.0.1:4751 && warden serve
  warden serve --no-proxy`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			home, err := e.homeDir()
			if err != nil {
				return err
			}
			d, err := app.NewDaemon(ctx, home, app.Options{Log: e.logger(), Prompt: terminalPrompt(), Store: e.storeDSN})
			if err != nil {
				return err
			}
			defer d.Close()
			if noProxy {
				d.ProxyListen = ""
			}
			return d.Serve(ctx, func(at app.Listening) {
				fmt.Fprintf(e.stderr, "warden: serving on %s\n", at.Socket)
				if at.TCP != "" {
					fmt.Fprintf(e.stderr, "warden: and on http://%s (signed requests only); web console at http://%[1]s/console/\n", at.TCP)
				}
				if at.Proxy != "" {
					fmt.Fprintf(e.stderr, "warden: egress proxy on %s; set HTTP_PROXY=http://%[1]s and HTTPS_PROXY=http://%[1]s\n", at.Proxy)
				}
				fmt.Fprintf(e.stderr, "warden: operator token in %s/%s\n", home.Abs(), app.OperatorTokenFile)
				if d.Signing != nil {
					a, _ := d.Signing.Address()
					fmt.Fprintf(e.stderr, "warden: signing as %s (key unlocked in %s) at /api/sandbox/sign\n", signing.Checksum(a), d.UnlockTime.Round(time.Millisecond))
				}
			})
		},
	}
	c.Flags().BoolVar(&noProxy, "no-proxy", false, "run no egress proxy (network.listen is free for `warden proxy`)")
	return c
}

func tokenCmd(e *env) *cobra.Command {
	c := &cobra.Command{Use: "token", Short: "Make API tokens for the daemon"}
	var scope string
	newC := &cobra.Command{
		Use:   "new",
		Short: "Make a token the daemon accepts from its next start, and print it",
		Long: `Make a token and add it to $WARDEN_HOME/api/tokens. An agent token may check
requests and wait for approvals; an operator token may also answer
approvals, change the policy and flip the kill switch. Never give an agent
an operator token.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			home, err := e.homeDir()
			if err != nil {
				return err
			}
			tok, err := app.NewAPIToken(home, scope)
			if err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, tok)
			fmt.Fprintln(e.stderr, "warden: restart `warden serve` for it to take effect")
			return nil
		},
	}
	newC.Flags().StringVar(&scope, "scope", "agent", "agent or operator")
	c.AddCommand(newC)
	return c
}

// terminalPrompt asks on the terminal when warden serve runs on one; nil
// when it does not (a service), so the passphrase must come from the policy.
func terminalPrompt() func(string) ([]byte, error) {
	tty, err := openTerminal()
	if err != nil {
		return nil
	}
	tty.Close()
	return promptSecret
}
