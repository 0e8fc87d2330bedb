//go:build amd64 || arm64

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// A long-lived sandbox can also serve one-shot runs (Command.Alone): a run
// that must find the sandbox as a new one-shot sandbox would be and leave
// nothing behind, only without paying for namespaces, mounts and a start of
// its own. The init runs such a command alone (no other alone command
// meanwhile), after emptying the sandbox of what earlier commands left
// (scrub: their processes, /tmp, /dev/shm, System V and POSIX IPC objects),
// and kills whatever the command started before it answers.

// alone serialises a sandbox's alone commands; clean says the last one's
// scrub after it succeeded, and no alone command ran since. Between two
// alone commands nothing else runs in the sandbox but the supervisor's
// health checks (/bin/true, which leaves nothing), so the next one need not
// scrub again before it starts.
var (
	alone sync.Mutex
	clean bool
)

// scrubbed makes sure the sandbox is scrubbed for the next alone command
// (alone held), and counts it as no longer clean.
func scrubbed(keep int) error {
	if !clean {
		if err := scrub(keep); err != nil {
			return err
		}
	}
	clean = false
	return nil
}

// scrubAfter scrubs the sandbox after an alone command (alone held), for
// the next.
func scrubAfter(keep int) {
	clean = scrub(keep) == nil
}

// scrub makes the sandbox as a new one would be for its next command: every
// process but the init and keep (the launcher) is killed, and /tmp,
// /dev/shm and the IPC namespace are emptied. What the sandbox mounts
// inside /tmp (a project or home carried there) is kept.
func scrub(keep int) error {
	killAllBut(keep)
	if err := noneLeft(keep); err != nil {
		return fmt.Errorf("empty the sandbox for a one-shot run: %w", err)
	}
	mounts, err := mountPoints()
	if err != nil {
		return err
	}
	var errs []error
	for _, dir := range []string{"/tmp", "/dev/shm"} {
		if err := emptyDir(dir, mounts); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, removeSysVIPC(), removeMessageQueues())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("empty the sandbox for a one-shot run: %w", err)
	}
	return nil
}

// noneLeft checks that killAllBut left no process running but the init,
// keep and this one: a look at /proc that fails, or a process still alive
// after it, is an error (killAllBut itself gives up silently).
func noneLeft(keep int) error {
	pids, err := namespacePids()
	if err != nil {
		return err
	}
	for _, pid := range pids {
		if pid != 1 && pid != keep && pid != os.Getpid() && !dead(pid) {
			return fmt.Errorf("process %d is still running after being killed", pid)
		}
	}
	return nil
}

// emptyDir removes everything in dir but the mount points below it and
// the directories that lead to them. A tree is removed only when no mount
// lies inside it, so nothing mounted there (a project carried into /tmp)
// is touched.
func emptyDir(dir string, mounts map[string]bool) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		switch holds := mountsIn(p, mounts); {
		case holds == mountAt:
		case holds == mountBelow && e.IsDir():
			if err := emptyDir(p, mounts); err != nil {
				errs = append(errs, err)
			}
		default:
			if err := os.RemoveAll(p); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

const (
	mountNone = iota
	mountAt
	mountBelow
)

// mountsIn says whether p is a mount point, holds one, or neither.
func mountsIn(p string, mounts map[string]bool) int {
	holds := mountNone
	for m := range mounts {
		switch {
		case m == p:
			return mountAt
		case strings.HasPrefix(m, p+"/"):
			holds = mountBelow
		}
	}
	return holds
}

// removeSysVIPC removes every System V shared memory segment, message queue
// and semaphore set of the sandbox's IPC namespace (the init owns it).
func removeSysVIPC() error {
	var errs []error
	for _, k := range []struct {
		file string
		rm   func(id int) error
	}{
		{"shm", func(id int) error { _, err := unix.SysvShmCtl(id, unix.IPC_RMID, nil); return err }},
		{"msg", func(id int) error { return ipcRemove(unix.SYS_MSGCTL, id) }},
		{"sem", func(id int) error { return ipcRemove(unix.SYS_SEMCTL, id) }},
	} {
		ids, err := sysvIDs("/proc/sysvipc/" + k.file)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, id := range ids {
			if err := k.rm(id); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.EIDRM) {
				errs = append(errs, fmt.Errorf("remove System V %s %d: %w", k.file, id, err))
			}
		}
	}
	return errors.Join(errs...)
}

// ipcRemove is msgctl(id, IPC_RMID) or semctl(id, 0, IPC_RMID).
func ipcRemove(call uintptr, id int) error {
	var err error
	if call == unix.SYS_SEMCTL {
		_, _, e := unix.Syscall6(call, uintptr(id), 0, unix.IPC_RMID, 0, 0, 0)
		if e != 0 {
			err = e
		}
	} else if _, _, e := unix.Syscall(call, uintptr(id), unix.IPC_RMID, 0); e != 0 {
		err = e
	}
	return err
}

// sysvIDs reads the ids (the second column) of a /proc/sysvipc table.
func sysvIDs(path string) ([]int, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // a kernel without System V IPC
	}
	if err != nil {
		return nil, err
	}
	var ids []int
	for i, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if i == 0 || len(f) < 2 {
			continue
		}
		if id, err := strconv.Atoi(f[1]); err == nil {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// removeMessageQueues removes every POSIX message queue of the sandbox's IPC
// namespace, through an mqueue filesystem of that namespace mounted nowhere
// (fsopen, fsmount): no command sees it.
func removeMessageQueues() error {
	fsfd, err := unix.Fsopen("mqueue", unix.FSOPEN_CLOEXEC)
	if errors.Is(err, unix.ENODEV) || errors.Is(err, unix.ENOSYS) {
		return nil // no POSIX message queues in this kernel
	}
	if err != nil {
		return fmt.Errorf("open the message queues: %w", err)
	}
	defer unix.Close(fsfd)
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return fmt.Errorf("open the message queues: %w", err)
	}
	mfd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open the message queues: %w", err)
	}
	defer unix.Close(mfd)
	// The mount's descriptor is a path; its directory is opened from it.
	dfd, err := unix.Openat(mfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open the message queues: %w", err)
	}
	dir := os.NewFile(uintptr(dfd), "mqueue")
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return fmt.Errorf("list the message queues: %w", err)
	}
	var errs []error
	for _, n := range names {
		if err := unix.Unlinkat(dfd, n, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("remove message queue %s: %w", n, err))
		}
	}
	return errors.Join(errs...)
}
