//go:build amd64 || arm64

package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentwarden/warden/sandbox"
	"golang.org/x/sys/unix"
)

// TestSocketFamilies makes sockets of each family inside a real sandbox and
// checks the seccomp allow-list: the Internet families, routing and socket
// diagnostics netlink, and Unix sockets only when the spec allows them;
// everything else an unsupported family. The same probe run on the host
// is logged, to show which refusals are the sandbox's own.
func TestSocketFamilies(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	const ethPAll = 0x0300 // htons(ETH_P_ALL)
	cases := []struct {
		name        string
		mode        sandbox.Mode
		unixSockets bool
		family      int
		typ         int
		proto       int
		pair        bool
		want        syscall.Errno // 0: the socket is made
	}{
		{name: "vsock", family: unix.AF_VSOCK, typ: unix.SOCK_STREAM, want: unix.EAFNOSUPPORT},
		{name: "netlink audit", family: unix.AF_NETLINK, typ: unix.SOCK_RAW, proto: unix.NETLINK_AUDIT, want: unix.EPROTONOSUPPORT},
		{name: "netlink kobject uevent", family: unix.AF_NETLINK, typ: unix.SOCK_DGRAM, proto: unix.NETLINK_KOBJECT_UEVENT, want: unix.EPROTONOSUPPORT},
		{name: "netlink netfilter", family: unix.AF_NETLINK, typ: unix.SOCK_RAW, proto: unix.NETLINK_NETFILTER, want: unix.EPROTONOSUPPORT},
		{name: "alg", family: unix.AF_ALG, typ: unix.SOCK_SEQPACKET, want: unix.EAFNOSUPPORT},
		{name: "packet", family: unix.AF_PACKET, typ: unix.SOCK_RAW, proto: ethPAll, want: unix.EAFNOSUPPORT},
		{name: "bluetooth", family: unix.AF_BLUETOOTH, typ: unix.SOCK_STREAM, want: unix.EAFNOSUPPORT},
		{name: "key", family: unix.AF_KEY, typ: unix.SOCK_RAW, proto: 2, want: unix.EAFNOSUPPORT},
		{name: "unix without UnixSockets", family: unix.AF_UNIX, typ: unix.SOCK_STREAM, want: unix.EPERM},
		{name: "unix with UnixSockets", unixSockets: true, family: unix.AF_UNIX, typ: unix.SOCK_STREAM},
		{name: "unix socketpair without UnixSockets", family: unix.AF_UNIX, typ: unix.SOCK_STREAM, pair: true},
		{name: "netlink socketpair", family: unix.AF_NETLINK, typ: unix.SOCK_RAW, pair: true, want: unix.EAFNOSUPPORT},
		{name: "netlink route", family: unix.AF_NETLINK, typ: unix.SOCK_RAW, proto: unix.NETLINK_ROUTE},
		{name: "netlink sock diag", family: unix.AF_NETLINK, typ: unix.SOCK_RAW, proto: unix.NETLINK_SOCK_DIAG},
		{name: "inet", family: unix.AF_INET, typ: unix.SOCK_STREAM},
		{name: "inet6", family: unix.AF_INET6, typ: unix.SOCK_DGRAM},
		{name: "light inet", mode: sandbox.ModeLight, family: unix.AF_INET, typ: unix.SOCK_STREAM, want: unix.EACCES},
		{name: "light inet6", mode: sandbox.ModeLight, family: unix.AF_INET6, typ: unix.SOCK_STREAM, want: unix.EACCES},
		{name: "light vsock", mode: sandbox.ModeLight, family: unix.AF_VSOCK, typ: unix.SOCK_STREAM, want: unix.EAFNOSUPPORT},
		{name: "light netlink audit", mode: sandbox.ModeLight, family: unix.AF_NETLINK, typ: unix.SOCK_RAW, proto: unix.NETLINK_AUDIT, want: unix.EPROTONOSUPPORT},
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"sandbox-socket", strconv.Itoa(c.family), strconv.Itoa(c.typ), strconv.Itoa(c.proto)}
			if c.pair {
				args = append(args, "pair")
			}
			host, _ := exec.Command(self, args...).Output()
			t.Logf("on the host: %s", strings.TrimSpace(string(host)))
			s := guardSpec(t)
			if c.mode != "" {
				s.Mode = c.mode
			}
			s.UnixSockets = c.unixSockets
			r := runIn(t, s, append([]string{self}, args...)...)
			if r.err != nil {
				t.Fatalf("sandbox failed: %v", r)
			}
			want := "ok"
			if c.want != 0 {
				want = fmt.Sprintf("errno %d ", int(c.want))
			}
			if !strings.HasPrefix(r.stdout, want) {
				t.Fatalf("socket(%d, %d, %d) in the sandbox = %q, want %q (%v)", c.family, c.typ, c.proto, strings.TrimSpace(r.stdout), want, c.want)
			}
		})
	}
}

// TestNetlinkToolsWork runs the tools that need the netlink protocols the
// sandbox keeps: ip (routing) and ss (socket diagnostics).
func TestNetlinkToolsWork(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ip", "addr"}, "lo:"},
		{[]string{"ss", "-tln"}, "State"},
	} {
		t.Run(c.args[0], func(t *testing.T) {
			if _, err := exec.LookPath(c.args[0]); err != nil {
				t.Skipf("%s is not installed here", c.args[0])
			}
			r := runIn(t, guardSpec(t), c.args...)
			if r.err != nil || r.res.ExitCode != 0 || !strings.Contains(r.stdout, c.want) {
				t.Fatalf("%v in the sandbox: %v; want exit 0 and %q", c.args, r, c.want)
			}
		})
	}
}

// TestUnixSocketsForTheCommandsOwnServers checks that with UnixSockets a
// command can serve and reach its own Unix socket, and without it cannot.
func TestUnixSocketsForTheCommandsOwnServers(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	self, _ := os.Executable()
	for _, allow := range []bool{true, false} {
		t.Run(fmt.Sprintf("UnixSockets=%v", allow), func(t *testing.T) {
			s := guardSpec(t)
			s.UnixSockets = allow
			r := runIn(t, s, self, "sandbox-unix-echo", s.Workspace)
			if r.err != nil {
				t.Fatalf("sandbox failed: %v", r)
			}
			if got := r.res.ExitCode == 0; got != allow {
				t.Fatalf("a Unix echo server in the sandbox with UnixSockets=%v: %v", allow, r)
			}
		})
	}
}
