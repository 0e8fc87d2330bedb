//go:build amd64 || arm64

package sandbox

import (
	"io"
	"os"
	"sync"
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
// An early init holds nothing but its namespaces and its cgroup (with no
// limits until the run sets them): no mounts and no command. It dies with
// this process (Pdeathsig), or when its plan pipe closes unread.

// earlyInit is an init started before its run, with the pipes it will
// write the command's output to, the socket it will hand its listeners
// over, and the cgroup it is already in.
type earlyInit struct {
	exe   string
	stdin *os.File
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
	e *earlyInit
}

// StartEarly starts, in the background, the init of the one-shot sandbox
// this process is about to run, with stdin as the command's standard input
// (nil: none), and moves it into a cgroup of its own, whose limits the run
// sets. It does nothing where the next run could not use it: a kernel
// without user namespaces, a binary that cannot be found. A second call is
// ignored.
func StartEarly(exe string, stdin *os.File) {
	early.Lock()
	defer early.Unlock()
	if early.e != nil {
		return
	}
	exe, err := initExe(exe)
	if err != nil {
		return
	}
	e := &earlyInit{exe: exe, stdin: stdin, spawned: make(chan struct{}), admitted: make(chan struct{})}
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
	var in io.Reader
	if e.stdin != nil {
		in = e.stdin
	}
	ip, planW, err := spawnInit(e.exe, ModeStandard, in, outW, errW, child)
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
	// waits for it only to send the plan.
	e.admitErr = ip.admit(planW, cg)
}

// takeEarly returns the early init when it can run this command: started
// from exe, with this standard input, for a mode with namespaces. It is
// taken once; nil otherwise.
func takeEarly(exe string, mode Mode, stdin io.Reader) *earlyInit {
	early.Lock()
	defer early.Unlock()
	e := early.e
	if e == nil || e.taken || e.exe != exe || !mode.Namespaces() {
		return nil
	}
	switch in := stdin.(type) {
	case nil:
		if e.stdin != nil {
			return nil
		}
	case *os.File:
		if in != e.stdin {
			return nil
		}
	default:
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

// DiscardEarly ends an early init no run took. A run that took it ends it
// itself.
func DiscardEarly() {
	early.Lock()
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
