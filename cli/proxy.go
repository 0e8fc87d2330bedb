package cli

import (
	"fmt"
	"net"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden"
)

func proxyCmd(e *env) *cobra.Command {
	var (
		listen  string
		allowed []string
		who     warden.Request
	)
	c := &cobra.Command{
		Use:   "proxy",
		Short: "Run the egress proxy: every request an agent makes through it is decided and logged",
		Long: `Run warden's egress proxy in the foreground until interrupted.

Point an agent at it with HTTP_PROXY and HTTPS_PROXY (http://ADDRESS). Each
request (absolute-form HTTP or a CONNECT tunnel) is decided by the network
policy through the gate and audited; the name is resolved once, every answer
is judged, and the connection goes to the pinned address, judged again at
connect time. Each request ends with a line in the audit log's egress_request
events (answered requests' lines are grouped, several to an event).

A host the policy asks about (network.ask_unknown_domains) is not looked up
until a human answers: the request opens an approval and waits for it
(` + "`warden approvals watch`" + `, the web console or Telegram). The answer covers the
destination (host and port): approving it for the session lets every later
request to it through while this proxy runs (or for --session), and "always"
adds a rule to the policy file.

The listen address defaults to network.listen in the policy file.`,
		Example: `  warden proxy
  warden proxy --listen 127.0.0.1:8888 --requested-by agent:research --allow-domain api.github.com
  HTTPS_PROXY=http://127.0.0.1:4750 curl https://api.github.com/`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			a, err := e.openServing(ctx)
			if err != nil {
				return err
			}
			defer a.Close()
			p, err := a.Egress(&who, allowed, e.askWait("proxy"))
			if err != nil {
				return err
			}
			if listen == "" {
				listen = a.Policy.Network.Listen
			}
			l, err := net.Listen("tcp", listen)
			if err != nil {
				return warden.Errorf(warden.EUnavailable, "listen on %s", listen).Wrap(err).
					WithHint("pick a free address with --listen, or set network.listen in the policy file")
			}
			fmt.Fprintf(e.stderr, "warden: egress proxy listening on %s; set HTTP_PROXY=http://%[1]s and HTTPS_PROXY=http://%[1]s\n", l.Addr())
			served := make(chan error, 1)
			go func() { served <- p.Serve(l) }()
			select {
			case err = <-served:
			case <-ctx.Done():
				err = p.Close()
				<-served
			}
			if err != nil {
				return warden.Errorf(warden.EUnavailable, "the egress proxy stopped").Wrap(err)
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&listen, "listen", "", "address to listen on (default network.listen)")
	f.StringArrayVar(&allowed, "allow-domain", nil, "more allowed_domains rules for this proxy only, e.g. api.github.com or *.example.com:443 (repeatable)")
	f.StringVar(&who.RequestedBy, "requested-by", "agent", "the agent its requests are decided and rate-limited for")
	f.StringVar(&who.Session, "session", "", "session id")
	f.BoolVar(&who.Autonomous, "autonomous", false, "no human is in the loop")
	return c
}
