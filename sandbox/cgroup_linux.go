//go:build amd64 || arm64

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroup is the control group (or, on v1, the pair of groups) a sandbox's
// processes run in, for a memory cap and a process count that cover the
// whole tree.
type cgroup struct {
	v2     bool
	memory string // directory holding the memory files; "" when not capped here
	pids   string // directory holding pids.max; "" when not capped here
	dirs   []string
}

// cgroupMounts finds where this process's cgroups live: the v2 directory and
// each v1 controller's directory.
func cgroupMounts() (v2 string, v1 map[string]string, err error) {
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", nil, err
	}
	paths := map[string]string{} // controller ("" for v2) -> path within its hierarchy
	for _, line := range strings.Split(strings.TrimSpace(string(own)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			paths[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			paths[c] = parts[2]
		}
	}
	info, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", nil, err
	}
	defer info.Close()
	v1 = map[string]string{}
	sc := bufio.NewScanner(info)
	for sc.Scan() {
		// id parent major:minor root mountpoint options... - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 {
			continue
		}
		mnt, root := f[4], f[3]
		switch g[0] {
		case "cgroup2":
			if p, ok := paths[""]; ok {
				v2 = filepath.Join(mnt, strings.TrimPrefix(p, root))
			}
		case "cgroup":
			for _, c := range strings.Split(g[2], ",") {
				if p, ok := paths[c]; ok && (c == "memory" || c == "pids") {
					v1[c] = filepath.Join(mnt, strings.TrimPrefix(p, root))
				}
			}
		}
	}
	return v2, v1, sc.Err()
}

// newCgroup creates a group for one sandbox with the memory and pids limits
// set. It returns a nil cgroup and the reason when this host offers no
// controller it can use; the caller falls back to rlimits and says so.
func newCgroup(id string, lim Limits) (*cgroup, error) {
	if lim.Memory == 0 && lim.Pids == 0 {
		return nil, nil
	}
	cg, err := createCgroup(id)
	if err != nil {
		return nil, err
	}
	if err := cg.limit(lim); err != nil {
		cg.remove()
		return nil, err
	}
	return cg, nil
}

// createCgroup creates a group for one sandbox with no limits yet: the v2
// group where v2 has the memory controller, else a v1 group in the memory
// and in the pids hierarchies, each where there is one.
func createCgroup(id string) (*cgroup, error) {
	v2, v1, err := cgroupMounts()
	if err != nil {
		return nil, fmt.Errorf("read this process's cgroups: %w", err)
	}
	name := "warden-" + id
	if v2 != "" && hasController(v2, "memory") {
		dir := filepath.Join(v2, name)
		if err := os.Mkdir(dir, 0o755); err == nil {
			return &cgroup{v2: true, memory: dir, pids: dir, dirs: []string{dir}}, nil
		}
	}
	cg := &cgroup{}
	if base, ok := v1["memory"]; ok {
		dir := filepath.Join(base, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create a memory cgroup: %w", err)
		}
		cg.dirs, cg.memory = append(cg.dirs, dir), dir
	}
	if base, ok := v1["pids"]; ok {
		dir := filepath.Join(base, name)
		if err := os.Mkdir(dir, 0o755); err == nil {
			cg.dirs, cg.pids = append(cg.dirs, dir), dir
		}
	}
	return cg, nil
}

// limit sets lim on the group; a memory limit needs a memory controller (a
// pids limit is applied where there is a pids controller).
func (cg *cgroup) limit(lim Limits) error {
	if lim.Memory > 0 && cg.memory == "" {
		return errors.New("no memory cgroup controller is available to this process")
	}
	return cg.setLimits(lim)
}

func hasController(dir, c string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	return err == nil && strings.Contains(" "+string(b)+" ", " "+c+" ")
}

func (cg *cgroup) setLimits(lim Limits) error {
	write := func(dir, file string, v int64, optional bool) error {
		err := os.WriteFile(filepath.Join(dir, file), []byte(strconv.FormatInt(v, 10)), 0)
		if err != nil && !(optional && errors.Is(err, os.ErrNotExist)) {
			return fmt.Errorf("set %s: %w", file, err)
		}
		return nil
	}
	if cg.memory != "" && lim.Memory > 0 {
		if cg.v2 {
			if err := write(cg.memory, "memory.max", lim.Memory, false); err != nil {
				return err
			}
			if err := write(cg.memory, "memory.swap.max", 0, true); err != nil {
				return err
			}
		} else {
			if err := write(cg.memory, "memory.limit_in_bytes", lim.Memory, false); err != nil {
				return err
			}
			// Without swap accounting memsw is absent and swap is not
			// charged; with it, memory plus swap gets the same cap.
			if err := write(cg.memory, "memory.memsw.limit_in_bytes", lim.Memory, true); err != nil {
				return err
			}
		}
	}
	if cg.pids != "" && lim.Pids > 0 {
		if err := write(cg.pids, "pids.max", int64(lim.Pids), false); err != nil {
			return err
		}
	}
	return nil
}

// add moves a process into every group.
func (cg *cgroup) add(pid int) error {
	for _, d := range cg.dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("move the sandbox into its cgroup: %w", err)
		}
	}
	return nil
}

// capsPids reports whether the group caps the number of processes.
func (cg *cgroup) capsPids() bool { return cg != nil && cg.pids != "" }

// capsMemory reports whether the group caps memory.
func (cg *cgroup) capsMemory() bool { return cg != nil && cg.memory != "" }

// oomKills counts the processes the memory cap killed.
func (cg *cgroup) oomKills() int {
	if !cg.capsMemory() {
		return 0
	}
	file := "memory.oom_control"
	if cg.v2 {
		file = "memory.events"
	}
	b, err := os.ReadFile(filepath.Join(cg.memory, file))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// remove kills whatever is left in the groups and deletes them.
func (cg *cgroup) remove() {
	if cg == nil {
		return
	}
	for _, d := range cg.dirs {
		for range 50 {
			b, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
			pids := strings.Fields(string(b))
			for _, p := range pids {
				if pid, err := strconv.Atoi(p); err == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			if err := os.Remove(d); err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
}
