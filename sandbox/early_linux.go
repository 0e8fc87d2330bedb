//go:build amd64 || arm64

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// A one-shot run spends most of its time starting things one after the
// other: warden itself, its policy and decision, then the sandbox's init
// (a fork with six new namespaces and a start of a binary), then the
// stage. The init does nothing until its plan arrives, so it can be
// started before anything is decided: StartEarly starts it at once, on the
// other core, while this process loads its policy and decides; the run
// that follows takes it (Native.Run), and a run that never comes (a
// denial, an ask, a command for the host) throws it away (DiscardEarly).
//
// A process that runs one-shot sandboxes again and again (a session's
// supervisor, which serves the hooks' guard-profile commands) keeps one
// ready instead (KeepEarly): each run takes the ready init, and a new one
// starts once that run is answered (RefillEarly), so no later run waits
// for a fork of this process and a start of the init's binary.
//
// An early init holds nothing but its namespaces, its cgroup (with no
// limits until the run sets them) and, when its run will likely need one,
// its stage (started once the init is in the cgroup, and waiting for the
// plan too): no mounts, no command, and /dev/null for its standard input.
// The run's standard input comes with its plan, over the listener socket
// (fd 5), to the stage or, without one, to the init itself, so an init
// started before the run's caller was known serves it. It dies with this
// process (Pdeathsig), or when its plan pipe closes unread.

// earlyInit is an init started before its run, with the pipes it will
// write the command's output to, the socket it will hand its listeners
// over, and the cgroup it is already in.
type earlyInit struct {
	exe string
	// stage: the init starts a stage once in its cgroup (initEarlyArg);
	// otherwise it waits for its plan alone (initEarlyThreadArg).
	stage bool
	// viaSpawner: the init is asked of this process's spawner (a process
	// that keeps inits ready must not fork: spawner_linux.go).
	viaSpawner bool
	// spawned is closed once the fields below but admitErr are set,
	// admitted once the init is in its cgroup (or failed to be).
	spawned, admitted chan struct{}
	ip                *initProc // nil when it could not start
	planW             *os.File
	outR              *os.File
	errR              *os.File
	listen            *os.File // the host's end of the listener socket (fd 5 in the init)
	cg                *cgroup  // nil when none could be made; cgErr says why
	cgErr             error
	admitErr          error // the init could not be admitted, and was ended
	taken             bool
	used              bool // a run owns its files and its init now (launch)
}

var early struct {
	sync.Mutex
	e *earlyInit // the last one started; a run may have taken it
	// keep is the binary of the init KeepEarly keeps ready ("": none).
	keep string
	// oneShot: this process has run a one-shot sandbox (takeEarly was
	// asked), so RefillEarly keeps one ready from then on.
	oneShot bool
}

// StartEarly starts, in the background, the init of the one-shot sandbox
// this process is about to run, and moves it into a cgroup of its own,
// whose limits the run sets. stage says whether the run will likely need
// a stage (a profile that forbids new processes or caps the CPU): the
// init then starts one as soon as it is in its cgroup; without, the
// command will likely start from the init's own restricted thread, and a
// stage started for nothing would only take CPU from the decision. It
// does nothing where the next run could not use it: a kernel without user
// namespaces, a binary that cannot be found. A second call is ignored.
func StartEarly(exe string, stage bool) {
	early.Lock()
	defer early.Unlock()
	if early.e != nil {
		return
	}
	startEarlyLocked(exe, stage)
}

// KeepEarly keeps an early init ready for this process's one-shot runs
// until DiscardEarly: the process calls RefillEarly when a run is over and
// answered, and a new one starts if that run took the last. None starts
// before that, so a process that never runs one (a session that only uses
// its world) never holds one.
func KeepEarly(exe string) {
	early.Lock()
	defer early.Unlock()
	if exe, err := initExe(exe); err == nil {
		early.keep = exe
	}
}

// longLived reports whether this process keeps an early init (KeepEarly):
// it lives on after its runs.
func longLived() bool {
	early.Lock()
	defer early.Unlock()
	return early.keep != ""
}

// RefillEarly starts the next ready init, when this process keeps one
// (KeepEarly) and a run took the last. It forks this process, which stalls
// its other threads while the page tables are copied: call it off every
// run's path, once the run's caller has its answer.
func RefillEarly() {
	early.Lock()
	defer early.Unlock()
	// Only once a one-shot run has asked for one: a session whose commands
	// all run in its world never holds one. One that could not start is
	// never taken: none starts after it.
	if early.keep != "" && early.oneShot && (early.e == nil || early.e.taken) {
		// Its runs are the guard profile's (no new processes): a stage.
		startEarlyLocked(early.keep, true)
	}
}

func startEarlyLocked(exe string, stage bool) {
	exe, err := initExe(exe)
	if err != nil {
		return
	}
	e := &earlyInit{exe: exe, stage: stage, viaSpawner: early.keep != "", spawned: make(chan struct{}), admitted: make(chan struct{})}
	early.e = e
	go func() {
		defer close(e.admitted)
		e.start()
	}()
}

// start starts the init and moves it into its cgroup. When the init cannot
// start it leaves e.ip nil and nothing open.
func (e *earlyInit) start() {
	spawned := false
	defer func() {
		if !spawned {
			close(e.spawned)
		}
	}()
	outR, outW, err := os.Pipe()
	if err != nil {
		return
	}
	defer outW.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		return
	}
	defer errW.Close()
	host, child, err := socketPair()
	if err != nil {
		outR.Close()
		errR.Close()
		return
	}
	defer child.Close()
	args := append(initArgs(ModeStandard), initEarlyThreadArg)
	if e.stage {
		args[len(args)-1] = initEarlyArg
	}
	var ip *initProc
	var planW *os.File
	asked := false
	if e.viaSpawner {
		ip, planW, err, asked = spawnerFor(e.exe).spawn(args, ModeStandard, outW, errW, []*os.File{child})
	}
	if !asked {
		ip, planW, err = spawnInit(e.exe, args, ModeStandard, nil, outW, errW, child)
	}
	if err != nil {
		outR.Close()
		errR.Close()
		host.Close()
		return
	}
	cg, cgErr := createCgroup(newID())
	if cgErr != nil {
		cg = nil
	}
	e.ip, e.planW, e.outR, e.errR, e.listen, e.cg, e.cgErr = ip, planW, outR, errR, host, cg, cgErr
	spawned = true
	close(e.spawned)
	// Moving a process into a cgroup can wait for the kernel (an RCU grace
	// period, on cgroup v1): done here, it is off the run's path, which
	// waits for it only to send the plan. Once it is there, the init is
	// told so, and starts its stage, which is then in the cgroup too.
	if e.admitErr = ip.admit(planW, cg); e.admitErr != nil {
		return
	}
	if _, err := host.Write([]byte{1}); err != nil {
		planW.Close()
		ip.abort()
		e.admitErr = fmt.Errorf("tell the sandbox's init it is in its cgroup: %w", err)
	}
}

// takeEarly returns the early init when it can run this command: started
// from exe, for a mode with namespaces, and a standard input that is a
// file (or none), which can be handed over. It is taken once; nil
// otherwise.
func takeEarly(exe string, mode Mode, stdin io.Reader) *earlyInit {
	early.Lock()
	defer early.Unlock()
	early.oneShot = early.oneShot || mode.Namespaces()
	e := early.e
	if e == nil || e.taken || e.exe != exe || !mode.Namespaces() {
		return nil
	}
	if _, ok := stdin.(*os.File); !ok && stdin != nil {
		return nil
	}
	<-e.spawned
	if e.ip == nil {
		return nil
	}
	e.taken = true
	return e
}

// waitAdmitted waits until the init is in its cgroup, and says whether it
// is there and alive; when not, the run starts an init of its own (the
// cgroup and its limits stay the run's).
func (e *earlyInit) waitAdmitted() bool {
	<-e.admitted
	return e.admitErr == nil
}

// hand gives the init its run: the command's standard input (when it has
// one, a file, for the stage), then the plan, which says that it comes.
// The init then builds the sandbox and its stage starts the command. An error means the init got
// no plan (it died since it was started, with this process's thread that
// started it or by a kill): the run starts an init of its own.
func (e *earlyInit) hand(p *plan, stdin io.Reader) error {
	if f, ok := stdin.(*os.File); ok && f != nil {
		p.StdinPassed = true
		// The socket is a blocking one (socketPair): no EAGAIN.
		if err := unix.Sendmsg(int(e.listen.Fd()), []byte{0}, unix.UnixRights(int(f.Fd())), nil, 0); err != nil {
			return fmt.Errorf("hand the command's standard input to the sandbox: %w", err)
		}
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	_, err = e.planW.Write(append(b, '\n'))
	if cerr := e.planW.Close(); err == nil {
		err = cerr
	}
	return err
}

// receiveStdin takes the command's standard input from the host over the
// socket fd (earlyInit.hand) and makes it this process's fd 0: the early
// init's stage does, and execs the command with it.
func receiveStdin(fd int) error {
	var b [1]byte
	oob := make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(fd, b[:], oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return fmt.Errorf("receive the command's standard input: %w", err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return errors.New("receive the command's standard input: no descriptor came")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, f := range fds {
			unix.Close(f)
		}
		return errors.New("receive the command's standard input: no descriptor came")
	}
	defer unix.Close(fds[0])
	if err := unix.Dup3(fds[0], 0, 0); err != nil {
		return fmt.Errorf("make the command's standard input fd 0: %w", err)
	}
	return nil
}

// cgroupFor returns the early init's cgroup with lim set, or why it cannot
// cap them. The cgroup is the run's to remove.
func (e *earlyInit) cgroupFor(lim Limits) (*cgroup, error) {
	if e.cgErr != nil {
		return nil, e.cgErr
	}
	if err := e.cg.limit(lim); err != nil {
		return nil, err
	}
	return e.cg, nil
}

// release ends an early init a run took but never used, or one no run
// took (DiscardEarly).
func (e *earlyInit) release() {
	if e.used || e.ip == nil {
		return
	}
	e.ip.abort()
	for _, f := range []*os.File{e.planW, e.outR, e.errR, e.listen} {
		f.Close()
	}
}

// DiscardEarly ends an early init no run took, and stops keeping one
// ready (KeepEarly). A run that took it ends it itself.
func DiscardEarly() {
	early.Lock()
	early.keep, early.oneShot = "", false
	e := early.e
	if e == nil || e.taken {
		early.Unlock()
		return
	}
	e.taken = true
	early.Unlock()
	<-e.admitted
	e.release()
	e.cg.remove()
}
