package dnstest

import (
	"context"
	"net"
	"strings"
)

// Resolver returns a *net.Resolver with PreferGo: true whose Dial always
// connects to this server, whatever name server address the resolver passes,
// so lookups never reach the system's resolver. It dials TCP when the
// resolver asks for a stream connection (for example after a truncated UDP
// answer) and UDP otherwise. Names in /etc/hosts are still answered from
// there, as Go's resolver reads that file first.
func (s *Server) Resolver() *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			transport := "udp"
			if strings.HasPrefix(network, "tcp") {
				transport = "tcp"
			}
			var d net.Dialer
			return d.DialContext(ctx, transport, s.addr)
		},
	}
}
