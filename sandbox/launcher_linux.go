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

// A long-lived sandbox runs many commands, and starting each through the
// stage (a fresh start of this binary that restricts itself and execs the
// command) costs milliseconds a command. Where the profile lets commands
// create processes, the init instead starts one launcher: the stage's
// restriction applied once, to the launcher's one locked thread, which then
// forks and execs every command. Landlock, seccomp, no_new_privs,
// capabilities and the securebits belong to a thread and pass to what it
// forks, so each command starts exactly as restricted as the stage would
// have made it. The launcher's other threads never fork; it is not
// dumpable, so a command (same uid) cannot ptrace it or read its memory or
// descriptors through /proc, and seccomp refuses ptrace anyway.
//
// Where the profile forbids new processes (no_spawn), or sets a CPU or
// address-space rlimit (which would bind the launcher itself, being per
// process), the stage stays.

// launcherArg0 is the argument the binary is re-executed with to be a
// launcher.
const launcherArg0 = "warden-sandbox-launcher"

// The launcher's descriptors: the plan arrives on fdPlan, requests on
// fdLaunch.
const fdLaunch = 4

// launchRequest is one command for the launcher. Its stdin, stdout, stderr
// and a reply socket travel with it, in that order.
type launchRequest struct {
	Args []string
	Dir  string
	Env  []string
}

// launchReply is the launcher's answer on the reply socket: first Pid (or
// Errno and Path when the command could not start), then, when it has
// ended, Done with its wait status and CPU time.
type launchReply struct {
	Pid    int                `json:",omitempty"`
	Errno  int                `json:",omitempty"`
	Path   string             `json:",omitempty"`
	Dir    bool               `json:",omitempty"` // Path is the directory the command could not start in
	Done   bool               `json:",omitempty"`
	Status syscall.WaitStatus `json:",omitempty"`
	CPU    int64              `json:",omitempty"`
}

// launcherFits reports whether p's commands can be started by a launcher.
func launcherFits(p *plan) bool {
	if p.Seccomp.NoSpawn {
		return false
	}
	for _, r := range p.Rlimits {
		if r.Resource == unix.RLIMIT_CPU || r.Resource == unix.RLIMIT_AS {
			return false
		}
	}
	return true
}

// runLauncher restricts its locked thread as the stage would
// (restrictThread) and serves launch requests from the init until the init
// hangs up.
func runLauncher() {
	runtime.LockOSThread() // for good: this thread is the one that forks
	p, err := readPlan()
	if err != nil {
		launcherFail("%v", err)
	}
	oom := openOOMScore()
	if err := restrictThread(p); err != nil {
		launcherFail("%v", err)
	}
	buf := make([]byte, 1<<20)
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(fdLaunch, buf, oob, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			os.Exit(0) // the init hung up
		}
		files := PassedFiles(oob[:oobn])
		launch(buf[:n], files, oom, p.OOMScoreAdj)
	}
}

func launcherFail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "sandbox launcher: "+format+"\n", args...)
	os.Exit(125)
}

// launch starts one command on this (the locked, restricted) thread and
// answers on the request's reply socket.
func launch(msg []byte, files []*os.File, oom *oomScore, oomAdj int) {
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	if len(files) != 4 {
		closeAll()
		return
	}
	reply := files[3]
	answer := func(r launchReply) {
		b, _ := json.Marshal(r)
		_, _ = reply.Write(b)
	}
	var req launchRequest
	if err := json.Unmarshal(msg, &req); err != nil || len(req.Args) == 0 {
		answer(launchReply{Errno: int(syscall.EINVAL)})
		closeAll()
		return
	}
	dir := req.Dir
	if dir == "" {
		dir = "/"
	}
	path, errno := lookPathIn(req.Args[0], req.Env, dir)
	if errno != 0 {
		answer(launchReply{Errno: int(errno), Path: req.Args[0]})
		closeAll()
		return
	}
	var proc *os.Process
	var err error
	oom.starting(oomAdj, func() {
		proc, err = os.StartProcess(path, req.Args, &os.ProcAttr{
			Dir: dir, Env: req.Env, Files: files[:3],
			Sys: &syscall.SysProcAttr{Setpgid: true},
		})
	})
	for _, f := range files[:3] {
		f.Close()
	}
	if err != nil {
		f := startFailure(err, path, dir)
		answer(launchReply{Errno: f.Errno, Path: f.Path, Dir: f.Dir})
		reply.Close()
		return
	}
	answer(launchReply{Pid: proc.Pid})
	go func() {
		defer reply.Close()
		st, _ := proc.Wait()
		r := launchReply{Done: true}
		if st != nil {
			r.Status = st.Sys().(syscall.WaitStatus)
			r.CPU = int64(st.UserTime() + st.SystemTime())
		}
		answer(r)
	}()
}

// launcher is the init's side of a running launcher.
type launcher struct {
	mu   sync.Mutex
	conn *os.File // requests go here
	dead bool
	pid  int // in the sandbox's pid namespace
}

// startLauncher starts a launcher for p's commands; nil when p does not
// fit one or it could not start (the stage then starts each command).
func startLauncher(p *plan) *launcher {
	if !launcherFits(p) {
		return nil
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "launcher"), os.NewFile(uintptr(fds[1]), "launcher")
	planR, planW, err := os.Pipe()
	if err != nil {
		ours.Close()
		theirs.Close()
		return nil
	}
	cmd := &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        []string{launcherArg0},
		Env:         helperEnv,
		Dir:         "/",
		Stderr:      os.Stderr,
		ExtraFiles:  []*os.File{planR, theirs},
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	}
	err = cmd.Start()
	planR.Close()
	theirs.Close()
	if err != nil {
		planW.Close()
		ours.Close()
		return nil
	}
	_ = json.NewEncoder(planW).Encode(p)
	planW.Close()
	pid := cmd.Process.Pid
	_ = cmd.Process.Release() // the init's reaper waits for it
	return &launcher{conn: ours, pid: pid}
}

// start asks the launcher to start args with the streams; it returns the
// command's pid and where its exit status will arrive, or why the command
// could not start. ok is false when the launcher
// is gone and the caller must start the command another way.
func (l *launcher) start(args []string, dir string, env []string, stdin, stdout, stderr *os.File) (pid int, done <-chan exitStatus, failed stageFailure, ok bool) {
	l.mu.Lock()
	dead := l.dead
	l.mu.Unlock()
	if dead {
		return 0, nil, stageFailure{}, false
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, nil, stageFailure{}, false
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "launch"), os.NewFile(uintptr(fds[1]), "launch")
	b, err := json.Marshal(launchRequest{Args: args, Dir: dir, Env: env})
	if err == nil {
		rights := unix.UnixRights(int(stdin.Fd()), int(stdout.Fd()), int(stderr.Fd()), int(theirs.Fd()))
		err = unix.Sendmsg(int(l.conn.Fd()), b, rights, nil, 0)
	}
	theirs.Close()
	if err != nil {
		mine.Close()
		l.mu.Lock()
		l.dead = true
		l.mu.Unlock()
		return 0, nil, stageFailure{}, false
	}
	read := func() (launchReply, bool) {
		buf := make([]byte, 4096)
		n, err := mine.Read(buf)
		var r launchReply
		if err != nil || n == 0 || json.Unmarshal(buf[:n], &r) != nil {
			return r, false
		}
		return r, true
	}
	first, got := read()
	switch {
	case !got:
		// The launcher died before it answered: whether the command
		// started cannot be known, so it is not started again.
		mine.Close()
		l.mu.Lock()
		l.dead = true
		l.mu.Unlock()
		return 0, nil, stageFailure{Errno: int(syscall.ECHILD), Path: "the sandbox's launcher"}, true
	case first.Errno != 0:
		mine.Close()
		return 0, nil, stageFailure{Errno: first.Errno, Path: first.Path, Dir: first.Dir}, true
	}
	ch := make(chan exitStatus, 1)
	go func() {
		defer mine.Close()
		last, got := read()
		if !got {
			// The launcher died; the command is the init's orphan now,
			// and killed with its process group by the caller's stop.
			ch <- exitStatus{ws: syscall.WaitStatus(syscall.SIGKILL)}
			return
		}
		ch <- exitStatus{ws: last.Status, cpu: last.CPU}
	}()
	return first.Pid, ch, stageFailure{}, true
}

// restrictThread gives the calling (locked) thread the stage's
// restrictions, for the commands it will fork: no capabilities,
// no_new_privs, the Landlock domain, p's rlimits (per process, and none
// that binds the caller itself: launcherFits), and the seccomp filter; the
// process becomes undumpable and every descriptor it holds past the three
// streams close-on-exec, so that a command gets its streams and nothing
// else. Any step that fails is an error: nothing may then be started from
// the thread.
func restrictThread(p *plan) error {
	filter := p.Seccomp.filter()
	fprog := &unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	rs, err := p.Landlock.build()
	if err != nil {
		return err
	}
	defer rs.close()
	if err := dropPrivileges(); err != nil {
		return err
	}
	if err := rs.restrict(); err != nil {
		return err
	}
	for _, r := range p.Rlimits {
		// syscall.Setrlimit also keeps Go from raising the file limit
		// again in the children.
		if err := syscall.Setrlimit(r.Resource, &syscall.Rlimit{Cur: r.Cur, Max: r.Max}); err != nil {
			return fmt.Errorf("set rlimit %d: %w", r.Resource, err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("make the process undumpable: %w", err)
	}
	if err := closeInherited(); err != nil {
		return err
	}
	if err := loadSeccomp(fprog); err != nil {
		return err
	}
	runtime.KeepAlive(filter)
	return nil
}
