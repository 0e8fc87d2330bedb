//go:build amd64 || arm64

package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Manager runs long-lived sandboxes. Each one is kept by a supervisor
// process (started detached by Start, running Supervise) that owns the
// sandbox's init, checks its health periodically, restarts it when it dies
// or stays unhealthy, and records every lifecycle transition. A sandbox's
// files live in Dir/NAME: state.json (its Info), events.jsonl (its
// transitions), ctl.sock (the init's control socket) and supervisor.log.
type Manager struct {
	Dir    string
	Native Native
	// Supervisor returns the command that runs Supervise for a sandbox; it
	// is started detached, in its own session.
	Supervisor func(name string) *exec.Cmd
	// Emit also records each transition elsewhere (the audit log); nil
	// records them in the event log only.
	Emit func(Event)
	// HealthEvery is the time between health checks; zero means 10s.
	HealthEvery time.Duration
	// HealthWall is how long a health check's /bin/true may take; zero
	// means 5s.
	HealthWall time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Egress returns the egress proxy a sandbox with NetProxy sends its
	// connections to; the supervisor calls it each time it starts the
	// sandbox's init, and the proxy serves until the init stops. Nil
	// refuses NetProxy sandboxes.
	Egress func(info Info) (Egress, error)
	// Self names the sandbox whose supervisor this process is; "" when it
	// is none. Ensure never stops it to start it anew (that would stop the
	// caller): it answers ErrSelfRestart, and the caller leaves the restart
	// to another process.
	Self string
}

var _ Engine = (*Manager)(nil)

// Name is "native".
func (m *Manager) Name() string { return "native" }

// Run runs one command in a fresh sandbox (Native.Run).
func (m *Manager) Run(ctx context.Context, s Spec, c Command) (Result, error) {
	return m.Native.Run(ctx, s, c)
}

// Remove stops sandbox name and deletes its run directory.
func (m *Manager) Remove(ctx context.Context, name string) error {
	if _, err := m.Stop(ctx, name); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return os.RemoveAll(m.dir(name))
}

// Failed health checks in a row after which the supervisor restarts the
// sandbox.
const healthFailuresBeforeRecovery = 3

// errHealthSlow says a health check's command ran but did not finish in
// time: a loaded machine, not a broken sandbox.
var errHealthSlow = errors.New("the health check's command was slow")

func (m *Manager) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func (m *Manager) dir(name string) string { return filepath.Join(m.Dir, name) }

// Start creates sandbox name under spec and waits until it is ready (or has
// failed to come up, which the returned Info and error say).
func (m *Manager) Start(ctx context.Context, name, profile string, spec Spec) (Info, error) {
	if info, err := m.record(name, profile, spec); err != nil {
		return info, err
	}
	return m.spawnSupervisor(ctx, name)
}

// record checks spec and records sandbox name as to be started under it.
func (m *Manager) record(name, profile string, spec Spec) (Info, error) {
	if err := ValidName(name); err != nil {
		return Info{}, err
	}
	if spec.Net == NetProxy && m.Egress == nil {
		return Info{}, errors.New("this sandbox manager cannot give a long-lived sandbox an egress proxy; use network none, or warden exec --net proxy for one command")
	}
	if spec.Signer != nil {
		return Info{}, errors.New("long-lived sandboxes have no signer yet; start it without --signer, or run the command that needs the signer on its own (a one-shot sandbox)")
	}
	if spec.Net == NetProxy && spec.Egress == nil {
		spec.Egress = placeholderEgress{} // the supervisor builds its own (Manager.Egress)
	}
	if err := spec.Validate(); err != nil {
		return Info{}, err
	}
	spec.Egress = nil
	if spec.Mode == ModeOff {
		return Info{}, errors.New("a long-lived sandbox needs isolation; mode off is for one-shot runs only")
	}
	if m.Supervisor == nil {
		return Info{}, errors.New("the sandbox manager has no way to start a supervisor")
	}
	if err := os.MkdirAll(m.dir(name), 0o700); err != nil {
		return Info{}, fmt.Errorf("create the sandbox's run directory: %w", err)
	}
	info, err := m.load(name)
	switch {
	case err == nil && alive(info.Supervisor) && info.State != StateStopped:
		return info, fmt.Errorf("sandbox %s is already %s; stop it first", name, info.State)
	case errors.Is(err, os.ErrNotExist):
		info = Info{State: StateUninitialized}
	case err != nil:
		return Info{}, err
	}
	// A sandbox whose supervisor died keeps its state: the new supervisor
	// records its recovery from there.
	info.Name, info.Profile, info.Spec, info.Mode = name, profile, spec, spec.Mode
	info.Supervisor, info.Init, info.Health, info.Warnings = 0, 0, "", nil
	return info, m.save(&info)
}

func (m *Manager) spawnSupervisor(ctx context.Context, name string) (Info, error) {
	cmd, err := m.spawn(name)
	if err != nil {
		return Info{}, err
	}
	pid := cmd.Process.Pid
	go func() { _ = cmd.Wait() }() // reap it if it dies while we wait
	return m.waitFor(ctx, name, 30*time.Second, func(i Info) bool {
		if !alive(pid) {
			return true
		}
		return i.Supervisor == pid && (i.State == StateReady || i.State == StateDegraded || i.State == StateStopped)
	})
}

// spawn starts sandbox name's supervisor, detached.
func (m *Manager) spawn(name string) (*exec.Cmd, error) {
	logf, err := os.OpenFile(filepath.Join(m.dir(name), "supervisor.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the supervisor's log: %w", err)
	}
	defer logf.Close()
	cmd := m.Supervisor(name)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the sandbox's supervisor: %w", err)
	}
	return cmd, nil
}

// waitFor polls the state file until done says so or the time is up.
func (m *Manager) waitFor(ctx context.Context, name string, limit time.Duration, done func(Info) bool) (Info, error) {
	deadline := time.Now().Add(limit)
	for {
		info, err := m.load(name)
		if err == nil && done(info) {
			// Degraded is started: its commands run, and its supervisor
			// keeps checking (a first check that failed because the
			// machine is loaded is not a sandbox that cannot start).
			if info.State != StateReady && info.State != StateDegraded {
				return info, fmt.Errorf("sandbox %s is %s: %s", name, info.State, m.lastReason(name))
			}
			return info, nil
		}
		if time.Now().After(deadline) {
			return info, fmt.Errorf("sandbox %s did not become ready within %s (it is %s); see %s", name, limit, info.State, filepath.Join(m.dir(name), "supervisor.log"))
		}
		select {
		case <-ctx.Done():
			return info, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (m *Manager) lastReason(name string) string {
	evs, _ := m.Events(name)
	if len(evs) == 0 {
		return "no events recorded"
	}
	return evs[len(evs)-1].Reason
}

// Supervise keeps sandbox name running until ctx ends (the supervisor got
// SIGTERM from Stop), then tears it down. SIGUSR1 asks it to recover.
func (m *Manager) Supervise(ctx context.Context, name string) error {
	info, err := m.load(name)
	if err != nil {
		return err
	}
	info.Supervisor = os.Getpid()
	first := StateInitializing
	if info.State != StateUninitialized && info.State != StateStopped {
		first = StateRecovering
	}
	if err := m.transition(&info, first, "supervisor started"); err != nil {
		return err
	}
	recoverReq := make(chan os.Signal, 1)
	signal.Notify(recoverReq, syscall.SIGUSR1)
	defer signal.Stop(recoverReq)
	every := m.HealthEvery
	if every <= 0 {
		every = 10 * time.Second
	}

	for {
		sb, err := m.startServing(&info)
		if err != nil {
			_ = m.transition(&info, StateStopping, "the sandbox could not start: "+err.Error())
			_ = m.transition(&info, StateStopped, "the sandbox could not start")
			return err
		}
		failures := 0
		if err := m.check(name); err != nil {
			failures++
			_ = m.transition(&info, StateDegraded, "health check failed: "+err.Error())
		} else {
			_ = m.transition(&info, StateReady, "health check passed")
		}
		ticker := time.NewTicker(every)
		reason := ""
		for reason == "" {
			select {
			case <-ctx.Done():
				ticker.Stop()
				_ = m.transition(&info, StateStopping, "stop requested")
				sb.stop()
				_ = os.Remove(m.socket(name))
				info.Init = 0
				return m.transition(&info, StateStopped, "stopped")
			case <-sb.exited:
				reason = "the sandbox's init exited"
			case <-recoverReq:
				reason = "recovery requested"
			case <-ticker.C:
				if idle := info.Spec.Idle; idle > 0 {
					if st, err := os.Stat(m.lastUsed(name)); err == nil && m.now().Sub(st.ModTime()) > idle {
						ticker.Stop()
						_ = m.transition(&info, StateStopping, fmt.Sprintf("no command for %s", idle))
						sb.stop()
						_ = os.Remove(m.socket(name))
						info.Init = 0
						return m.transition(&info, StateStopped, "stopped when idle")
					}
				}
				// Between commands too: what a background process created
				// in a protected path does not wait for the next command.
				sweepCreated(sb.sweep, sb.quarantine, m.now())
				if sb.sweepGit != nil {
					sb.sweepGit()
				}
				info.LastCheck = m.now()
				if err := m.check(name); err != nil {
					// The init answered but its command was slow: the
					// machine is loaded, which a new init would not
					// change, and rebuilding would end what the
					// sandbox's commands left running (a session's dev
					// server). Degraded, but not a failure toward
					// recovery.
					if !errors.Is(err, errHealthSlow) {
						failures++
					}
					info.Health = err.Error()
					_ = m.transition(&info, StateDegraded, "health check failed: "+err.Error())
					if failures >= healthFailuresBeforeRecovery {
						reason = fmt.Sprintf("%d health checks failed in a row", failures)
					}
				} else {
					failures, info.Health = 0, ""
					_ = m.transition(&info, StateReady, "health check passed")
				}
				_ = m.save(&info)
			}
		}
		ticker.Stop()
		_ = m.transition(&info, StateRecovering, reason)
		sb.stop()
	}
}

// serving is one running init of a long-lived sandbox.
type serving struct {
	cmd    *exec.Cmd
	cg     *cgroup
	tmp    string
	exited chan struct{}
	// listeners are served from here (the egress proxy) until stop.
	listeners []io.Closer
	served    sync.WaitGroup
	// sweep are the protected paths that were missing when the sandbox
	// started, moved into quarantine when something in it creates them.
	sweep      []string
	quarantine string
	// sweepGit is the GitGuard's sweep, its baseline taken before the
	// init started; nil without one.
	sweepGit func() []string
}

func (s *serving) stop() {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	_ = s.cmd.Process.Kill()
	<-s.exited
	for _, l := range s.listeners {
		l.Close()
	}
	s.served.Wait()
	s.cg.remove()
	// A command's sweep (Exec) runs when the command ends, but what it
	// left running in the background may create a protected path after
	// it: a .claude/settings.json whose hooks the next session would run
	// on the host. Nothing of the sandbox runs any more now.
	sweepCreated(s.sweep, s.quarantine, time.Now())
	if s.sweepGit != nil {
		s.sweepGit()
	}
	if s.tmp != "" {
		_ = os.RemoveAll(s.tmp)
	}
}

func (m *Manager) socket(name string) string { return filepath.Join(m.dir(name), "ctl.sock") }

// lastUsed is the file whose modification time is when sandbox name last
// ran a command (Exec touches it; an idle sandbox stops by it).
func (m *Manager) lastUsed(name string) string { return filepath.Join(m.dir(name), "last-used") }

// startServing builds the sandbox and starts its init serving on the
// control socket.
func (m *Manager) startServing(info *Info) (*serving, error) {
	spec := info.Spec
	exe, err := initExe(m.Native.Exe)
	if err != nil {
		return nil, err
	}
	if err := seccompAvailable(); err != nil {
		return nil, err
	}
	cg, cgErr := newCgroup("sb-"+info.Name+"-"+newID(), spec.Limits)
	info.Warnings, info.MemoryCgroup = nil, ""
	if cg.capsMemory() {
		info.MemoryCgroup, info.CgroupV2 = cg.memory, cg.v2
	}
	if cgErr != nil {
		if spec.Strict {
			return nil, fmt.Errorf("cannot cap memory and processes by cgroup (%v), and strict refuses the rlimit fallback", cgErr)
		}
		info.Warnings = append(info.Warnings, fmt.Sprintf("no cgroup for the limits: %v", cgErr))
	}
	mode := spec.Mode
	sb, err := m.launchServing(info, exe, mode, cg)
	var nsErr *namespaceError
	if errors.As(err, &nsErr) && !spec.Strict {
		info.Warnings = append(info.Warnings, fmt.Sprintf("%v; the sandbox runs in light mode", err))
		mode = ModeLight
		sb, err = m.launchServing(info, exe, mode, cg)
	}
	if err != nil {
		cg.remove()
		return nil, err
	}
	info.Mode = mode
	return sb, m.save(info)
}

func (m *Manager) launchServing(info *Info, exe string, mode Mode, cg *cgroup) (_ *serving, err error) {
	spec := info.Spec
	sb := &serving{cg: cg, exited: make(chan struct{})}
	info.Tmp = ""
	if !mode.Namespaces() {
		if sb.tmp, err = os.MkdirTemp("", "warden-sandbox-"+info.Name+"-"); err != nil {
			return nil, err
		}
		info.Tmp = sb.tmp
		defer func() {
			if err != nil {
				_ = os.RemoveAll(sb.tmp)
			}
		}()
	}
	if spec.Net == NetProxy && !mode.Namespaces() {
		// The egress proxy needs a network namespace to be the only way
		// out; without one the sandbox gets no network at all.
		spec.Net = NetNone
		info.Warnings = append(info.Warnings, "the egress proxy needs a network namespace, so the sandbox has no network")
	}
	var eg Egress
	if spec.Net == NetProxy {
		if m.Egress == nil {
			return nil, errors.New("this sandbox manager cannot give the sandbox an egress proxy")
		}
		if eg, err = m.Egress(*info); err != nil {
			return nil, fmt.Errorf("build the sandbox's egress proxy: %w", err)
		}
		spec.Egress = eg
	}
	p, warn, err := compile(&spec, &Command{Dir: spec.Project}, mode, LandlockABI(), cg, sb.tmp)
	if err != nil {
		return nil, err
	}
	p.Serve = true
	info.Sweep = p.Sweep
	sb.sweep, sb.quarantine = p.Sweep, spec.Quarantine
	if m.Native.GitGuard != nil && spec.ProjectWritable {
		sb.sweepGit = m.Native.GitGuard(&spec, true)
	}
	info.Warnings = append(info.Warnings, warn...)
	sock := m.socket(info.Name)
	_ = os.Remove(sock)
	l, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: sock, Net: "unixpacket"})
	if err != nil {
		return nil, fmt.Errorf("listen on the control socket: %w", err)
	}
	l.SetUnlinkOnClose(false)
	defer l.Close()
	if err := os.Chmod(sock, 0o600); err != nil {
		return nil, err
	}
	lf, err := l.File()
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	extra := []*os.File{lf}
	var services []loopbackService
	var listenConn *os.File
	if mode.Namespaces() {
		services = loopbackServices(&spec)
	}
	if len(services) > 0 {
		host, child, err := socketPair()
		if err != nil {
			return nil, err
		}
		defer host.Close()
		listenConn, extra = host, append(extra, child)
		p.ListenFD = fdControl + 1
		for _, svc := range services {
			p.Listen = append(p.Listen, svc.addr)
		}
	}
	ip, err := startInit(exe, mode, cg, p, nil, os.Stderr, os.Stderr, extra...)
	if len(extra) > 1 {
		extra[1].Close() // the init has its copy; ours would keep a dead init's end open
	}
	if err != nil {
		return nil, err
	}
	sb.cmd = ip.cmd
	go func() { _ = sb.cmd.Wait(); close(sb.exited) }()
	if listenConn != nil {
		ls, ok, err := receiveListeners(listenConn, services)
		if err != nil || !ok {
			sb.stop()
			if err == nil {
				err = errors.New("the sandbox's init ended before it handed over its listeners")
			}
			return nil, fmt.Errorf("set up the sandbox's network: %w", err)
		}
		sb.listeners = ls
		for i, l := range ls {
			sb.served.Go(func() { _ = services[i].run(l) })
		}
	}
	if o, ok := ip.readOutcome(); !ok || !o.Ready {
		sb.stop()
		if o.Setup != "" {
			return nil, fmt.Errorf("set up the sandbox: %s", o.Setup)
		}
		return nil, errors.New("the sandbox's init exited before it was ready")
	}
	_ = os.WriteFile(m.lastUsed(info.Name), nil, 0o600)
	info.Init = sb.cmd.Process.Pid
	return sb, nil
}

// Protect has running sandbox name mount again the read-only paths and
// masks a change made from outside it detached (its init also does so by
// itself when it sees the change, and before each command): the host
// calls it after it replaced one of them itself. A sandbox that is not
// running has nothing to protect.
func (m *Manager) Protect(ctx context.Context, name string) error {
	return m.ask(ctx, name, "protect")
}

// ask sends running sandbox name's init the request op; a sandbox that is
// not running has nothing to do.
func (m *Manager) ask(ctx context.Context, name, op string) error {
	return m.askReq(ctx, name, &ctlRequest{Op: op})
}

// askReq is ask with a whole request.
func (m *Manager) askReq(ctx context.Context, name string, req *ctlRequest) error {
	info, err := m.load(name)
	if err != nil || info.State != StateReady && info.State != StateDegraded {
		return nil
	}
	_, err = m.call(ctx, name, req, nil)
	return err
}

// Hold stops the commands of running sandbox name (all its processes but
// its init and launcher; a new command waits) until Release, or for at
// most a minute: the host holds a world while it replaces, from outside, a
// file the world keeps read-only, so that nothing in the world can open
// the new one before it is mounted read-only again. A sandbox that is not
// running has nothing to hold.
func (m *Manager) Hold(ctx context.Context, name string) error {
	return m.ask(ctx, name, "hold")
}

// Release mounts again what running sandbox name keeps read-only (as
// Protect does), then lets what Hold stopped go on.
func (m *Manager) Release(ctx context.Context, name string) error {
	return m.ask(ctx, name, "release")
}

// HoldLease is Hold under a lease of its own, for ttl (at most ten
// minutes): the world stays held while any lease is in force, and each
// lease ends at ReleaseLease or its time. It returns once every process
// held is seen stopped.
func (m *Manager) HoldLease(ctx context.Context, name, lease string, ttl time.Duration) error {
	return m.askReq(ctx, name, &ctlRequest{Op: "hold", Lease: lease, TTL: int64(max(ttl, time.Millisecond))})
}

// ReleaseLeases ends the leases named (with prefix, every lease whose name
// starts with one of them); the world goes on when no lease is left.
func (m *Manager) ReleaseLeases(ctx context.Context, name string, prefix bool, leases ...string) error {
	if len(leases) == 0 {
		return nil
	}
	return m.askReq(ctx, name, &ctlRequest{Op: "release", Leases: leases, Prefix: prefix})
}

// check is one health check: the init answers, and runs /bin/true through
// the whole exec path.
func (m *Manager) check(name string) error {
	if resp, err := m.call(context.Background(), name, &ctlRequest{Op: "ping"}, nil); err != nil || resp.Held {
		// Held (the host's file tool is at work, or a user is asked
		// about one), a command would wait for the release: the init
		// answering is the check.
		return err
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	wall := m.HealthWall
	if wall <= 0 {
		wall = 5 * time.Second
	}
	start := time.Now()
	resp, err := m.call(context.Background(), name, &ctlRequest{Op: "exec", Args: []string{"/bin/true"}, Dir: "/", Wall: int64(wall)}, []*os.File{null, null, null})
	if err != nil {
		return err
	}
	// Slow too when it ended just as its wall clock ran out, before the
	// init's timer could stop it.
	if resp.Limit == LimitWall || resp.Exit == 0 && time.Since(start) > wall {
		return fmt.Errorf("/bin/true in the sandbox took more than %s: %w", wall, errHealthSlow)
	}
	if resp.ExecErrno != 0 || resp.Exit != 0 {
		return fmt.Errorf("/bin/true in the sandbox exited %d (errno %d)", resp.Exit, resp.ExecErrno)
	}
	return nil
}

// call sends one request, with files, to the init and returns its answer.
func (m *Manager) call(ctx context.Context, name string, req *ctlRequest, files []*os.File) (ctlResponse, error) {
	c, err := net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: m.socket(name), Net: "unixpacket"})
	if err != nil {
		return ctlResponse{}, fmt.Errorf("reach sandbox %s: %w", name, err)
	}
	defer c.Close()
	// When ctx ends (the caller was interrupted or gave up), the connection
	// closes, and the init stops the command it runs for it.
	defer context.AfterFunc(ctx, func() { c.Close() })()
	b, err := json.Marshal(req)
	if err != nil {
		return ctlResponse{}, err
	}
	var oob []byte
	if len(files) > 0 {
		fds := make([]int, len(files))
		for i, f := range files {
			fds[i] = int(f.Fd())
		}
		oob = unix.UnixRights(fds...)
	}
	if _, _, err := c.WriteMsgUnix(b, oob, nil); err != nil {
		return ctlResponse{}, fmt.Errorf("send to sandbox %s: %w", name, err)
	}
	buf := make([]byte, 1<<16)
	n, err := c.Read(buf)
	if err != nil && ctx.Err() != nil {
		return ctlResponse{}, fmt.Errorf("sandbox %s: the command was stopped: %w", name, ctx.Err())
	}
	if err != nil {
		return ctlResponse{}, fmt.Errorf("read sandbox %s's answer: %w", name, err)
	}
	var resp ctlResponse
	if err := json.Unmarshal(buf[:n], &resp); err != nil {
		return ctlResponse{}, fmt.Errorf("read sandbox %s's answer: %w", name, err)
	}
	if resp.Error != "" {
		return resp, fmt.Errorf("sandbox %s: %s", name, resp.Error)
	}
	return resp, nil
}

// Exec runs a command in running sandbox name, bounded by the wall-clock
// and output limits given (zero: the sandbox's own).
func (m *Manager) Exec(ctx context.Context, name string, c Command, lim Limits) (Result, error) {
	info, err := m.load(name)
	if err != nil {
		return Result{}, err
	}
	return m.RunIn(ctx, info, c, lim)
}

// RunIn is Exec in the sandbox info describes, as Ensure just gave it:
// its state is not read again.
func (m *Manager) RunIn(ctx context.Context, info Info, c Command, lim Limits) (Result, error) {
	name := info.Name
	if info.State != StateReady && info.State != StateDegraded {
		return Result{}, fmt.Errorf("sandbox %s is %s, not ready; start or recover it first", name, info.State)
	}
	if len(c.Args) == 0 {
		return Result{}, errors.New("no command to run")
	}
	if lim.Wall == 0 {
		lim.Wall = info.Spec.Limits.Wall
	}
	if lim.Output == 0 {
		lim.Output = info.Spec.Limits.Output
	}
	spec := info.Spec
	if !info.Mode.Namespaces() {
		spec.Net = NetNone // light mode has no egress proxy (startServing)
	}
	env := commandEnv(&spec, c.Env, info.Mode, info.Tmp)
	_ = os.Chtimes(m.lastUsed(name), time.Now(), time.Now())
	dir := c.Dir
	if dir == "" {
		dir = info.Spec.Project
	}
	files, wait, err := streamFiles(c)
	if err != nil {
		return Result{}, err
	}
	mem := &cgroup{memory: info.MemoryCgroup, v2: info.CgroupV2}
	oomBefore := mem.oomKills()
	var sweepGit func() []string
	if m.Native.GitGuard != nil && info.Spec.ProjectWritable {
		sweepGit = m.Native.GitGuard(&info.Spec, false)
	}
	start := time.Now()
	resp, err := m.call(ctx, name, &ctlRequest{Op: "exec", Args: c.Args, Dir: dir, Env: env, Wall: int64(lim.Wall), Output: lim.Output, Alone: c.Alone}, files)
	wait()
	// Swept whatever the call's outcome: a command interrupted (ctx ended)
	// or whose answer was lost has run, and what it wrote does not wait
	// for the supervisor's next health check.
	swept := sweepCreated(info.Sweep, info.Spec.Quarantine, time.Now())
	if sweepGit != nil {
		// What the command left running may still change them; the
		// supervisor's health checks and its stop sweep again.
		swept = append(swept, sweepGit()...)
	}
	if err != nil {
		return Result{}, err
	}
	if resp.ExecErrno != 0 {
		return Result{}, &ExecError{Path: resp.ExecPath, Err: syscall.Errno(resp.ExecErrno), Dir: resp.ExecDir}
	}
	res := Result{ExitCode: resp.Exit, Signal: resp.Signal, Limit: resp.Limit, Mode: info.Mode,
		Warnings: append(slices.Clone(info.Warnings), swept...), Wall: time.Since(start), CPU: time.Duration(resp.CPU)}
	// The init cannot see the cgroup or the CPU limit's SIGKILL for what
	// they are; the caller can. The memory cap is the whole sandbox's, so an
	// OOM kill during this command is laid at its door only if it died of
	// SIGKILL.
	if res.Limit == LimitNone && syscall.Signal(res.Signal) == syscall.SIGKILL {
		switch {
		case mem.oomKills() > oomBefore:
			res.Limit = LimitMemory
		case info.Spec.Limits.CPU > 0 && res.CPU >= info.Spec.Limits.CPU:
			res.Limit = LimitCPU
		}
	}
	return res, nil
}

// streamFiles gives the command's streams as files to pass to the init:
// the caller's own files where they are files, else pipes copied here.
// wait closes this side's copies and waits for the copying to finish.
func streamFiles(c Command) ([]*os.File, func(), error) {
	var files, closeAfter []*os.File
	var done []chan struct{}
	fail := func(err error) ([]*os.File, func(), error) {
		for _, f := range closeAfter {
			f.Close()
		}
		return nil, nil, err
	}
	if f, ok := c.Stdin.(*os.File); ok {
		files = append(files, f)
	} else if c.Stdin == nil {
		null, err := os.Open(os.DevNull)
		if err != nil {
			return fail(err)
		}
		files, closeAfter = append(files, null), append(closeAfter, null)
	} else {
		r, w, err := os.Pipe()
		if err != nil {
			return fail(err)
		}
		files, closeAfter = append(files, r), append(closeAfter, r)
		go func() { _, _ = io.Copy(w, c.Stdin); w.Close() }()
	}
	for i, dst := range []io.Writer{c.Stdout, c.Stderr} {
		if f, ok := dst.(*os.File); ok {
			files = append(files, f)
			continue
		}
		if i == 1 && dst != nil && dst == c.Stdout {
			// One writer for both streams: one pipe, so the two are not
			// copied into it at once and keep their interleaving.
			files = append(files, files[1])
			continue
		}
		if dst == nil {
			dst = io.Discard
		}
		r, w, err := os.Pipe()
		if err != nil {
			return fail(err)
		}
		files, closeAfter = append(files, w), append(closeAfter, w)
		ch := make(chan struct{})
		done = append(done, ch)
		go func(dst io.Writer) { _, _ = io.Copy(dst, r); r.Close(); close(ch) }(dst)
	}
	return files, func() {
		for _, f := range closeAfter {
			f.Close()
		}
		for _, ch := range done {
			<-ch
		}
	}, nil
}

// Status returns what is known of sandbox name, with a note when its
// supervisor is gone without having stopped it.
func (m *Manager) Status(name string) (Info, error) {
	info, err := m.load(name)
	if err != nil {
		return info, err
	}
	if info.State != StateStopped && info.State != StateUninitialized && !alive(info.Supervisor) {
		info.Health = fmt.Sprintf("its supervisor (pid %d) is not running; run `warden sandbox recover %s`", info.Supervisor, name)
	}
	return info, nil
}

// Stop tears sandbox name down and waits until it has stopped.
func (m *Manager) Stop(ctx context.Context, name string) (Info, error) {
	info, err := m.load(name)
	if err != nil {
		return info, err
	}
	if info.State == StateStopped {
		return info, nil
	}
	if alive(info.Supervisor) {
		_ = syscall.Kill(info.Supervisor, syscall.SIGTERM)
		info, err = m.waitFor(ctx, name, 15*time.Second, func(i Info) bool { return i.State == StateStopped })
		if err == nil || info.State == StateStopped {
			return info, nil
		}
		_ = syscall.Kill(info.Supervisor, syscall.SIGKILL)
	}
	// The supervisor is gone: its init died with it (it is the init's
	// parent-death signal), so only the records are left to put right.
	if alive(info.Init) {
		_ = syscall.Kill(info.Init, syscall.SIGKILL)
	}
	_ = os.Remove(m.socket(name))
	if info.State != StateStopping {
		_ = m.transition(&info, StateStopping, "stop requested; the supervisor was not running")
	}
	info.Init, info.Supervisor = 0, 0
	return info, m.transition(&info, StateStopped, "stopped")
}

// Recover restarts sandbox name: through its supervisor when it runs, else
// with a new supervisor.
func (m *Manager) Recover(ctx context.Context, name string) (Info, error) {
	info, err := m.load(name)
	if err != nil {
		return info, err
	}
	if alive(info.Supervisor) && info.State != StateStopped {
		before := info.Since
		_ = syscall.Kill(info.Supervisor, syscall.SIGUSR1)
		return m.waitFor(ctx, name, 30*time.Second, func(i Info) bool {
			return i.Since.After(before) && (i.State == StateReady || i.State == StateStopped)
		})
	}
	return m.spawnSupervisor(ctx, name)
}

// Events returns the lifecycle transitions of sandbox name, oldest first.
func (m *Manager) Events(name string) ([]Event, error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(m.dir(name), "events.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("there is no sandbox %s: %w", name, os.ErrNotExist)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var evs []Event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e Event
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			evs = append(evs, e)
		}
	}
	return evs, sc.Err()
}

// List returns the sandboxes whose names start with prefix.
func (m *Manager) List(prefix string) ([]Info, error) {
	entries, err := os.ReadDir(m.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		if info, err := m.Status(e.Name()); err == nil {
			out = append(out, info)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// transition moves info to state to, recording the event; a move to the
// state it is already in records nothing.
func (m *Manager) transition(info *Info, to State, reason string) error {
	if info.State == to {
		return m.save(info)
	}
	if !info.State.CanBecome(to) {
		return fmt.Errorf("sandbox %s cannot go from %s to %s", info.Name, info.State, to)
	}
	ev := Event{Time: m.now(), Name: info.Name, From: info.State, To: to, Reason: reason}
	info.State, info.Since = to, ev.Time
	if err := m.save(info); err != nil {
		return err
	}
	b, _ := json.Marshal(ev)
	f, err := os.OpenFile(filepath.Join(m.dir(info.Name), "events.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(append(b, '\n'))
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("record the sandbox event: %w", err)
	}
	if m.Emit != nil {
		m.Emit(ev)
	}
	return nil
}

func (m *Manager) load(name string) (Info, error) {
	if err := ValidName(name); err != nil {
		return Info{}, err
	}
	b, err := os.ReadFile(filepath.Join(m.dir(name), "state.json"))
	if errors.Is(err, os.ErrNotExist) {
		return Info{Name: name}, fmt.Errorf("there is no sandbox %s: %w", name, os.ErrNotExist)
	}
	if err != nil {
		return Info{}, err
	}
	var info Info
	if err := json.Unmarshal(b, &info); err != nil {
		return Info{}, fmt.Errorf("read sandbox %s's state: %w", name, err)
	}
	return info, nil
}

// save writes info atomically.
func (m *Manager) save(info *Info) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	dir := m.dir(info.Name)
	f, err := os.CreateTemp(dir, ".state-*")
	if err != nil {
		return fmt.Errorf("save sandbox %s's state: %w", info.Name, err)
	}
	_, werr := f.Write(b)
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("save sandbox %s's state: %w", info.Name, err)
	}
	return os.Rename(f.Name(), filepath.Join(dir, "state.json"))
}

func alive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) == nil
}

// placeholderEgress stands for the egress proxy a supervisor builds, so a
// spec that will have one validates before it does.
type placeholderEgress struct{}

func (placeholderEgress) Serve(l net.Listener) error { return l.Close() }

// Ready reports whether sandbox name runs under the spec fingerprinted by
// key (Ensure), ready for a command.
func (m *Manager) Ready(name, key string) bool {
	info, err := m.load(name)
	return err == nil && info.Profile == key && alive(info.Supervisor) && (info.State == StateReady || info.State == StateDegraded)
}

// Warm starts sandbox name under spec, fingerprinted by key, as Ensure
// does, but only as far as starting its supervisor: it does not wait for
// the sandbox to come up, and does nothing while another caller starts or
// stops it. A later Ensure or Ready finds it.
func (m *Manager) Warm(ctx context.Context, name, key string, spec Spec) error {
	if err := ValidName(name); err != nil {
		return err
	}
	if err := os.MkdirAll(m.Dir, 0o700); err != nil {
		return fmt.Errorf("create the sandboxes' run directory: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(m.Dir, name+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("lock sandbox %s: %w", name, err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return nil // being started or stopped
	}
	info, err := m.Status(name)
	if err == nil && alive(info.Supervisor) && info.State != StateStopped {
		if info.Profile == key {
			return nil
		}
		if _, err := m.Stop(ctx, name); err != nil {
			return err
		}
	}
	if _, err := m.record(name, key, spec); err != nil {
		return err
	}
	cmd, err := m.spawn(name)
	if err != nil {
		return err
	}
	return cmd.Process.Release()
}

// Ensure makes sure sandbox name runs under spec, fingerprinted by key:
// a ready one started with the same key is used as it is; one started with
// another key (the policy changed) is stopped and started anew; none is
// started. started says this call started it. Callers that race for the same name are serialised by a lock
// file, so that one sandbox starts.
func (m *Manager) Ensure(ctx context.Context, name, key string, spec Spec) (info Info, started bool, err error) {
	if err := ValidName(name); err != nil {
		return Info{}, false, err
	}
	if err := os.MkdirAll(m.Dir, 0o700); err != nil {
		return Info{}, false, fmt.Errorf("create the sandboxes' run directory: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(m.Dir, name+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return Info{}, false, fmt.Errorf("lock sandbox %s: %w", name, err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return Info{}, false, fmt.Errorf("lock sandbox %s: %w", name, err)
	}
	info, err = m.Status(name)
	if err == nil && info.Profile == key && alive(info.Supervisor) && (info.State == StateReady || info.State == StateDegraded) {
		return info, false, nil
	}
	if name == m.Self {
		return info, false, ErrSelfRestart
	}
	if err == nil && alive(info.Supervisor) && info.State != StateStopped {
		if _, err := m.Stop(ctx, name); err != nil {
			return info, false, err
		}
	}
	info, err = m.Start(ctx, name, key, spec)
	return info, err == nil, err
}
