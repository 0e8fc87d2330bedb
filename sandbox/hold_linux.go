//go:build amd64 || arm64

package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// maxHold is how long a world stays held when the host never releases it
// (it died): its read-only paths are mounted again and its commands go on.
const maxHold = time.Minute

// holder stops a world's commands while the host changes, from outside,
// a file the world keeps read-only: a git line run in a sandbox of its own
// replaces .git/config by renaming over it, which detaches the world's
// read-only mount of it until the init mounts it again. A process left
// running in the world could open the new file read-write in that moment
// and write it later, after the host has judged it. Held, every process of
// the world but its init and launcher is stopped (SIGSTOP), and a new
// command waits; released, the read-only paths are mounted again first,
// then everything goes on.
type holder struct {
	keep int // the launcher's pid, which keeps running (it starts nothing while held)

	mu      sync.Mutex
	held    bool
	done    chan struct{} // closed at release
	stopped []int
	timer   *time.Timer
}

// hold stops every process of the sandbox's pid namespace but the init
// (pid 1) and the launcher, looking again until a look finds none new (a
// process that forks meanwhile has its children stopped too). reprotect
// is what release runs when the host never does (maxHold). An error (the
// processes cannot be listed) leaves nothing held: the host then stops the
// sandbox rather than run its line beside processes it could not stop.
func (h *holder) hold(reprotect func() error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held {
		return nil
	}
	if _, err := namespacePids(); err != nil {
		return err
	}
	h.held, h.done, h.stopped = true, make(chan struct{}), nil
	seen := map[int]bool{}
	for range 16 {
		found := false
		pids, _ := namespacePids()
		for _, pid := range pids {
			if pid == 1 || pid == h.keep || seen[pid] {
				continue
			}
			seen[pid], found = true, true
			if unix.Kill(pid, syscall.SIGSTOP) == nil {
				h.stopped = append(h.stopped, pid)
			}
		}
		if !found {
			break
		}
	}
	h.timer = time.AfterFunc(maxHold, func() { _ = h.release(reprotect) })
	return nil
}

// release mounts the read-only paths again, then lets the stopped
// processes and waiting commands go on. A sandbox not held is left as it
// is, its paths mounted again all the same.
func (h *holder) release(reprotect func() error) error {
	err := reprotect()
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.held {
		return err
	}
	h.timer.Stop()
	for _, pid := range h.stopped {
		_ = unix.Kill(pid, syscall.SIGCONT)
	}
	h.held, h.stopped = false, nil
	close(h.done)
	return err
}

// wait returns once the sandbox is not held.
func (h *holder) wait() {
	h.mu.Lock()
	held, done := h.held, h.done
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
