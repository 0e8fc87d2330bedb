//go:build amd64 || arm64

package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentwarden/warden/egress/fakedns"
)

// Native is the engine that isolates commands with the Linux kernel's own
// features. The zero value is ready to use.
type Native struct {
	// Exe is the binary re-executed as the sandbox's init and stage; it must
	// call Main first. Empty means this process's own executable.
	Exe string
	// GitGuard, when set, watches the git repositories a command that may
	// write its project makes there (GitGuard); its warnings join the
	// run's.
	GitGuard GitGuard
}

// Run runs one command in a fresh sandbox and tears the sandbox down when
// the command ends. The error is non-nil only when the command could not be
// run at all (a bad spec, a sandbox the kernel cannot build, a command that
// cannot be started); a command that fails or is killed by a limit is a
// Result.
func (n *Native) Run(ctx context.Context, s Spec, c Command) (Result, error) {
	if err := s.Validate(); err != nil {
		return Result{}, err
	}
	if len(c.Args) == 0 {
		return Result{}, errors.New("no command to run")
	}
	if s.Mode == ModeOff {
		return runUnisolated(ctx, s, c)
	}
	exe, err := initExe(n.Exe)
	if err != nil {
		return Result{}, fmt.Errorf("find warden's own binary to start the sandbox: %w", err)
	}
	abi := LandlockABI()
	if err := seccompAvailable(); err != nil {
		return Result{}, err
	}
	id := newID()
	e := takeEarly(exe, s.Mode, c.Stdin)
	var cg, remove *cgroup
	var cgErr error
	if e != nil {
		// The early init is in its cgroup already; the cgroup is removed
		// even when it cannot cap these limits, and the init ended if
		// the run stops before it gets its plan.
		defer e.release()
		remove = e.cg
		cg, cgErr = e.cgroupFor(s.Limits)
	} else {
		cg, cgErr = newCgroup(id, s.Limits)
		remove = cg
	}
	// The cgroup goes once the init has exited. An init that reported has
	// ended everything else already (launch): a long-lived process (one
	// that keeps an early init, a session's supervisor) answers without
	// waiting for its exit, the namespaces' teardown.
	var lingering chan error
	defer func() {
		switch {
		case lingering == nil:
			remove.remove()
		case longLived():
			go func() {
				<-lingering
				remove.remove()
			}()
		default:
			<-lingering
			remove.remove()
		}
	}()
	var warn []string
	if cgErr != nil {
		if s.Strict {
			return Result{}, fmt.Errorf("cannot cap memory and processes by cgroup (%v), and --strict refuses the rlimit fallback", cgErr)
		}
		warn = append(warn, fmt.Sprintf("no cgroup for the limits: %v", cgErr))
	}
	mode := s.Mode
	var sweepGit func() []string
	if n.GitGuard != nil && s.ProjectWritable {
		sweepGit = n.GitGuard(&s, true) // before the command can run
	}
	start := time.Now()
	r, err := n.launch(ctx, &s, &c, exe, mode, abi, cg, id, e, &lingering)
	var nsErr *namespaceError
	if errors.As(err, &nsErr) {
		if s.Strict {
			return Result{}, fmt.Errorf("%v; --strict refuses to fall back to light mode", err)
		}
		if s.Net == NetProxy {
			// The egress proxy needs a network namespace to be the only way
			// out; without one the command gets no network at all, which
			// is less than it asked for, never more.
			s.Net, s.Egress = NetNone, nil
			warn = append(warn, "the egress proxy needs a network namespace, so the command ran with no network")
		}
		if s.Signer != nil {
			return Result{}, fmt.Errorf("%v; the signer needs a network namespace, so the command cannot run in light mode", err)
		}
		warn = append(warn, fmt.Sprintf("%v; the command ran in light mode (Landlock, seccomp and rlimits, without namespaces)", err))
		mode = ModeLight
		r, err = n.launch(ctx, &s, &c, exe, mode, abi, cg, id, nil, &lingering)
	}
	r.Mode, r.Wall = mode, time.Since(start)
	r.Warnings = append(warn, r.Warnings...)
	if sweepGit != nil {
		// Everything the command ran has ended (launch waits for its
		// init), so nothing it left can change the repositories after.
		r.Warnings = append(r.Warnings, sweepGit()...)
	}
	return r, err
}

// namespaceError says the kernel refused to create the sandbox's namespaces.
type namespaceError struct{ err error }

func (e *namespaceError) Error() string {
	if outer := outerSandbox(); outer != "" {
		return fmt.Sprintf("an outer sandbox holds this process (%s) and refuses new namespaces (%v)", outer, e.err)
	}
	return fmt.Sprintf("user namespaces are not available here (%v); on Ubuntu 24.04 set kernel.apparmor_restrict_unprivileged_userns=0, in containers allow unshare", e.err)
}

// launch runs c in a sandbox of mode, in the early init e when there is one.
// An init in namespaces that reported is left to exit on its own: its exit
// is sent to *lingers, for the caller to wait for before it removes the
// cgroup.
func (n *Native) launch(ctx context.Context, s *Spec, c *Command, exe string, mode Mode, abi int, cg *cgroup, id string, e *earlyInit, lingers *chan error) (Result, error) {
	var tmp string
	if !mode.Namespaces() {
		var err error
		if tmp, err = os.MkdirTemp("", "warden-sandbox-"+id+"-"); err != nil {
			return Result{}, fmt.Errorf("create the sandbox's temporary directory: %w", err)
		}
		defer os.RemoveAll(tmp)
	}
	p, warn, err := compile(s, c, mode, abi, cg, tmp)
	if err != nil {
		return Result{}, err
	}
	res := Result{Warnings: warn}
	var overflow atomic.Bool
	ctx, cancel := context.WithTimeout(ctx, s.Limits.Wall)
	defer cancel()
	var services []loopbackService
	if mode.Namespaces() {
		services = loopbackServices(s)
	}
	outW, errW := shareWriter(c.Stdout, c.Stderr)
	var stdout, stderr *capped
	var ip *initProc
	var listenConn *os.File
	oomBefore := cg.oomKills()
	if e != nil && !e.waitAdmitted() {
		e = nil // ended; Run's release closes what it left
	}
	started := func(int) {}
	if s.Runs != "" && mode.Namespaces() {
		// Registered before its command starts (its init's pid follows),
		// so that a hold of the session never misses it (HoldRuns).
		var remove func()
		var err error
		if started, remove, err = registerRun(s.Runs); err != nil {
			return res, err
		}
		defer remove()
		if e != nil {
			started(e.ip.pid)
		}
	}
	if e != nil {
		// The init started early (StartEarly, KeepEarly) writes to pipes
		// of its own and got the listener socket as fd 5 whether or not
		// this run serves anything on its loopback; it is in its cgroup
		// already, and gets the command's stdin over that socket.
		p.ListenFD = fdPlan + 2
		for _, svc := range services {
			p.Listen = append(p.Listen, svc.addr)
		}
		if err := e.hand(p, c.Stdin); err != nil {
			// It died since it started: this run starts its own, in the
			// same cgroup (Run's release ends what is left of it).
			p.ListenFD, p.Listen, p.StdinPassed = 0, nil, false
			e = nil
		}
	}
	if e != nil {
		e.used = true
		stdout = cappedPipe(e.outR, nil, outW, s.Limits.Output, &overflow, cancel)
		stderr = cappedPipe(e.errR, nil, errW, s.Limits.Output, &overflow, cancel)
		if len(services) > 0 {
			listenConn = e.listen
			defer listenConn.Close()
		} else {
			e.listen.Close()
		}
		ip = e.ip
	} else {
		var err error
		if stdout, err = newCapped(outW, s.Limits.Output, &overflow, cancel); err != nil {
			return res, err
		}
		if stderr, err = newCapped(errW, s.Limits.Output, &overflow, cancel); err != nil {
			stdout.abort()
			return res, err
		}
		var extra []*os.File
		if len(services) > 0 {
			host, child, err := socketPair()
			if err != nil {
				stdout.abort()
				stderr.abort()
				return res, err
			}
			defer host.Close()
			listenConn, extra = host, []*os.File{child}
			p.ListenFD = fdPlan + 2
			for _, svc := range services {
				p.Listen = append(p.Listen, svc.addr)
			}
		}
		ip, err = startInit(exe, mode, cg, p, c.Stdin, stdout.w, stderr.w, extra...)
		for _, f := range extra {
			f.Close()
		}
		if err == nil {
			started(ip.pid)
		}
		stdout.started()
		stderr.started()
		if err != nil {
			stdout.wait()
			stderr.wait()
			return res, err
		}
	}
	var listenErr error
	var unwired bool
	if listenConn != nil {
		ls, ok, err := receiveListeners(listenConn, services)
		switch {
		case err != nil:
			// Without its listeners the command lacks what it was promised
			// (its way out, its signer): end the run and say why, never run
			// it half-wired.
			listenErr = err
			ip.kill()
		case !ok:
			// The init ended without sending them; its report says why,
			// and if it has none, the error below does.
			unwired = true
		default:
			var served sync.WaitGroup
			for i, l := range ls {
				served.Go(func() { _ = services[i].run(l) })
			}
			defer func() {
				for _, l := range ls {
					l.Close()
				}
				served.Wait()
			}()
		}
	}

	done := make(chan error, 1)
	go func() { ip.wait(); done <- nil }()
	type report struct {
		o  outcome
		ok bool
	}
	reported := make(chan report, 1)
	go func() {
		o, ok := ip.readOutcome()
		reported <- report{o, ok}
	}()
	var timedOut bool
	var rep report
	select {
	case rep = <-reported:
	case <-ctx.Done():
		timedOut = !overflow.Load() && errors.Is(ctx.Err(), context.DeadlineExceeded)
		ip.kill()
		rep = <-reported
	}
	o, ok := rep.o, rep.ok
	switch {
	case !mode.Namespaces():
		// Without a pid namespace, whatever the command left behind
		// shares the init's session; the cgroup, when there is one,
		// catches the rest.
		<-done
		ip.kill()
	case ok:
		// An init in namespaces reports once it has ended everything else
		// there (endTheRest): nothing of the run is left. Its own exit
		// (its mount namespace torn down) is left to the caller.
		*lingers = done
	default:
		// It died before it could report: the kernel ends the rest of
		// its namespace as it exits.
		<-done
	}
	stdout.wait()
	stderr.wait()
	// Everything the command ran has ended (its pid namespace, or its
	// session and cgroup, are gone): what it left in a protected path that
	// was missing comes out of the project now.
	res.Warnings = append(res.Warnings, sweepCreated(p.Sweep, s.Quarantine, time.Now())...)

	if listenErr != nil {
		return res, fmt.Errorf("set up the sandbox's network: %w", listenErr)
	}
	if unwired && o.Setup == "" {
		return res, errors.New("set up the sandbox's network: the sandbox's init ended before it handed over its listeners")
	}
	if !ok {
		// The init was killed before it could report: by the timeout, the
		// output limit, or the memory cap.
		o = outcome{Signal: int(syscall.SIGKILL)}
	}
	if o.Setup != "" {
		return res, fmt.Errorf("set up the sandbox: %s", o.Setup)
	}
	if o.ExecErrno != 0 {
		return res, &ExecError{Path: o.ExecPath, Err: syscall.Errno(o.ExecErrno), Dir: o.ExecDir}
	}
	res.Signal, res.CPU = o.Signal, time.Duration(o.CPU)
	res.ExitCode = o.Exit
	if o.Signal != 0 {
		res.ExitCode = 128 + o.Signal
	}
	switch sig := syscall.Signal(o.Signal); {
	case o.TmpOver:
		res.Limit = LimitTmp
	case overflow.Load():
		res.Limit = LimitOutput
	case timedOut:
		res.Limit = LimitWall
	case cg.oomKills() > oomBefore:
		res.Limit = LimitMemory
	case sig == syscall.SIGXCPU || sig == syscall.SIGKILL && s.Limits.CPU > 0 && res.CPU >= s.Limits.CPU:
		res.Limit = LimitCPU
	case sig == syscall.SIGXFSZ:
		res.Limit = LimitFileSize
	case sig == syscall.SIGSYS:
		res.Limit = LimitSyscall
	}
	return res, nil
}

// initAttr is how the init is started: in its own session, killed if the
// process that started it dies, and in namespace modes in new user, mount,
// pid, net, ipc and uts namespaces. There the caller's uid and gid are
// themselves (a command sees the ids it has on the host: npm, pip and git
// check file ownership against them), and the init, which must mount and
// configure its namespaces, keeps every capability of its namespace across
// its exec as an ambient one (a root caller is root there, as on the host).
// What the init starts inherits them until it drops them (dropPrivileges).
func initAttr(mode Mode) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if mode.Namespaces() {
		uid, gid := os.Getuid(), os.Getgid()
		attr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID |
			syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		attr.GidMappingsEnableSetgroups = false
		if uid != 0 {
			attr.AmbientCaps = allCapabilities()
		}
	}
	return attr
}

// allCapabilities lists every capability this kernel knows.
var allCapabilities = sync.OnceValue(func() []uintptr {
	last := unix.CAP_LAST_CAP
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 && n < 64 {
			last = n
		}
	}
	caps := make([]uintptr, 0, last+1)
	for c := 0; c <= last; c++ {
		caps = append(caps, uintptr(c))
	}
	return caps
})

func isNamespaceRefusal(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) ||
		errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EUSERS) || errors.Is(err, syscall.EACCES)
}

// loopbackService is something the host serves on a sandbox's loopback,
// through a socket the sandbox's init makes (sendListeners): a listener,
// or a UDP socket when addr starts with udpPrefix.
type loopbackService struct {
	addr   string
	serve  func(net.Listener) error
	answer func(net.PacketConn) error // a UDP service's
}

// run serves the socket the init made for s until it is closed.
func (s loopbackService) run(c io.Closer) error {
	switch c := c.(type) {
	case net.Listener:
		return s.serve(c)
	case net.PacketConn:
		return s.answer(c)
	}
	return fmt.Errorf("serve %s: a socket of an unknown kind", s.addr)
}

// loopbackServices lists what the host serves inside a sandbox built from
// s: the egress proxy under NetProxy, with the direct listeners and the
// name server when it serves clients that ignore the proxy variables
// (DirectEgress), and the signer when there is one. Their order is the
// order of the plan's Listen.
func loopbackServices(s *Spec) []loopbackService {
	var svcs []loopbackService
	if s.Net == NetProxy {
		svcs = append(svcs, loopbackService{addr: ProxyAddr, serve: s.Egress.Serve})
		if d, ok := s.Egress.(DirectEgress); ok {
			names := &fakedns.Table{}
			dns := &fakedns.Server{Table: names}
			svcs = append(svcs, loopbackService{addr: udpPrefix + DNSAddr, answer: dns.Serve})
			for _, port := range DirectPorts {
				serve := func(l net.Listener) error { return d.ServeDirect(l, names.Name) }
				if port == 80 {
					serve = func(l net.Listener) error { return d.ServeDirectHTTP(l, names.Name) }
				}
				svcs = append(svcs, loopbackService{addr: "0.0.0.0:" + strconv.Itoa(int(port)), serve: serve})
			}
		}
	}
	if s.Signer != nil {
		svcs = append(svcs, loopbackService{addr: SignerAddr, serve: s.Signer.Serve})
	}
	return svcs
}

// socketPair returns the two ends of a Unix stream socket pair.
func socketPair() (host, child *os.File, err error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("make the socket for the sandbox's listeners: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "listen-host"), os.NewFile(uintptr(fds[1]), "listen-child"), nil
}

func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// shareWriter returns the destinations for the two output streams: as
// given, unless they are one writer, which then gets a lock, since each
// stream is copied by its own goroutine.
func shareWriter(out, err io.Writer) (io.Writer, io.Writer) {
	if out == nil || out != err {
		return out, err
	}
	if _, ok := out.(*os.File); ok {
		return out, err
	}
	w := &lockedWriter{w: out}
	return w, w
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// capped copies one output stream of the sandbox to its destination, up to
// a limit; past it, it stops copying, flags the overflow and kills the
// sandbox through stop.
type capped struct {
	r, w     *os.File
	dst      io.Writer
	limit    int64
	overflow *atomic.Bool
	stop     func()
	wg       sync.WaitGroup
	// detached: the command has ended and what is left of its output (from
	// processes it left in the background) is drained, not delivered.
	mu       sync.Mutex
	detached bool
}

// Write delivers p to the destination until the stream is detached.
func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.detached {
		return len(p), nil
	}
	return c.dst.Write(p)
}

// detach stops delivering output, after a short grace for what the
// command itself wrote last, and keeps draining what processes it left in
// the background write, so that they never meet a closed pipe and the
// caller's stream is free to close.
func (c *capped) detach() {
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(100 * time.Millisecond):
	}
	c.mu.Lock()
	c.detached = true
	c.mu.Unlock()
}

func newCapped(dst io.Writer, limit int64, overflow *atomic.Bool, stop func()) (*capped, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	return cappedPipe(r, w, dst, limit, overflow, stop), nil
}

// cappedPipe copies from the read end r of a pipe whose write end w (nil:
// already closed here) the command writes to.
func cappedPipe(r, w *os.File, dst io.Writer, limit int64, overflow *atomic.Bool, stop func()) *capped {
	if dst == nil {
		dst = io.Discard
	}
	c := &capped{r: r, w: w, dst: dst, limit: limit, overflow: overflow, stop: stop}
	c.wg.Add(1)
	go c.copy()
	return c
}

func (c *capped) copy() {
	defer c.wg.Done()
	var src io.Reader = c.r
	if c.limit > 0 {
		src = io.LimitReader(c.r, c.limit)
	}
	_, _ = io.Copy(c, src)
	if c.limit > 0 {
		var one [1]byte
		if n, _ := c.r.Read(one[:]); n > 0 {
			c.mu.Lock()
			detached := c.detached
			c.mu.Unlock()
			if !detached {
				c.overflow.Store(true)
				c.stop()
			}
			_, _ = io.Copy(io.Discard, c.r)
		}
	}
}

// started closes the parent's copy of the write end once the child has it.
func (c *capped) started() { c.w.Close() }

// wait waits for the copy to finish, giving up after a second: a process
// that escaped the sandbox's teardown must not hang the caller.
func (c *capped) wait() {
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second):
	}
	c.r.Close()
}

func (c *capped) abort() { c.w.Close(); c.wait() }

// runUnisolated runs a command with no isolation (mode off), still bounded
// by the wall-clock timeout and the output limit.
func runUnisolated(ctx context.Context, s Spec, c Command) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Limits.Wall)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Args[0], c.Args[1:]...)
	env, _ := ScrubEnv(c.Env, s.PassEnv)
	cmd.Dir, cmd.Env, cmd.Stdin = c.Dir, env, c.Stdin
	if cmd.Dir == "" {
		cmd.Dir = s.Project
	}
	var overflow atomic.Bool
	outW, errW := shareWriter(c.Stdout, c.Stderr)
	stdout, err := newCapped(outW, s.Limits.Output, &overflow, cancel)
	if err != nil {
		return Result{}, err
	}
	stderr, err := newCapped(errW, s.Limits.Output, &overflow, cancel)
	if err != nil {
		stdout.abort()
		return Result{}, err
	}
	cmd.Stdout, cmd.Stderr = stdout.w, stderr.w
	start := time.Now()
	err = cmd.Start()
	stdout.started()
	stderr.started()
	if err != nil {
		stdout.abort()
		stderr.abort()
		if errors.Is(err, exec.ErrNotFound) {
			return Result{}, &ExecError{Path: c.Args[0], Err: syscall.ENOENT}
		}
		return Result{}, fmt.Errorf("start %s: %w", filepath.Base(c.Args[0]), err)
	}
	_ = cmd.Wait()
	stdout.wait()
	stderr.wait()
	res := Result{Mode: ModeOff, Wall: time.Since(start)}
	if st := cmd.ProcessState; st != nil {
		ws := st.Sys().(syscall.WaitStatus)
		res.ExitCode = ws.ExitStatus()
		if ws.Signaled() {
			res.Signal = int(ws.Signal())
			res.ExitCode = 128 + res.Signal
		}
		res.CPU = st.UserTime() + st.SystemTime()
	}
	switch {
	case overflow.Load():
		res.Limit = LimitOutput
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.Limit = LimitWall
	}
	return res, nil
}
