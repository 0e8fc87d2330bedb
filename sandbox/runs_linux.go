//go:build amd64 || arm64

package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentwarden/warden/internal/proc"
	"golang.org/x/sys/unix"
)

// A one-shot run of a session (Spec.Runs set) writes its init's pid in
// that directory while it runs, so that the host can hold it as it holds
// the session's world (holder): a command run in the background (Claude
// Code's run_in_background) lives on beside the agent host's own file
// tools as a world's processes do. HoldRuns stops every process of each
// registered run's pid namespace but its init, whose wall clock goes on
// (it ends the run at its time even while held); ReleaseRuns lets them go
// on. The leases are files beside the runs' (each with its processes and
// its end), so any warden process can end one; a lease whose time is up is
// ended by the next hold or release of the directory.

// runStarting is a run's pid while its init is starting: a hold waits for
// the pid (at most runStartWait), and fails when it does not come.
const runStarting = 0

const runStartWait = 200 * time.Millisecond

// procID is a process, by pid and start time (against a reused pid).
type procID struct {
	Pid   int    `json:"pid"`
	Start string `json:"start"`
}

// runLease is one lease's file: the processes it stopped, and its end.
type runLease struct {
	Lease string    `json:"lease"`
	Until time.Time `json:"until"`
	Procs []procID  `json:"procs"`
}

// registerRun writes the run's entry (its init starting) in dir and
// returns what names its init once started, and what removes the entry.
// While a lease of dir is in force, it waits (as a command sent to a held
// world does): a run started meanwhile would run unheld beside the tool
// the lease is for. The entry is made under dir's lock, so that no hold
// falls between the look and the entry.
func registerRun(dir string) (started func(pid int), remove func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("register the run to be held: %w", err)
	}
	for {
		unlock, err := lockRuns(dir)
		if err != nil {
			return nil, nil, err
		}
		endExpired(dir)
		if len(leaseFiles(dir)) == 0 {
			started, remove, err = newRunEntry(dir)
			unlock()
			return started, remove, err
		}
		unlock()
		time.Sleep(10 * time.Millisecond)
	}
}

// newRunEntry writes a run's entry in dir (registerRun).
func newRunEntry(dir string) (started func(pid int), remove func(), err error) {
	f, err := os.CreateTemp(dir, "run-*.json")
	if err != nil {
		return nil, nil, fmt.Errorf("register the run to be held: %w", err)
	}
	path := f.Name()
	_, err = f.Write(mustJSON(procID{Pid: runStarting}))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, nil, fmt.Errorf("register the run to be held: %w", err)
	}
	started = func(pid int) {
		start, _ := proc.Start(pid)
		tmp := path + ".new"
		if os.WriteFile(tmp, mustJSON(procID{Pid: pid, Start: start}), 0o600) == nil {
			_ = os.Rename(tmp, path)
		}
	}
	return started, func() { os.Remove(path) }, nil
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// HoldRuns stops the processes of every run registered in dir under lease
// for ttl, and returns once each is seen stopped. A run whose init is
// still starting is waited for; one that cannot be held fails the hold,
// and what it stopped goes on. The lease is kept for dir itself too, so
// that a run starting while it is in force waits (registerRun).
func HoldRuns(dir, lease string, ttl time.Duration) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("hold the session's sandboxed runs: %w", err)
	}
	unlock, err := lockRuns(dir)
	if err != nil {
		return err
	}
	defer unlock()
	endExpired(dir)
	until := time.Now().Add(ttl)
	written := []string{leasePath(dir, procID{}, lease)}
	fail := func(err error) error {
		for _, path := range written {
			endLease(dir, path)
		}
		return err
	}
	if err := os.WriteFile(written[0], mustJSON(runLease{Lease: lease, Until: until}), 0o600); err != nil {
		return fail(fmt.Errorf("hold the session's sandboxed runs: %w", err))
	}
	deadline := time.Now().Add(runStartWait)
	inits, starting := registeredRuns(dir)
	for starting && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
		inits, starting = registeredRuns(dir)
	}
	if starting {
		return fail(errors.New("a sandboxed run of the session is still starting"))
	}
	for _, init := range inits {
		path := leasePath(dir, init, lease)
		written = append(written, path)
		procs, err := stopNamespace(init)
		if err == nil {
			err = os.WriteFile(path, mustJSON(runLease{Lease: lease, Until: until, Procs: procs}), 0o600)
		}
		if err != nil {
			freeUnheld(dir, procs)
			return fail(fmt.Errorf("hold the session's sandboxed run (init %d): %w", init.Pid, err))
		}
	}
	return nil
}

// ReleaseRuns ends the leases named (with prefix, every lease whose name
// starts with one of them) of the runs registered in dir; a process goes
// on once no lease holds it.
func ReleaseRuns(dir string, prefix bool, leases ...string) error {
	unlock, err := lockRuns(dir)
	if err != nil || unlock == nil {
		return err
	}
	defer unlock()
	endExpired(dir)
	for _, path := range leaseFiles(dir) {
		var l runLease
		if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &l) == nil &&
			slices.ContainsFunc(leases, func(n string) bool { return l.Lease == n || prefix && strings.HasPrefix(l.Lease, n) }) {
			endLease(dir, path)
		}
	}
	return nil
}

// lockRuns takes dir's lock; nil, nil when dir does not exist (no run
// was ever registered there). Leases end at their time (endExpired, under
// the lock), so a wait for them is bounded.
func lockRuns(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("hold the session's sandboxed runs: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("hold the session's sandboxed runs: %w", err)
	}
	return func() { f.Close() }, nil
}

// registeredRuns are the live inits registered in dir; starting says one
// is still starting.
func registeredRuns(dir string) (inits []procID, starting bool) {
	paths, _ := filepath.Glob(filepath.Join(dir, "run-*.json"))
	for _, path := range paths {
		var r procID
		b, err := os.ReadFile(path)
		if err != nil || json.Unmarshal(b, &r) != nil {
			continue
		}
		if r.Pid == runStarting {
			starting = true
			continue
		}
		if start, ok := proc.Start(r.Pid); ok && start == r.Start {
			inits = append(inits, r)
		}
	}
	return inits, starting
}

// stopNamespace stops every process in init's pid namespace but init
// (stopEach), and returns once each is seen stopped (or fails: those it
// stopped go on).
func stopNamespace(init procID) ([]procID, error) {
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", init.Pid))
	if err != nil {
		return nil, fmt.Errorf("read the run's pid namespace: %w", err)
	}
	starts := map[int]string{}
	// A lease holds every process it saw, those another lease stopped
	// first too (endLease lets a process go when no lease holds it).
	signalled, pids, err := stopEach(func() ([]int, error) {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return nil, err
		}
		var in []int
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == init.Pid {
				continue
			}
			if l, err := os.Readlink("/proc/" + e.Name() + "/ns/pid"); err == nil && l == ns {
				if _, ok := starts[pid]; !ok {
					starts[pid], _ = proc.Start(pid)
				}
				in = append(in, pid)
			}
		}
		return in, nil
	})
	ids := func(pids []int) []procID {
		out := make([]procID, 0, len(pids))
		for _, pid := range pids {
			out = append(out, procID{Pid: pid, Start: starts[pid]})
		}
		return out
	}
	if err != nil {
		resume(ids(signalled))
		return nil, fmt.Errorf("hold the run: %w", err)
	}
	return ids(pids), nil
}

// resume lets procs go on (those still the same processes).
func resume(procs []procID) {
	for _, p := range procs {
		if start, ok := proc.Start(p.Pid); ok && start == p.Start {
			_ = unix.Kill(p.Pid, syscall.SIGCONT)
		}
	}
}

func leasePath(dir string, init procID, lease string) string {
	sum := sha256.Sum256([]byte(lease))
	return filepath.Join(dir, fmt.Sprintf("lease-%d-%s.json", init.Pid, hex.EncodeToString(sum[:8])))
}

func leaseFiles(dir string) []string {
	paths, _ := filepath.Glob(filepath.Join(dir, "lease-*.json"))
	return paths
}

// endLease removes the lease at path and lets its processes go on, but
// those another lease still holds.
func endLease(dir, path string) {
	var l runLease
	b, _ := os.ReadFile(path)
	_ = json.Unmarshal(b, &l)
	os.Remove(path)
	freeUnheld(dir, l.Procs)
}

// freeUnheld lets procs go on, but those a lease in dir holds.
func freeUnheld(dir string, procs []procID) {
	held := map[procID]bool{}
	for _, other := range leaseFiles(dir) {
		var o runLease
		if b, err := os.ReadFile(other); err == nil && json.Unmarshal(b, &o) == nil {
			for _, p := range o.Procs {
				held[p] = true
			}
		}
	}
	var free []procID
	for _, p := range procs {
		if !held[p] {
			free = append(free, p)
		}
	}
	resume(free)
}

// endExpired ends the leases whose time is up.
func endExpired(dir string) {
	for _, path := range leaseFiles(dir) {
		var l runLease
		if b, err := os.ReadFile(path); err != nil || json.Unmarshal(b, &l) != nil || time.Now().After(l.Until) {
			endLease(dir, path)
		}
	}
}
