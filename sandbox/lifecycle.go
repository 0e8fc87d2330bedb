package sandbox

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrSelfRestart is Manager.Ensure's answer when the sandbox it would start
// anew is the one the calling process supervises (Manager.Self): stopping
// it would stop the caller, so the restart is left to another process.
var ErrSelfRestart = errors.New("the sandbox must start anew, and this process is its supervisor")

// State is where a long-lived sandbox is in its lifecycle. The zero value is
// StateUninitialized.
type State string

// Lifecycle states. A sandbox starts uninitialized, is initializing while
// its init comes up, is ready once a health check passes, degraded while
// health checks fail, recovering while it is restarted, and stopping, then
// stopped, when it is taken down.
const (
	StateUninitialized State = ""
	StateInitializing  State = "initializing"
	StateReady         State = "ready"
	StateDegraded      State = "degraded"
	StateRecovering    State = "recovering"
	StateStopping      State = "stopping"
	StateStopped       State = "stopped"
)

// String names the state; the zero value reads "uninitialized".
func (s State) String() string {
	if s == StateUninitialized {
		return "uninitialized"
	}
	return string(s)
}

// transitions lists, for each state, the states it may move to.
var transitions = map[State][]State{
	StateUninitialized: {StateInitializing},
	StateInitializing:  {StateReady, StateDegraded, StateStopping},
	StateReady:         {StateDegraded, StateRecovering, StateStopping},
	StateDegraded:      {StateReady, StateRecovering, StateStopping},
	StateRecovering:    {StateReady, StateDegraded, StateStopping},
	StateStopping:      {StateStopped},
	StateStopped:       {StateInitializing},
}

// CanBecome reports whether a sandbox in state s may move to t.
func (s State) CanBecome(t State) bool { return slices.Contains(transitions[s], t) }

// Event is one lifecycle transition, as the event log and the audit log
// record it.
type Event struct {
	Time   time.Time `json:"time"`
	Name   string    `json:"name"`
	From   State     `json:"from"`
	To     State     `json:"to"`
	Reason string    `json:"reason"`
}

// Info is what `warden sandbox status` shows of a long-lived sandbox.
type Info struct {
	Name       string    `json:"name"`
	State      State     `json:"state"`
	Mode       Mode      `json:"mode"`
	Profile    string    `json:"profile,omitempty"`
	Supervisor int       `json:"supervisor_pid,omitempty"`
	Init       int       `json:"init_pid,omitempty"`
	Since      time.Time `json:"since"`
	LastCheck  time.Time `json:"last_check,omitzero"`
	Health     string    `json:"health,omitempty"`
	Warnings   []string  `json:"warnings,omitempty"`
	// Tmp is the sandbox's temporary directory in light mode (standard and
	// max have a private /tmp).
	Tmp string `json:"tmp,omitempty"`
	// MemoryCgroup is the directory of the sandbox's memory cgroup, so a
	// caller can tell an OOM kill from another SIGKILL.
	MemoryCgroup string `json:"memory_cgroup,omitempty"`
	CgroupV2     bool   `json:"cgroup_v2,omitempty"`
	Spec         Spec   `json:"spec"`
	// Sweep are the protected paths that were missing when the sandbox
	// started: after each command, what it created there is moved out.
	Sweep []string `json:"sweep,omitempty"`
}

// ValidName reports what is wrong with a sandbox name, or nil. Names are
// directory names under warden's run directory.
func ValidName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("sandbox name %q must be 1 to 64 characters", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') || name[0] == '.' {
			return fmt.Errorf("sandbox name %q may hold letters, digits, '-', '_' and '.' only, and not start with '.'", name)
		}
	}
	return nil
}
