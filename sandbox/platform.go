package sandbox

import (
	"fmt"
	"strings"
)

// Platform is what the host's kernel offers the sandbox engine.
type Platform struct {
	Engine              string   `json:"engine"`
	UserNamespaces      bool     `json:"user_namespaces"`
	UserNamespacesError string   `json:"user_namespaces_error,omitempty"`
	LandlockABI         int      `json:"landlock_abi"`
	Seccomp             bool     `json:"seccomp"`
	CgroupVersion       int      `json:"cgroup_version"`
	CgroupControllers   []string `json:"cgroup_controllers,omitempty"`
	CgroupWritable      bool     `json:"cgroup_writable"`
	CgroupError         string   `json:"cgroup_error,omitempty"`
	// OuterSandbox says what shows that another sandbox (Codex's, a
	// container's) already holds warden; empty when nothing does. Inside
	// one, Landlock and seccomp stack on the outer sandbox's, and commands
	// run in light mode where it refuses namespaces.
	OuterSandbox string `json:"outer_sandbox,omitempty"`
	// Modes are the modes that run here with full isolation, weakest first.
	Modes []Mode `json:"modes"`
}

// Missing says in words what keeps a mode from running with everything it
// promises here, or "" when nothing does.
func (p Platform) Missing(m Mode) string {
	var miss []string
	if m == ModeOff {
		return ""
	}
	if p.LandlockABI == 0 {
		miss = append(miss, "Landlock (Linux 5.13+ with landlock in the lsm= list)")
	}
	if !p.Seccomp {
		miss = append(miss, "seccomp")
	}
	if m.Namespaces() && !p.UserNamespaces {
		miss = append(miss, fmt.Sprintf("user namespaces (%s)", p.UserNamespacesError))
	}
	if !p.CgroupWritable {
		miss = append(miss, "a writable memory cgroup (memory falls back to RLIMIT_AS)")
	}
	return strings.Join(miss, "; ")
}
