//go:build amd64 || arm64

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// outerSandbox says what shows that another sandbox already holds this
// process (Codex's, a container's): no_new_privs, a seccomp filter, or a
// root without capabilities. It is "" when none of them shows.
func outerSandbox() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return ""
	}
	var signs []string
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		switch v = strings.TrimSpace(v); k {
		case "NoNewPrivs":
			if v == "1" {
				signs = append(signs, "no_new_privs")
			}
		case "Seccomp":
			if v != "0" {
				signs = append(signs, "a seccomp filter")
			}
		case "CapBnd":
			if os.Geteuid() == 0 && strings.Trim(v, "0") == "" {
				signs = append(signs, "root without capabilities")
			}
		}
	}
	return strings.Join(signs, ", ")
}

func seccompAvailable() error {
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("the kernel has no seccomp (%v), so the sandbox cannot filter system calls; no mode but off runs here", err)
	}
	return nil
}

// Supported reports why no sandbox mode but off can run here (no Landlock
// or no seccomp), or nil. It makes two system calls, so it is cheap enough
// to ask before every hook answer.
func Supported() error {
	if LandlockABI() == 0 {
		return fmt.Errorf("the kernel has no Landlock (it needs Linux 5.13 or later with lsm=landlock)")
	}
	return seccompAvailable()
}

// Probe reports what this kernel offers the native engine. It starts one
// short-lived process in new namespaces to find out whether user namespaces
// really work here (sysctls alone do not tell: AppArmor and container
// runtimes refuse them in other ways).
func Probe() Platform {
	p := Platform{Engine: "native", LandlockABI: LandlockABI(), Seccomp: seccompAvailable() == nil, OuterSandbox: outerSandbox()}
	// Started the way an init is (initAttr): the same namespaces, mapping
	// and ambient capabilities.
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = initAttr(ModeStandard)
	if err := cmd.Run(); err != nil {
		p.UserNamespacesError = err.Error()
	} else {
		p.UserNamespaces = true
	}
	v2, v1, err := cgroupMounts()
	switch {
	case err != nil:
		p.CgroupError = err.Error()
	case v2 != "" && hasController(v2, "memory"):
		p.CgroupVersion = 2
		b, _ := os.ReadFile(v2 + "/cgroup.controllers")
		p.CgroupControllers = strings.Fields(string(b))
	case len(v1) > 0:
		p.CgroupVersion = 1
		for c := range v1 {
			p.CgroupControllers = append(p.CgroupControllers, c)
		}
		sort.Strings(p.CgroupControllers)
	}
	if p.CgroupVersion != 0 {
		cg, err := newCgroup("probe-"+newID(), Limits{Memory: 1 << 30, Pids: 1024})
		if err != nil {
			p.CgroupError = err.Error()
		} else {
			p.CgroupWritable = cg.capsMemory()
			cg.remove()
		}
	}
	p.Modes = p.modes()
	return p
}

func (p *Platform) modes() []Mode {
	modes := []Mode{ModeOff}
	if p.LandlockABI == 0 || !p.Seccomp {
		return modes
	}
	modes = append(modes, ModeLight)
	if p.UserNamespaces {
		modes = append(modes, ModeStandard, ModeMax)
	}
	return modes
}
