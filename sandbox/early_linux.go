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
// An early init holds nothing but its namespaces: it has no plan, no
// mounts and no command, is in no cgroup yet (the run moves it into its
// own before sending the plan, as for any init) and dies with this process
// (Pdeathsig) or when its plan pipe closes unread.

// earlyInit is an init started before its run, with the pipes it will
// write the command's output to and the socket it will hand its listeners
// over.
type earlyInit struct {
	exe            string
	stdin          *os.File
	ip             *initProc
	planW          *os.File
	outR, errR     *os.File
	listen         *os.File // the host's end of the listener socket (fd 5 in the init)
	outW, errW     *os.File // the init's ends, closed here once it has them
	started, taken bool
}

var early struct {
	sync.Mutex
	e *earlyInit
}

// StartEarly starts the init of the one-shot sandbox this process is about
// to run, with stdin as the command's standard input (nil: none). It does
// nothing where the next run could not use it: a kernel without user
// namespaces, a binary that cannot be found. It is safe to call once per
// process; a second call is ignored.
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
	e := &earlyInit{exe: exe, stdin: stdin}
	early.e = e
	if e.outR, e.outW, err = os.Pipe(); err != nil {
		e.close()
		return
	}
	if e.errR, e.errW, err = os.Pipe(); err != nil {
		e.close()
		return
	}
	host, child, err := socketPair()
	if err != nil {
		e.close()
		return
	}
	e.listen = host
	var in io.Reader
	if stdin != nil {
		in = stdin
	}
	ip, planW, err := spawnInit(exe, ModeStandard, in, e.outW, e.errW, child)
	child.Close()
	e.outW.Close()
	e.errW.Close()
	e.outW, e.errW = nil, nil
	if err != nil {
		e.close()
		return
	}
	e.ip, e.planW, e.started = ip, planW, true
}

// takeEarly returns the early init when it can run this command: started
// from exe, with this standard input, for a mode with namespaces. It is
// taken once; nil otherwise.
func takeEarly(exe string, mode Mode, stdin io.Reader) *earlyInit {
	early.Lock()
	defer early.Unlock()
	e := early.e
	if e == nil || !e.started || e.taken || e.exe != exe || !mode.Namespaces() {
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
	e.taken = true
	return e
}

// DiscardEarly ends an early init no run took. A run that took it ends it
// itself.
func DiscardEarly() {
	early.Lock()
	defer early.Unlock()
	if e := early.e; e != nil && !e.taken {
		e.taken = true
		if e.ip != nil {
			e.ip.kill()
			_ = e.ip.cmd.Wait()
			e.ip.report.Close()
		}
		e.close()
	}
}

func (e *earlyInit) close() {
	for _, f := range []*os.File{e.planW, e.outR, e.errR, e.outW, e.errW, e.listen} {
		if f != nil {
			f.Close()
		}
	}
}
