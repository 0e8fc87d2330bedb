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
	// The command runs as the init's own uid: undumpable, the init's /proc
	// entries (its descriptors, environment, memory) are closed to it, as
	// ptrace is by capabilities and seccomp.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	report := os.NewFile(fdReport, "report")
	send := func(o outcome) int {
		_ = json.NewEncoder(report).Encode(o)
		report.Close()
		if o.Signal != 0 {
			return 128 + o.Signal
		}
		return o.Exit
	}
	// A one-shot init (os.Args[1] is initRunArg) starts its stage once it
	// is in its run's cgroup, while the gate still decides: the stage
	// waits for its plan, which comes after the mounts. It needs this
	// namespace's /proc first: Go writes the stage's uid map through
	// /proc/PID, and until then /proc is the host's, whose PID is another
	// process.
	var st *stage
	var procMounted bool
	fail := func(setup string) int {
		if st != nil {
			st.abort()
		}
		return send(outcome{Setup: setup, Exit: 125})
	}
	if len(os.Args) > 1 && os.Args[1] == initRunArg {
		var b [1]byte
		if n, err := unix.Read(fdPlan, b[:]); n != 1 || b[0] != admitted {
			return send(outcome{Setup: fmt.Sprintf("the sandbox was not admitted to its cgroup (%v)", err), Exit: 125})
		}
		namespaces := os.Getpid() == 1
		if namespaces {
			if err := mountProc(); err != nil {
				return fail(err.Error())
			}
			procMounted = true
		}
		var err error
		if st, err = startStage(namespaces); err != nil {
			return fail("start the command: " + err.Error())
		}
	}
	p, raw, err := readPlanBytes()
	if err != nil {
		return fail(err.Error())
	}
	if st != nil && (p.Serve || p.Namespaces != st.namespaces) {
		return fail("a one-shot sandbox's init got another kind of plan")
	}
	if p.Namespaces {
		if err := setupMounts(p, procMounted); err != nil {
			return fail(err.Error())
		}
		if err := loopbackUp(); err != nil {
			return fail(err.Error())
		}
		_ = unix.Sethostname([]byte("warden-sandbox"))
		if p.ListenFD > 0 && len(p.Listen) == 0 {
			// An init started before its run was known gets the socket
			// whether or not the run serves anything on its loopback.
			unix.Close(p.ListenFD)
		} else if p.ListenFD > 0 {
			if err := sendListeners(p.ListenFD, p.Listen); err != nil {
				return fail(err.Error())
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

	if st == nil {
		if st, err = startStage(p.Namespaces); err != nil {
			return fail("start the command: " + err.Error())
		}
	}
	// Forward what would stop the sandbox to the command; as pid 1 the init
	// would otherwise ignore it.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	go func() {
		for s := range sigs {
			_ = st.cmd.Process.Signal(s)
		}
	}()
	_, _ = st.planW.Write(raw)
	st.planW.Close()

	// The stage writes an errno here only when it cannot exec the command
	// (or enter its directory); on success the pipe closes with the exec.
	var execErr stageFailure
	msg, _ := io.ReadAll(st.errR)
	st.errR.Close()
	if len(msg) > 0 {
		_ = json.Unmarshal(msg, &execErr)
	}

	werr := st.cmd.Wait()
	o := outcome{}
	if execErr.Errno != 0 {
		o.ExecErrno, o.ExecPath, o.ExecDir = execErr.Errno, execErr.Path, execErr.Dir
	}
	if ps := st.cmd.ProcessState; ps != nil {
		ws := ps.Sys().(syscall.WaitStatus)
		switch {
		case ws.Signaled():
			o.Signal = int(ws.Signal())
		default:
			o.Exit = ws.ExitStatus()
		}
		o.CPU = int64(ps.UserTime() + ps.SystemTime())
	} else if werr != nil {
		var ee *exec.ExitError
		if !errors.As(werr, &ee) {
			o.Setup = "wait for the command: " + werr.Error()
			o.Exit = 125
		}
	}
	return send(o)
}

// initRunArg, after initArg0, makes an init a one-shot run's (spawnInit).
const initRunArg = "run"

// stage is a one-shot run's stage, started and waiting for its plan.
type stage struct {
	cmd        *exec.Cmd
	planW      *os.File // its plan goes here
	errR       *os.File // why it could not exec, if it could not
	namespaces bool
}

// stageFailure is what the stage reports when it cannot run the command.
type stageFailure struct {
	Errno int
	Path  string
	Dir   bool `json:",omitempty"` // Path is the directory it could not enter
}

// startStage starts a stage as the caller's own uid (asCaller), in /: its
// plan says where to go, and a directory it cannot enter is said as such
// (stageFailure.Dir).
func startStage(namespaces bool) (*stage, error) {
	planR, planW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		planR.Close()
		planW.Close()
		return nil, err
	}
	cmd := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{stageArg0},
		Env:        helperEnv,
		Dir:        "/",
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		ExtraFiles: []*os.File{planR, errW},
	}
	cmd.SysProcAttr = asCaller(nil, namespaces)
	err = cmd.Start()
	planR.Close()
	errW.Close()
	if err != nil {
		planW.Close()
		errR.Close()
		return nil, err
	}
	return &stage{cmd: cmd, planW: planW, errR: errR, namespaces: namespaces}, nil
}

// abort ends a stage that will get no plan.
func (s *stage) abort() {
	s.planW.Close()
	s.errR.Close()
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// sendListeners makes a listener on each of addrs on the sandbox's loopback
// (the only interface it has) and sends them all to the host over fd, in
// one message and in that order; the host serves them from outside. This
// is how the command reaches the egress proxy (ProxyAddr) and the signer
// (SignerAddr). No socket is bind-mounted and no relay process runs inside.
func sendListeners(fd int, addrs []string) error {
	defer unix.Close(fd)
	var ls []int
	defer func() {
		for _, l := range ls {
			unix.Close(l)
		}
	}()
	for _, addr := range addrs {
		l, err := listenLoopback(addr)
		if err != nil {
			return err
		}
		ls = append(ls, l)
	}
	if err := unix.Sendmsg(fd, []byte{1}, unix.UnixRights(ls...), nil, 0); err != nil {
		return fmt.Errorf("hand the sandbox's listeners to warden: %w", err)
	}
	return nil
}

// listenLoopback returns a listening TCP socket bound to addr, an IPv4
// address and port.
func listenLoopback(addr string) (int, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Is4() {
		return -1, fmt.Errorf("make a listener on %q: not an IPv4 address and port", addr)
	}
	l, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("make a listener on %s: %w", addr, err)
	}
	if err := unix.Bind(l, &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}); err != nil {
		unix.Close(l)
		return -1, fmt.Errorf("bind a listener to %s: %w", addr, err)
	}
	if err := unix.Listen(l, 128); err != nil {
		unix.Close(l)
		return -1, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return l, nil
}

// receiveListeners receives the want listeners a sandbox's init made
// (sendListeners), in the order the plan listed their addresses. ok is
// false when the init ended without sending them (its report says why).
// Anything but exactly want listeners is an error, and leaves nothing open.
func receiveListeners(conn *os.File, want int) (ls []net.Listener, ok bool, err error) {
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4*want))
	n, oobn, flags, _, err := unix.Recvmsg(int(conn.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, false, fmt.Errorf("receive the sandbox's listeners: %w", err)
	}
	if n == 0 && oobn == 0 {
		return nil, false, nil
	}
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for i := range msgs {
			if got, err := unix.ParseUnixRights(&msgs[i]); err == nil {
				fds = append(fds, got...)
			}
		}
	}
	if flags&unix.MSG_CTRUNC != 0 || len(fds) != want {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, false, fmt.Errorf("receive the sandbox's listeners: got %d descriptors, want %d", len(fds), want)
	}
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "sandbox-listener")
		l, err := net.FileListener(f)
		f.Close()
		if err != nil {
			for _, rest := range fds[i+1:] {
				unix.Close(rest)
			}
			for _, l := range ls {
				l.Close()
			}
			return nil, false, fmt.Errorf("use the sandbox's listener: %w", err)
		}
		ls = append(ls, l)
	}
	return ls, true, nil
}
