//go:build amd64 || arm64

package sandbox

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A session's /tmp is a directory on the host's disk (Spec.Tmp), shared by
// the session's commands and kept between them, so no tmpfs size bounds
// it. The init bounds it instead: it watches how much /tmp holds and, when
// the sandbox's processes have grown it past its cap (Limits.Tmp), kills
// them (onOver), and the command that was running ends with LimitTmp. A
// /tmp already over its cap when the sandbox starts, or after such a kill,
// may keep what it holds, and shrink: only growing it further is stopped,
// so that the next command can still look at it and remove files.
//
// Measuring a directory means walking it: the watcher walks /tmp once a
// second (or every fifty walks' time, when a walk is slow: at most 2% of a
// core; a walk of 10,000 files took 31 ms, BenchmarkDirUsage), and sooner
// when the filesystem holding it has gained more than /tmp had left under
// its cap (statfs every tmpPoll, one system call).

// tmpPoll is how often the watcher looks at the filesystem, and
// tmpWalkEvery how often it walks /tmp whatever the filesystem says (files
// removed elsewhere on it hide what /tmp gained).
const (
	tmpPoll      = 250 * time.Millisecond
	tmpWalkEvery = time.Second
)

// maxTmpEntries bounds the entries a walk of /tmp counts; a /tmp holding
// more counts as over any cap (a million files is what filling it with
// inodes looks like).
const maxTmpEntries = 1 << 20

// tmpWatch is the watcher of one sandbox's /tmp.
type tmpWatch struct {
	dir   string // "/tmp" in the sandbox; a test's directory
	cap   int64
	share int
	kills atomic.Int64 // how many times onOver ran
	// gate is held for writing while onOver kills the sandbox's
	// processes, and for reading while a command starts: a kill that
	// looks again for processes until none is left would otherwise kill
	// the next command too, started in its last moments (the supervisor
	// sends it as soon as the killed one is answered).
	gate sync.RWMutex
}

// starting holds off the watcher's kill while a command starts; the
// function it returns ends that. A nil watcher holds off nothing.
func (w *tmpWatch) starting() func() {
	if w == nil {
		return func() {}
	}
	w.gate.RLock()
	return w.gate.RUnlock
}

// watchTmp starts watching dir (the sandbox's /tmp) against a cap of
// capBytes, or, with share, that percentage of what the disk has for it
// now (the space free to the user there and what dir holds); each time the
// sandbox's processes grow it past the cap, onOver runs. It returns nil
// (watching nothing) when there is no cap.
func watchTmp(dir string, capBytes int64, share int, onOver func()) *tmpWatch {
	if capBytes <= 0 && share <= 0 {
		return nil
	}
	w := &tmpWatch{dir: dir, cap: capBytes, share: share}
	go w.run(onOver)
	return w
}

// fired reports how many times the watcher has stopped the sandbox's
// processes; 0 for a nil watcher.
func (w *tmpWatch) fired() int64 {
	if w == nil {
		return 0
	}
	return w.kills.Load()
}

func (w *tmpWatch) run(onOver func()) {
	used, fsAt, took := w.measure()
	if w.share > 0 {
		var st unix.Statfs_t
		if unix.Statfs(w.dir, &st) != nil {
			return // no disk to take a share of: no cap
		}
		w.cap = shareCap(int64(st.Bavail)*st.Bsize, used, w.share)
	}
	// What /tmp may hold: the cap, or what it already held (over the cap
	// when the sandbox started, or when its processes were stopped),
	// coming down to the cap as files are removed.
	limit := max(w.cap, used)
	lastWalk := time.Now()
	for range time.Tick(tmpPoll) {
		now, ok := fsUsed(w.dir)
		if !ok {
			continue
		}
		since := time.Since(lastWalk)
		grew := used+max(0, now-fsAt) > limit && since >= max(tmpPoll, 5*took)
		if !grew && since < max(tmpWalkEvery, 50*took) {
			continue
		}
		used, fsAt, took = w.measure()
		lastWalk = time.Now()
		if used <= limit {
			limit = max(w.cap, used)
			continue
		}
		w.kills.Add(1)
		w.gate.Lock()
		onOver()
		w.gate.Unlock()
		// What the killed processes left stays: measured again once they
		// are gone, it is the new limit, until files are removed.
		time.Sleep(tmpPoll / 2)
		used, fsAt, took = w.measure()
		lastWalk = time.Now()
		limit = max(w.cap, used)
	}
}

// shareCap is pct percent of what a disk has for /tmp: free, the space
// free there, and held, what /tmp holds already. Of the free space alone,
// a /tmp that had filled part of the disk would be over the cap of a later
// sandbox of the session (with less free space) for that alone, and its
// first write stopped.
func shareCap(free, held int64, pct int) int64 {
	return (free + held) * int64(pct) / 100
}

// measure walks the watched directory: the bytes it holds, the
// filesystem's use just before the walk, and how long the walk took.
func (w *tmpWatch) measure() (used, fsAt int64, took time.Duration) {
	start := time.Now()
	fsAt, _ = fsUsed(w.dir)
	used = dirUsage(w.dir, mountsBelow(w.dir))
	return used, fsAt, time.Since(start)
}

// fsUsed is the bytes in use on the filesystem holding dir.
func fsUsed(dir string) (int64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Blocks-st.Bfree) * st.Bsize, true
}

// dirUsage is the disk space the files below dir take (their allocated
// blocks; a file with several names counts once for each), leaving out the
// mount points in skip (paths carried into /tmp from elsewhere: the
// project, when it lies in /tmp). Past maxTmpEntries entries it is as
// good as unbounded.
func dirUsage(dir string, skip map[string]bool) int64 {
	var total int64
	entries := 0
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // gone meanwhile, or unreadable: not counted
		}
		if p != dir && skip[p] {
			return filepath.SkipDir
		}
		if entries++; entries > maxTmpEntries {
			total = 1 << 62
			return filepath.SkipAll
		}
		var st unix.Stat_t
		if unix.Lstat(p, &st) == nil {
			total += st.Blocks * 512
		}
		return nil
	})
	return total
}

// mountsBelow are the mount points strictly below dir (mountPoints).
func mountsBelow(dir string) map[string]bool {
	all, _ := mountPoints()
	out := map[string]bool{}
	for mp := range all {
		if strings.HasPrefix(mp, dir+"/") {
			out[mp] = true
		}
	}
	return out
}

// dead reports whether process pid has ended and waits to be reaped: a
// zombie with no thread left. (A process whose first thread ended shows
// that thread's zombie state while the others run on.)
func dead(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // gone
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z' && stat[i+2] != 'X' {
		return false
	}
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	return err != nil || len(tasks) <= 1
}

// killAllBut kills every process of the sandbox's pid namespace but the
// init and keep (the launcher), looking again until a look finds none
// left to kill (a process forking meanwhile has its children killed too).
func killAllBut(keep int) {
	for range 50 {
		pids, err := namespacePids()
		if err != nil {
			return
		}
		killed := false
		for _, pid := range pids {
			if pid == 1 || pid == keep || pid == os.Getpid() {
				continue
			}
			// One already dead, waiting to be reaped, needs no look
			// again.
			if unix.Kill(pid, unix.SIGKILL) == nil && !dead(pid) {
				killed = true
			}
		}
		if !killed {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
