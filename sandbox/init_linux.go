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
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// runInit is the sandbox's init. In namespace modes it is pid 1: it shapes
// the mounts and network, starts the command through the stage as its only
// child, forwards signals to it, and reports how it ended. Before it
// reports it ends everything else in its pid namespace (endTheRest), as
// the kernel would when it exits: a report means nothing of the run is
// left, and the host need not wait for the init's own exit.
func runInit() int {
	report := os.NewFile(fdReport, "report")
	namespaces := len(os.Args) > 1 && os.Args[1] == initNamespacesArg
	send := func(o outcome) int {
		if namespaces {
			endTheRest()
		}
		_ = json.NewEncoder(report).Encode(o)
		report.Close()
		if o.Signal != 0 {
			return 128 + o.Signal
		}
		return o.Exit
	}
	fail := func(setup string) int { return send(outcome{Setup: setup, Exit: 125}) }
	// The command runs as the init's own uid: undumpable, the init's /proc
	// entries (its descriptors, environment, memory) are closed to it, as
	// ptrace is by capabilities and seccomp.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fail("make the sandbox's init undumpable: " + err.Error())
	}
	// In namespaces, what needs no plan is done before it comes: an init
	// started while the gate decides (StartEarly) waits for its plan, and
	// this is then off the run's path.
	if namespaces {
		if err := prepareNamespaces(); err != nil {
			return fail(err.Error())
		}
	}
	// An init started before its run starts its stage as soon as the host
	// has moved it into its cgroup (and said so), so that the stage and
	// the command it becomes are there too: the stage's start is then off
	// the run's path as well.
	var st *stage
	early := namespaces && len(os.Args) > 2 && (os.Args[2] == initEarlyArg || os.Args[2] == initEarlyThreadArg)
	if early {
		if err := awaitAdmitted(fdPlan + 2); err != nil {
			return fail(err.Error())
		}
		if os.Args[2] == initEarlyArg {
			var err error
			if st, err = startStage(true); err != nil {
				return fail("start the command: " + err.Error())
			}
		}
		warmPlanDecoder()
	}
	p, raw, err := readPlanBytes()
	if err != nil {
		return fail(err.Error())
	}
	if p.Namespaces != namespaces {
		return fail("the sandbox's plan does not match how its init was started (namespaces or not); run again")
	}
	if p.StdinPassed && !early || p.Serve && early {
		return fail("the sandbox's plan does not match how its init was started (early or not); run again")
	}
	if p.StdinPassed && st == nil {
		// No stage started early to take it: the command's standard
		// input becomes the init's own, for the thread or the stage that
		// starts the command.
		if err := receiveStdin(p.ListenFD); err != nil {
			return fail(err.Error())
		}
	}
	if p.Namespaces {
		if err := setupMounts(p); err != nil {
			return fail(err.Error())
		}
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
	// The session's /tmp grown past its cap ends the run: everything in
	// the namespace but the init is killed.
	var tw *tmpWatch
	if p.Namespaces && p.TmpDir != "" {
		tw = watchTmp("/tmp", p.TmpCap, p.TmpShare, func() { _ = unix.Kill(-1, unix.SIGKILL) })
	}
	send = func(send func(outcome) int) func(outcome) int {
		return func(o outcome) int {
			o.TmpOver = tw.fired() > 0
			return send(o)
		}
	}(send)

	// Forward what would stop the sandbox to the command; as pid 1 the init
	// would otherwise ignore it.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	if st == nil && launcherFits(p) {
		return send(runFromThread(p, sigs))
	}
	if st == nil {
		if st, err = startStage(false); err != nil {
			return fail("start the command: " + err.Error())
		}
	}
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

// endTheRest kills and reaps every other process in the init's pid
// namespace, then closes the init's standard streams, so that the host's
// ends of the command's output pipes reach their end with the report. Only
// pid 1 of its own namespace does: kill(-1) there reaches that namespace
// alone.
func endTheRest() {
	if os.Getpid() != 1 {
		return
	}
	for {
		// Again after each child reaped: a process forked while the
		// signal went round is killed too.
		_ = unix.Kill(-1, unix.SIGKILL)
		if _, err := unix.Wait4(-1, nil, unix.WALL, nil); err != nil && err != unix.EINTR {
			break // ECHILD: none left
		}
	}
	for fd := range 3 {
		_ = unix.Close(fd)
	}
}

// prepareNamespaces does what an init in namespaces does before its plan:
// it makes its mounts private, mounts a fresh /proc, brings its loopback up
// (with fakedns's range and the sandbox's /etc/resolv.conf: directNetwork)
// and names its host.
func prepareNamespaces() error {
	if err := mountProc(); err != nil {
		return err
	}
	if err := loopbackUp(); err != nil {
		return err
	}
	// Before the plan says whether the host will answer lookups (a
	// DirectEgress run): nothing listens there in a run it does not, and
	// a lookup fails at once, as it would with no name server at all.
	directNetwork()
	_ = unix.Sethostname([]byte("warden-sandbox"))
	return nil
}

// stage is a one-shot run's stage, started and waiting for its plan: for a
// profile whose commands may not create processes (no_spawn), or whose
// rlimits would bind the init itself (launcherFits).
type stage struct {
	cmd   *exec.Cmd
	planW *os.File // its plan goes here
	errR  *os.File // why it could not exec, if it could not
}

// stageFailure is what the stage reports when it cannot run the command.
type stageFailure struct {
	Errno int
	Path  string
	Dir   bool `json:",omitempty"` // Path is the directory it could not enter
}

// awaitAdmitted waits for the host's word, on the socket fd, that this
// init is in its cgroup.
func awaitAdmitted(fd int) error {
	var b [1]byte
	n, err := unix.Read(fd, b[:])
	if err != nil || n != 1 {
		return fmt.Errorf("wait to be moved into the sandbox's cgroup: %v", err)
	}
	return nil
}

// startStage starts a stage, in /: its plan says where to go, and a
// directory it cannot enter is said as such (stageFailure.Dir). An early
// one (before the plan and the mounts; it sees them once they are made,
// in the namespace it shares) also gets the listener socket as fd 5,
// where the command's standard input comes (plan.StdinPassed).
func startStage(early bool) (*stage, error) {
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
	if early {
		cmd.Args = append(cmd.Args, initEarlyArg)
		cmd.ExtraFiles = append(cmd.ExtraFiles, os.NewFile(fdPlan+2, "listen"))
	}
	err = cmd.Start()
	planR.Close()
	errW.Close()
	if err != nil {
		planW.Close()
		errR.Close()
		return nil, err
	}
	return &stage{cmd: cmd, planW: planW, errR: errR}, nil
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

// listenLoopback returns a socket bound to addr, an IPv4 address and
// port: listening TCP, or UDP when addr starts with udpPrefix.
func listenLoopback(addr string) (int, error) {
	typ := unix.SOCK_STREAM
	if rest, ok := strings.CutPrefix(addr, udpPrefix); ok {
		addr, typ = rest, unix.SOCK_DGRAM
	}
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Is4() {
		return -1, fmt.Errorf("make a listener on %q: not an IPv4 address and port", addr)
	}
	l, err := unix.Socket(unix.AF_INET, typ|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("make a listener on %s: %w", addr, err)
	}
	if err := unix.Bind(l, &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}); err != nil {
		unix.Close(l)
		return -1, fmt.Errorf("bind a listener to %s: %w", addr, err)
	}
	if typ == unix.SOCK_DGRAM {
		return l, nil
	}
	if err := unix.Listen(l, 128); err != nil {
		unix.Close(l)
		return -1, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return l, nil
}

// udpPrefix marks an address of plan.Listen that is a UDP socket's.
const udpPrefix = "udp "

// receiveListeners receives the sockets a sandbox's init made for services
// (sendListeners), in the order the plan listed their addresses: each a
// net.Listener, or a net.PacketConn for a UDP service. ok is false when
// the init ended without sending them (its report says why). Anything but
// exactly one socket a service is an error, and leaves nothing open.
func receiveListeners(conn *os.File, services []loopbackService) (ls []io.Closer, ok bool, err error) {
	want := len(services)
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
		var l io.Closer
		if strings.HasPrefix(services[i].addr, udpPrefix) {
			l, err = net.FilePacketConn(f)
		} else {
			l, err = net.FileListener(f)
		}
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

// runFromThread runs p's command the way a world's launcher does, without
// a stage: one locked thread of the init takes the stage's restrictions
// (capabilities, no_new_privs, Landlock, seccomp, rlimits that bind only
// what it starts: launcherFits) and forks the command, which inherits
// exactly that thread's state; the init's other threads keep theirs and
// never fork. It returns the command's outcome once it has ended; signals
// on sigs go to the command.
func runFromThread(p *plan, sigs <-chan os.Signal) outcome {
	type started struct {
		proc *os.Process
		fail stageFailure
		err  error
	}
	ch := make(chan started, 1)
	go func() {
		// Never unlocked: the thread ends with this goroutine, and with it
		// its restrictions.
		runtime.LockOSThread()
		proc, fail, err := startRestricted(p)
		ch <- started{proc, fail, err}
	}()
	st := <-ch
	switch {
	case st.err != nil:
		return outcome{Setup: "start the command: " + st.err.Error(), Exit: 125}
	case st.fail.Errno != 0:
		return outcome{ExecErrno: st.fail.Errno, ExecPath: st.fail.Path, ExecDir: st.fail.Dir}
	}
	go func() {
		for s := range sigs {
			_ = st.proc.Signal(s)
		}
	}()
	ps, err := st.proc.Wait()
	if err != nil {
		return outcome{Setup: "wait for the command: " + err.Error(), Exit: 125}
	}
	o := outcome{CPU: int64(ps.UserTime() + ps.SystemTime())}
	if ws := ps.Sys().(syscall.WaitStatus); ws.Signaled() {
		o.Signal = int(ws.Signal())
	} else {
		o.Exit = ws.ExitStatus()
	}
	return o
}

// startRestricted restricts the calling (locked) thread as the stage
// restricts itself (restrictThread) and starts p's command from it: the
// process, or why it could not start (fail), or why the thread could not be
// restricted (err).
func startRestricted(p *plan) (*os.Process, stageFailure, error) {
	oom := openOOMScore()
	if oom != nil {
		defer oom.f.Close()
	}
	if err := restrictThread(p); err != nil {
		return nil, stageFailure{}, err
	}
	if len(p.Args) == 0 {
		return nil, stageFailure{Errno: int(syscall.EINVAL)}, nil
	}
	dir := p.Dir
	if dir == "" {
		dir = "/"
	}
	path, errno := lookPathIn(p.Args[0], p.Env, dir)
	if errno != 0 {
		return nil, stageFailure{Errno: int(errno), Path: p.Args[0]}, nil
	}
	var proc *os.Process
	var err error
	oom.starting(p.OOMScoreAdj, func() {
		proc, err = os.StartProcess(path, p.Args, &os.ProcAttr{
			Dir: dir, Env: p.Env, Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		})
	})
	if err != nil {
		return nil, startFailure(err, path, dir), nil
	}
	return proc, stageFailure{}, nil
}

// startFailure says why a command could not start: its errno and path, or
// the directory it could not enter (a child's chdir and its exec fail
// alike).
func startFailure(err error, path, dir string) stageFailure {
	errno := syscall.EACCES
	var se syscall.Errno
	if errors.As(err, &se) {
		errno = se
	}
	if _, serr := os.Stat(dir); serr != nil && errors.As(serr, &se) {
		return stageFailure{Errno: int(se), Path: dir, Dir: true}
	}
	return stageFailure{Errno: int(errno), Path: path}
}
