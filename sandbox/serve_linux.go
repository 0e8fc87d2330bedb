//go:build amd64 || arm64

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentwarden/warden/internal/msgbuf"
)

// A long-lived sandbox's init listens on a control socket (a SOCK_SEQPACKET
// Unix socket in warden's run directory, mode 0600, which the host creates
// and hands to the init). Each message is one JSON request; an exec request
// carries the caller's stdin, stdout and stderr as SCM_RIGHTS. The init runs
// the command through the stage, exactly as a one-shot sandbox does, and
// answers with one JSON response. Commands inside the sandbox cannot reach
// the socket: the run directory, like the rest of warden's home, is masked
// (and without unix_sockets they cannot create Unix sockets at all).

// fdControl is the init's control listener in serve mode.
const fdControl = 5

type ctlRequest struct {
	Op     string   `json:"op"` // "ping", "protect", "hold", "release" or "exec"
	Args   []string `json:"args,omitempty"`
	Dir    string   `json:"dir,omitempty"`
	Env    []string `json:"env,omitempty"`
	Wall   int64    `json:"wall,omitempty"`   // nanoseconds; 0 means none
	Output int64    `json:"output,omitempty"` // bytes per stream; 0 means none
	// Lease names a hold ("hold"; "" is the host's git line's); TTL is how
	// long it lasts (nanoseconds; 0 means maxHold). Leases are the holds a
	// "release" ends (none: Lease), with Prefix every lease whose name
	// starts with one of them.
	Lease  string   `json:"lease,omitempty"`
	TTL    int64    `json:"ttl,omitempty"`
	Leases []string `json:"leases,omitempty"`
	Prefix bool     `json:"prefix,omitempty"`
	// Alone (exec) runs the command as a one-shot run (Command.Alone): by
	// itself, in a sandbox emptied of what earlier commands left, and with
	// everything it started killed before the answer.
	Alone bool `json:"alone,omitempty"`
}

type ctlResponse struct {
	Error     string `json:"error,omitempty"`
	Held      bool   `json:"held,omitempty"` // ping: a hold is in force (a command would wait)
	ExecErrno int    `json:"exec_errno,omitempty"`
	ExecPath  string `json:"exec_path,omitempty"`
	ExecDir   bool   `json:"exec_dir,omitempty"` // ExecPath is the directory the command could not start in
	Exit      int    `json:"exit"`
	Signal    int    `json:"signal,omitempty"`
	CPU       int64  `json:"cpu,omitempty"`
	Limit     Limit  `json:"limit,omitempty"`
}

const maxCtlMessage = 1 << 20

var _ [msgbuf.Size - maxCtlMessage]byte // a message fits a lent buffer

// serveInit runs the init's control loop until the host kills it.
func serveInit(p *plan) int {
	f := os.NewFile(fdControl, "control")
	l, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return 125
	}
	ul, ok := l.(*net.UnixListener)
	if !ok {
		return 125
	}
	r := newReaper()
	launch := startLauncher(p)
	watchProtected(p)
	h := &holder{}
	if launch != nil {
		h.keep = launch.pid
	}
	var tw *tmpWatch
	if p.TmpDir != "" {
		tw = watchTmp("/tmp", p.TmpCap, p.TmpShare, func() { killAllBut(h.keep) })
	}
	for {
		c, err := ul.AcceptUnix()
		if err != nil {
			return 125
		}
		go serveConn(c, p, r, launch, h, tw)
	}
}

func serveConn(c *net.UnixConn, p *plan, r *reaper, l *launcher, h *holder, tw *tmpWatch) {
	defer c.Close()
	buf := msgbuf.Get()
	oob := make([]byte, unix.CmsgSpace(3*4))
	n, oobn, _, _, err := c.ReadMsgUnix(buf[:maxCtlMessage], oob)
	if err != nil {
		msgbuf.Put(buf)
		return
	}
	files := PassedFiles(oob[:oobn])
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	var req ctlRequest
	var resp ctlResponse
	decodeErr := json.Unmarshal(buf[:n], &req)
	msgbuf.Put(buf)
	switch err := decodeErr; {
	case err != nil:
		resp.Error = "bad control request: " + err.Error()
	case req.Op == "ping" || req.Op == "protect":
		// A health check, or the host after it replaced a protected
		// file: what was detached is mounted again.
		if err := reprotect(p); err != nil {
			resp.Error = "put the sandbox's read-only paths back: " + err.Error()
		}
		resp.Held = h.isHeld()
	case req.Op == "hold":
		if err := h.hold(req.Lease, time.Duration(req.TTL), func() error { return reprotect(p) }); err != nil {
			resp.Error = err.Error()
		}
	case req.Op == "release":
		names := req.Leases
		if len(names) == 0 {
			names = []string{req.Lease}
		}
		if err := h.release(names, req.Prefix, func() error { return reprotect(p) }); err != nil {
			resp.Error = "put the sandbox's read-only paths back: " + err.Error()
		}
	case req.Op == "exec" && len(files) == 3 && len(req.Args) > 0:
		h.wait()
		run := p
		if req.Alone {
			alone.Lock()
			defer alone.Unlock()
			if err := scrubbed(h.keep); err != nil {
				resp.Error = err.Error()
				break
			}
			own := *p
			own.KeepBackground = false
			run = &own
		}
		if err := reprotect(p); err != nil {
			resp.Error = "put the sandbox's read-only paths back: " + err.Error()
			break
		}
		// The caller sends nothing more: a read returns when it hangs up
		// (it was interrupted, or killed), and then its command is stopped.
		hangup := make(chan struct{})
		go func() {
			var b [1]byte
			_, _ = c.Read(b[:])
			close(hangup)
		}()
		resp = serveExec(run, r, l, &req, files, hangup, tw)
		if req.Alone {
			// What left the command's process group dies with it, as in a
			// one-shot sandbox, before the caller hears it ended; the
			// files it left go once it has heard (the next alone command
			// waits for that).
			killAllBut(h.keep)
			defer scrubAfter(h.keep)
		}
	default:
		resp.Error = fmt.Sprintf("bad control request %q", req.Op)
	}
	b, _ := json.Marshal(resp)
	_, _ = c.Write(b)
}

// PassedFiles returns the descriptors a Unix socket message passed
// (SCM_RIGHTS in oob), close-on-exec, as files.
func PassedFiles(oob []byte) []*os.File {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var files []*os.File
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			unix.CloseOnExec(fd)
			files = append(files, os.NewFile(uintptr(fd), "passed"))
		}
	}
	return files
}

// serveExec runs one command through the stage in its own process group,
// with the caller's stdin and capped copies of its output. When hangup
// closes before the command ends, its process group is killed. A command
// that ends while tw kills the sandbox's processes for the session's /tmp
// ends with LimitTmp.
func serveExec(base *plan, r *reaper, l *launcher, req *ctlRequest, files []*os.File, hangup <-chan struct{}, tw *tmpWatch) ctlResponse {
	p := *base
	kills := tw.fired()
	p.Args, p.Dir, p.Env = req.Args, req.Dir, req.Env
	var overflow atomic.Bool
	var pgid atomic.Int64
	stop := func() {
		if g := pgid.Load(); g > 1 {
			_ = syscall.Kill(-int(g), syscall.SIGKILL)
		}
	}
	stdout, err := newCapped(files[1], req.Output, &overflow, stop)
	if err != nil {
		return ctlResponse{Error: err.Error()}
	}
	stderr, err := newCapped(files[2], req.Output, &overflow, stop)
	if err != nil {
		stdout.abort()
		return ctlResponse{Error: err.Error()}
	}
	dir := p.Dir
	if dir == "" {
		dir = "/"
	}
	var (
		pid      int
		done     <-chan exitStatus
		execErr  stageFailure
		launched bool
	)
	started := tw.starting() // not while the watcher is killing the sandbox's processes
	if l != nil {
		pid, done, execErr, launched = l.start(p.Args, dir, p.Env, files[0], stdout.w, stderr.w)
	}
	if !launched {
		pid, done, execErr, err = startStaged(&p, r, files[0], stdout.w, stderr.w)
	}
	started()
	stdout.started()
	stderr.started()
	if err != nil {
		stdout.wait()
		stderr.wait()
		return ctlResponse{Error: "start the command: " + err.Error()}
	}
	if done == nil { // the launcher could not start it
		stdout.wait()
		stderr.wait()
		return ctlResponse{ExecErrno: execErr.Errno, ExecPath: execErr.Path, ExecDir: execErr.Dir}
	}
	pgid.Store(int64(pid))

	var timedOut, hungUp bool
	var wall <-chan time.Time
	if req.Wall > 0 {
		t := time.NewTimer(time.Duration(req.Wall))
		defer t.Stop()
		wall = t.C
	}
	var st exitStatus
	select {
	case st = <-done:
	case <-wall:
		timedOut = true
		stop()
		st = <-done
	case <-hangup:
		hungUp = true
		stop()
		st = <-done
	}
	if !p.KeepBackground || timedOut || hungUp || overflow.Load() {
		stop() // whatever the command left in its process group
		stdout.wait()
		stderr.wait()
	} else {
		// What the command left in the background lives on; its output
		// is drained from here on, and the caller's streams are let go.
		stdout.detach()
		stderr.detach()
	}

	resp := ctlResponse{CPU: st.cpu}
	if execErr.Errno != 0 {
		resp.ExecErrno, resp.ExecPath, resp.ExecDir = execErr.Errno, execErr.Path, execErr.Dir
		return resp
	}
	if st.ws.Signaled() {
		resp.Signal = int(st.ws.Signal())
		resp.Exit = 128 + resp.Signal
	} else {
		resp.Exit = st.ws.ExitStatus()
	}
	sig := syscall.Signal(resp.Signal)
	switch {
	case overflow.Load():
		resp.Limit = LimitOutput
	case timedOut:
		resp.Limit = LimitWall
	case sig == syscall.SIGXCPU:
		resp.Limit = LimitCPU
	case sig == syscall.SIGXFSZ:
		resp.Limit = LimitFileSize
	case sig == syscall.SIGSYS:
		resp.Limit = LimitSyscall
	case sig == syscall.SIGKILL && tw.fired() != kills:
		resp.Limit = LimitTmp
	}
	return resp
}

// startStaged starts a command through the stage, as its own process
// group: the stage reads p, restricts itself and execs the command. It
// returns once the exec happened or failed (execErr).
func startStaged(p *plan, r *reaper, stdin, stdout, stderr *os.File) (pid int, done <-chan exitStatus, execErr stageFailure, err error) {
	planR, planW, err := os.Pipe()
	if err != nil {
		return 0, nil, execErr, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		planR.Close()
		planW.Close()
		return 0, nil, execErr, err
	}
	pid, done, err = r.start(func() (*os.Process, error) {
		// The stage enters p.Dir itself, and says so when it cannot.
		return os.StartProcess("/proc/self/exe", []string{stageArg0}, &os.ProcAttr{
			Dir:   "/",
			Env:   helperEnv,
			Files: []*os.File{stdin, stdout, stderr, planR, errW},
			Sys:   &syscall.SysProcAttr{Setpgid: true},
		})
	})
	planR.Close()
	errW.Close()
	if err != nil {
		planW.Close()
		errR.Close()
		return 0, nil, execErr, err
	}
	_ = json.NewEncoder(planW).Encode(p)
	planW.Close()
	// The stage writes an errno here only when execve fails; on success
	// the pipe closes with the exec.
	msg, _ := io.ReadAll(errR)
	errR.Close()
	if len(msg) > 0 {
		_ = json.Unmarshal(msg, &execErr)
	}
	return pid, done, execErr, nil
}

type exitStatus struct {
	ws  syscall.WaitStatus
	cpu int64
}

// reaper is the init's only caller of wait: as pid 1 it inherits every
// orphan in the sandbox, and reaps them all; the statuses of the commands
// it started go to whoever expects them.
type reaper struct {
	mu      sync.Mutex
	waiting map[int]chan exitStatus
}

func newReaper() *reaper {
	r := &reaper{waiting: map[int]chan exitStatus{}}
	sig := make(chan os.Signal, 64)
	signal.Notify(sig, syscall.SIGCHLD)
	go func() {
		for {
			r.reapAll()
			<-sig
		}
	}()
	return r
}

func (r *reaper) reapAll() {
	for {
		var ws syscall.WaitStatus
		var ru syscall.Rusage
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, &ru)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
		st := exitStatus{ws: ws, cpu: ru.Utime.Nano() + ru.Stime.Nano()}
		r.mu.Lock()
		if ch, ok := r.waiting[pid]; ok {
			delete(r.waiting, pid)
			ch <- st
		}
		r.mu.Unlock()
	}
}

// start starts a process and returns where its exit status will arrive.
// The lock is held from before the start until the pid is registered, so
// the reaper cannot deliver the status to nobody.
func (r *reaper) start(fn func() (*os.Process, error)) (int, <-chan exitStatus, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, err := fn()
	if err != nil {
		return 0, nil, err
	}
	pid := p.Pid
	_ = p.Release() // the reaper waits for it, not package os (Release also sets p.Pid to -1)
	ch := make(chan exitStatus, 1)
	r.waiting[pid] = ch
	return pid, ch, nil
}
