//go:build amd64 || arm64

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// An init in new namespaces cannot be started with vfork: its user
// namespace's id maps are written by the parent after the clone, while the
// child waits. So the process that starts it forks for real, and a fork
// copies its page tables and write-protects its memory, stalling its other
// threads for a time that grows with its heap (1 ms at 1 MB, 3 ms at 60 MB,
// 9 ms at 200 MB on the CI-class machine). A long-lived process that keeps
// an init ready for its next one-shot run (KeepEarly: a session's
// supervisor) would stall the run that arrives while it forks.
//
// So such a process starts one spawner, once (without namespaces, a
// vfork): a small process of the init's binary that forks the inits it is
// asked for and hands back their pidfds. Its fork copies its own few
// megabytes, on its own thread, and the asking process never forks again.
// The spawner reaps its inits; the asking process waits for their exit on
// the pidfd and kills them through it. An init dies with the spawner's
// thread that started it (Pdeathsig), and the spawner dies with the process
// that started it, as an init it started itself would.

// spawnerArg0 is the argument the binary is re-executed with to be a
// spawner.
const spawnerArg0 = "warden-sandbox-spawner"

// fdSpawn is the spawner's request socket.
const fdSpawn = 3

// spawnRequest asks for an init: Args of the binary at Path, in mode.
// Its standard output and error, then its extra files (fd 3 on), travel
// with it.
type spawnRequest struct {
	Path string
	Args []string
	Mode Mode
}

// spawnReply is the spawner's answer: the init's Pid, with its pidfd as
// the message's one descriptor, or why it could not start (Refused: the
// kernel refused its namespaces).
type spawnReply struct {
	Pid     int    `json:",omitempty"`
	Err     string `json:",omitempty"`
	Refused bool   `json:",omitempty"`
}

// runSpawner serves spawn requests until the process that started it hangs
// up, forking every init from this one locked thread, so that Pdeathsig
// ties each to a thread that lives as long as the spawner.
func runSpawner() {
	runtime.LockOSThread()
	buf := make([]byte, 1<<16)
	oob := make([]byte, unix.CmsgSpace(8*4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(fdSpawn, buf, oob, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			os.Exit(0)
		}
		reply, pidfd := spawnOne(buf[:n], PassedFiles(oob[:oobn]))
		b, _ := json.Marshal(reply)
		var rights []byte
		if pidfd >= 0 {
			rights = unix.UnixRights(pidfd)
		}
		err = unix.Sendmsg(fdSpawn, b, rights, nil, unix.MSG_NOSIGNAL)
		if pidfd >= 0 {
			unix.Close(pidfd)
		}
		if err != nil {
			os.Exit(0)
		}
	}
}

// spawnOne starts the init a request asks for, closing the files that came
// with it; it returns the reply and the init's pidfd (-1 when none).
func spawnOne(msg []byte, files []*os.File) (spawnReply, int) {
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	var req spawnRequest
	if err := json.Unmarshal(msg, &req); err != nil || len(req.Args) == 0 || req.Path == "" || len(files) < 2 {
		return spawnReply{Err: "a malformed request"}, -1
	}
	pidfd := -1
	attr := initAttr(req.Mode)
	attr.PidFD = &pidfd
	cmd := &exec.Cmd{
		Path: req.Path, Args: req.Args, Env: helperEnv, Dir: "/",
		Stdout: files[0], Stderr: files[1], ExtraFiles: files[2:],
		SysProcAttr: attr,
	}
	if err := cmd.Start(); err != nil {
		return spawnReply{Err: err.Error(), Refused: req.Mode.Namespaces() && isNamespaceRefusal(err)}, -1
	}
	go func() { _ = cmd.Wait() }() // the asking process waits on the pidfd
	return spawnReply{Pid: cmd.Process.Pid}, pidfd
}

// spawner is the asking process's side of a running spawner.
type spawner struct {
	mu   sync.Mutex
	exe  string
	conn *os.File // nil until started, and after it failed (the next spawn starts another)
	dead bool     // it could not be started: inits are started directly
}

var spawners struct {
	sync.Mutex
	by map[string]*spawner
}

// spawnerFor returns the spawner of exe's inits, started on first use.
func spawnerFor(exe string) *spawner {
	spawners.Lock()
	defer spawners.Unlock()
	if spawners.by == nil {
		spawners.by = map[string]*spawner{}
	}
	s := spawners.by[exe]
	if s == nil {
		s = &spawner{exe: exe}
		spawners.by[exe] = s
	}
	return s
}

// startLocked starts the spawner. It is never stopped: it lives as long
// as this process, and the inits it started die with it.
func (s *spawner) startLocked() error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "spawner"), os.NewFile(uintptr(fds[1]), "spawner")
	cmd := &exec.Cmd{
		Path: s.exe, Args: []string{spawnerArg0}, Env: helperEnv, Dir: "/",
		Stderr:      os.Stderr,
		ExtraFiles:  []*os.File{theirs},
		SysProcAttr: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL},
	}
	err = cmd.Start()
	theirs.Close()
	if err != nil {
		ours.Close()
		return fmt.Errorf("start the sandbox's spawner: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	s.conn = ours
	return nil
}

// spawn asks the spawner for an init, as spawnInit would start it (with
// /dev/null for its standard input). ok is false when the spawner could
// not be started, asked, or answered nothing: the caller then starts the
// init itself, and the next spawn starts a new spawner (unless this one
// could not start at all).
func (s *spawner) spawn(args []string, mode Mode, stdout, stderr *os.File, extra []*os.File) (ip *initProc, planW *os.File, err error, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return nil, nil, nil, false
	}
	fail := func() (*initProc, *os.File, error, bool) {
		s.conn.Close()
		s.conn = nil
		return nil, nil, nil, false
	}
	planR, planW, err := os.Pipe()
	if err != nil {
		return nil, nil, err, true
	}
	reportR, reportW, err := os.Pipe()
	if err != nil {
		planR.Close()
		planW.Close()
		return nil, nil, err, true
	}
	closeChild := func() {
		planR.Close()
		reportW.Close()
	}
	b, _ := json.Marshal(spawnRequest{Path: s.exe, Args: args, Mode: mode})
	fds := []int{int(stdout.Fd()), int(stderr.Fd()), int(planR.Fd()), int(reportW.Fd())}
	for _, f := range extra {
		fds = append(fds, int(f.Fd()))
	}
	// A spawner that died since the last request refuses this one unread:
	// a new one is started and asked once.
	for try := 0; try < 2; try++ {
		if s.conn == nil {
			if err = s.startLocked(); err != nil {
				s.dead = true
				break
			}
		}
		if err = unix.Sendmsg(int(s.conn.Fd()), b, unix.UnixRights(fds...), nil, unix.MSG_NOSIGNAL); err == nil {
			break
		}
		s.conn.Close()
		s.conn = nil
	}
	runtime.KeepAlive(stdout)
	runtime.KeepAlive(stderr)
	runtime.KeepAlive(extra)
	closeChild()
	if err != nil {
		planW.Close()
		reportR.Close()
		return nil, nil, nil, false
	}
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4))
	var n, oobn int
	for {
		n, oobn, _, _, err = unix.Recvmsg(int(s.conn.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	var r spawnReply
	if err != nil || n == 0 || json.Unmarshal(buf[:n], &r) != nil {
		// Whether it started an init cannot be known; one it did has no
		// plan and ends when planW closes.
		planW.Close()
		reportR.Close()
		return fail()
	}
	files := PassedFiles(oob[:oobn])
	if r.Err != "" || r.Pid <= 0 || len(files) != 1 {
		for _, f := range files {
			f.Close()
		}
		planW.Close()
		reportR.Close()
		err := fmt.Errorf("start the sandbox: %s", r.Err)
		if r.Refused {
			err = &namespaceError{errors.New(r.Err)}
		}
		return nil, nil, err, true
	}
	pf := &pidFD{fd: int(files[0].Fd()), f: files[0]}
	return &initProc{pid: r.Pid, pidfd: pf, report: reportR}, planW, nil, true
}

// pidFD is a process this process did not start (its parent reaps it):
// waited for and killed through its pidfd.
type pidFD struct {
	mu     sync.Mutex
	fd     int
	f      *os.File // owns fd; nil once the process was waited for
	exited bool
}

// wait waits until the process has exited.
func (p *pidFD) wait() {
	p.mu.Lock()
	fd := p.fd
	done := p.exited
	p.mu.Unlock()
	if done {
		return
	}
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(pfd, -1); err == nil || !errors.Is(err, unix.EINTR) {
			break
		}
	}
	p.mu.Lock()
	if !p.exited {
		p.exited = true
		p.f.Close()
	}
	p.mu.Unlock()
}

// kill kills the process, unless it was waited for.
func (p *pidFD) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.exited {
		_ = unix.PidfdSendSignal(p.fd, unix.SIGKILL, nil, 0)
	}
}
