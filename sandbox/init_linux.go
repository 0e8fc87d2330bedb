//go:build amd64 || arm64

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// runInit is the sandbox's init. In namespace modes it is pid 1: it shapes
// the mounts and network, starts the command through the stage as its only
// child, forwards signals to it, and reports how it ended. When the init
// exits the kernel kills everything else in its pid namespace.
func runInit() int {
	report := os.NewFile(fdReport, "report")
	send := func(o outcome) int {
		_ = json.NewEncoder(report).Encode(o)
		report.Close()
		if o.Signal != 0 {
			return 128 + o.Signal
		}
		return o.Exit
	}
	p, err := readPlan()
	if err != nil {
		return send(outcome{Setup: err.Error(), Exit: 125})
	}
	if p.Namespaces {
		if err := setupMounts(p); err != nil {
			return send(outcome{Setup: err.Error(), Exit: 125})
		}
		if err := loopbackUp(); err != nil {
			return send(outcome{Setup: err.Error(), Exit: 125})
		}
		_ = unix.Sethostname([]byte("warden-sandbox"))
		if p.EgressFD > 0 {
			if err := sendProxyListener(p.EgressFD); err != nil {
				return send(outcome{Setup: err.Error(), Exit: 125})
			}
		}
	} else {
		// Without a pid namespace, orphans of the command come back to the
		// init rather than escaping to the host's init.
		_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	}
	if p.Serve {
		_ = json.NewEncoder(report).Encode(outcome{Ready: true})
		report.Close()
		return serveInit(p)
	}

	planR, planW, err := os.Pipe()
	if err != nil {
		return send(outcome{Setup: "start the command: " + err.Error(), Exit: 125})
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		return send(outcome{Setup: "start the command: " + err.Error(), Exit: 125})
	}
	stage := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{stageArg0},
		Env:        []string{},
		Dir:        p.Dir,
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		ExtraFiles: []*os.File{planR, errW},
	}
	// Forward what would stop the sandbox to the command; as pid 1 the init
	// would otherwise ignore it.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	if err := stage.Start(); err != nil {
		return send(outcome{Setup: "start the command: " + err.Error(), Exit: 125})
	}
	planR.Close()
	errW.Close()
	go func() {
		for s := range sigs {
			_ = stage.Process.Signal(s)
		}
	}()
	_ = json.NewEncoder(planW).Encode(p)
	planW.Close()

	// The stage writes an errno here only when execve fails; on success the
	// pipe closes with the exec.
	var execErr struct {
		Errno int
		Path  string
	}
	msg, _ := io.ReadAll(errR)
	errR.Close()
	if len(msg) > 0 {
		_ = json.Unmarshal(msg, &execErr)
	}

	werr := stage.Wait()
	o := outcome{}
	if execErr.Errno != 0 {
		o.ExecErrno, o.ExecPath = execErr.Errno, execErr.Path
	}
	if st := stage.ProcessState; st != nil {
		ws := st.Sys().(syscall.WaitStatus)
		switch {
		case ws.Signaled():
			o.Signal = int(ws.Signal())
		default:
			o.Exit = ws.ExitStatus()
		}
		o.CPU = int64(st.UserTime() + st.SystemTime())
	} else if werr != nil {
		var ee *exec.ExitError
		if !errors.As(werr, &ee) {
			o.Setup = "wait for the command: " + werr.Error()
			o.Exit = 125
		}
	}
	return send(o)
}

// sendProxyListener makes the listener the command reaches the egress proxy
// on (ProxyAddr on the sandbox's loopback, the only interface it has) and
// sends it to the host over fd, which serves it from outside. No socket is
// bind-mounted and no relay process runs inside.
func sendProxyListener(fd int) error {
	defer unix.Close(fd)
	l, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("make the proxy listener: %w", err)
	}
	defer unix.Close(l)
	ap := netip.MustParseAddrPort(ProxyAddr)
	if err := unix.Bind(l, &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}); err != nil {
		return fmt.Errorf("bind the proxy listener to %s: %w", ProxyAddr, err)
	}
	if err := unix.Listen(l, 128); err != nil {
		return fmt.Errorf("listen on %s: %w", ProxyAddr, err)
	}
	if err := unix.Sendmsg(fd, []byte{1}, unix.UnixRights(l), nil, 0); err != nil {
		return fmt.Errorf("hand the proxy listener to warden: %w", err)
	}
	return nil
}

// receiveProxyListener receives the listener a sandbox's init made. ok is
// false when the init ended without sending one (its report says why).
func receiveProxyListener(conn *os.File) (l net.Listener, ok bool, err error) {
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(int(conn.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, false, fmt.Errorf("receive the proxy listener: %w", err)
	}
	if n == 0 && oobn == 0 {
		return nil, false, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, false, fmt.Errorf("receive the proxy listener: no descriptor in the message")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return nil, false, fmt.Errorf("receive the proxy listener: no descriptor in the message")
	}
	f := os.NewFile(uintptr(fds[0]), "sandbox-proxy-listener")
	defer f.Close()
	l, err = net.FileListener(f)
	if err != nil {
		return nil, false, fmt.Errorf("use the proxy listener: %w", err)
	}
	return l, true, nil
}
