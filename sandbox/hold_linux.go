//go:build amd64 || arm64

package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// maxHold is how long a world stays held when the host never releases it
// (it died): its read-only paths are mounted again and its commands go on.
// A hold names its own time (a lease), up to maxLease.
const maxHold = time.Minute

// maxLease bounds the time any hold asks for: a host file tool the user is
// asked about holds the world until the user's answer, or this.
const maxLease = 10 * time.Minute

// stopWithin is how long hold waits for every process it signalled to be
// stopped (a process ends the system call it is in first).
const stopWithin = 500 * time.Millisecond

// holder stops a world's commands while the host works, from outside, on
// what the world's processes could change under it:
//
//   - a git line run in a sandbox of its own replaces .git/config by
//     renaming over it, which detaches the world's read-only mount of it
//     until the init mounts it again; a process left running in the world
//     could open the new file read-write in that moment and write it
//     later, after the host has judged it;
//   - the agent host's own file tools (Claude Code's Read, Write, Edit…)
//     open on the host a path the gate has just judged; a process left
//     running in the world could swap a directory on that path for a
//     symlink in between (a rename exchange), and the tool would follow it
//     out of what was judged.
//
// Held, every process of the world but its init and launcher is stopped
// (SIGSTOP), and a new command waits; released, the read-only paths are
// mounted again first, then everything goes on. Each hold is a lease with
// a name and a time: the world stays held while any lease is in force.
type holder struct {
	keep int // the launcher's pid, which keeps running (it starts nothing while held)

	mu      sync.Mutex
	leases  map[string]*time.Timer // the holds in force, each ended by release or its timer
	done    chan struct{}          // closed when the last lease ends
	stopped []int
}

// hold takes lease for ttl (maxHold when 0; at most maxLease; a lease
// already held gets the new time). The first lease stops every process of
// the sandbox's pid namespace but the init (pid 1) and the launcher,
// looking again until a look finds none new (a process that forks
// meanwhile has its children stopped too), and returns once each is seen
// stopped. reprotect is what release runs when the lease's time ends. An
// error (the processes cannot be listed, or one is still running) leaves
// nothing held by this lease: the host then does not act beside processes
// it could not stop.
func (h *holder) hold(lease string, ttl time.Duration, reprotect func() error) error {
	if ttl <= 0 {
		ttl = maxHold
	}
	ttl = min(ttl, maxLease)
	h.mu.Lock()
	defer h.mu.Unlock()
	if t, ok := h.leases[lease]; ok {
		t.Reset(ttl)
		return nil
	}
	if len(h.leases) == 0 {
		if err := h.stopAll(); err != nil {
			h.resume()
			return err
		}
		h.done = make(chan struct{})
	}
	if h.leases == nil {
		h.leases = map[string]*time.Timer{}
	}
	h.leases[lease] = time.AfterFunc(ttl, func() { _ = h.release([]string{lease}, false, reprotect) })
	return nil
}

// stopAll stops the namespace's processes (see hold); h.mu is held.
func (h *holder) stopAll() error {
	if _, err := namespacePids(); err != nil {
		return err
	}
	stopped, _, err := stopEach(func() ([]int, error) {
		pids, err := namespacePids()
		return slices.DeleteFunc(pids, func(pid int) bool { return pid == 1 || pid == h.keep }), err
	})
	h.stopped = stopped
	return err
}

// stopEach stops every process list gives, looking again until each is
// seen stopped (a process that forks meanwhile has its children stopped
// too; one a timer went on with is stopped again), and returns those it
// stopped itself (a process the user had stopped stays as it was), and
// every one it saw. A process with a POSIX timer that sends it SIGCONT
// (it would go on by itself) or SIGKILL (it would die while held) is
// killed: the sandbox lets nothing else arrange those signals (seccomp's
// clone, fcntl, prctl and mq_notify rules). Each is judged once it is
// seen stopped, when it can arm no other timer. A process that ends while
// the world is held can make the kernel continue others (an orphaned
// process group gets SIGHUP and SIGCONT; a terminal whose master it held
// hangs up, and its session leader gets them: red-team-12), and it has
// sent those by the time it is seen ended. So stopEach returns only after
// a look, begun after the last end it saw, found every process stopped
// and none newly ended.
func stopEach(list func() ([]int, error)) (stopped, seen []int, err error) {
	signalled, judged, ended := map[int]bool{}, map[int]bool{}, map[int]bool{}
	deadline := time.Now().Add(stopWithin)
	for {
		pids, err := list()
		if err != nil {
			return stopped, seen, err
		}
		settled := true
		for _, pid := range seen {
			if !ended[pid] && !slices.Contains(pids, pid) {
				ended[pid], settled = true, false // reaped since the last look
			}
		}
		for _, pid := range pids {
			if !slices.Contains(seen, pid) {
				seen = append(seen, pid)
			}
			switch processState(pid) {
			case procRunning:
				settled = false
				if unix.Kill(pid, syscall.SIGSTOP) == nil && !signalled[pid] {
					signalled[pid] = true
					stopped = append(stopped, pid)
				}
			case procEnded:
				if !ended[pid] {
					ended[pid], settled = true, false
				}
			case procStopped:
				if !judged[pid] {
					judged[pid] = true
					if endsOrContinuesItself(pid) {
						_ = unix.Kill(pid, syscall.SIGKILL)
						settled = false
					}
				}
			}
		}
		if settled {
			return stopped, seen, nil
		}
		if time.Now().After(deadline) {
			return stopped, seen, fmt.Errorf("a process of the sandbox did not stop within %s", stopWithin)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// endsOrContinuesItself reports whether pid has a POSIX timer whose
// signal is SIGCONT or SIGKILL (/proc/PID/timers: "signal: 18/…"). Where
// the kernel keeps no such file (no CONFIG_CHECKPOINT_RESTORE), nothing
// can be seen.
func endsOrContinuesItself(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/timers")
	if err != nil {
		return false
	}
	for _, sig := range []syscall.Signal{syscall.SIGCONT, syscall.SIGKILL} {
		if bytes.Contains(b, []byte("signal: "+strconv.Itoa(int(sig))+"/")) {
			return true
		}
	}
	return false
}

// procState is what processState finds a process to be.
type procState int

const (
	procRunning procState = iota // a thread of it runs (or its state cannot be read)
	procStopped                  // every thread of it is stopped, or ended
	procEnded                    // every thread of it has ended, or it is gone
)

// processState judges pid by every thread of it in /proc/PID/task: ended
// when each is Z or X (or it has no entry), stopped when each is T or t,
// or Z or X, running otherwise. Every thread, not the first's state in
// /proc/PID/stat: a process whose first thread ended by the raw exit call
// shows Z there while its other threads run on (red-team-11), and is
// stopped by SIGSTOP as any.
func processState(pid int) procState {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		// No entry: gone. Any other failure to look is not "stopped".
		if errors.Is(err, fs.ErrNotExist) {
			return procEnded
		}
		return procRunning
	}
	state := procEnded
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/stat")
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue // the thread ended since the list was read
		}
		if err != nil {
			return procRunning
		}
		switch threadState(b) {
		case 'Z', 'X':
		case 'T', 't':
			state = procStopped
		default:
			return procRunning
		}
	}
	return state
}

// threadState is the state letter of a thread's stat line (0 when it
// cannot be read). It follows the command's name, which is in
// parentheses and may itself hold ") ".
func threadState(stat []byte) byte {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return 0
	}
	return stat[i+2]
}

// resume lets the stopped processes go on; h.mu is held.
func (h *holder) resume() {
	for _, pid := range h.stopped {
		_ = unix.Kill(pid, syscall.SIGCONT)
	}
	h.stopped = nil
}

// release ends the leases named (with prefix, every lease whose name
// starts with one of them). When that ends the last lease, it mounts the
// read-only paths again, then lets the stopped processes and waiting
// commands go on. A release of the host's git line's hold ("") where none
// is held still mounts the paths again; any other costs nothing then.
func (h *holder) release(names []string, prefix bool, reprotect func() error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	ended := false
	for name, t := range h.leases {
		if slices.ContainsFunc(names, func(n string) bool { return name == n || prefix && strings.HasPrefix(name, n) }) {
			t.Stop()
			delete(h.leases, name)
			ended = true
		}
	}
	if len(h.leases) > 0 || !ended && !slices.Contains(names, "") {
		return nil
	}
	err := reprotect()
	if ended {
		h.resume()
		close(h.done)
	}
	return err
}

// isHeld reports whether any lease is in force.
func (h *holder) isHeld() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.leases) > 0
}

// wait returns once the sandbox is not held.
func (h *holder) wait() {
	h.mu.Lock()
	held, done := len(h.leases) > 0, h.done
	h.mu.Unlock()
	if held {
		<-done
	}
}

// namespacePids are the processes /proc lists: the init's own /proc, of
// its pid namespace.
func namespacePids() ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list the sandbox's processes to hold them: %w", err)
	}
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}
