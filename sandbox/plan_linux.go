//go:build amd64 || arm64

package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// plan is a Spec and Command compiled into concrete kernel settings. The
// host compiles it and sends it to the init, which passes it on to the
// stage; neither of them makes a policy choice of its own.
type plan struct {
	// Serve makes the init a long-lived sandbox's: it runs no command of
	// its own but serves exec requests on its control socket.
	Serve bool
	// KeepBackground leaves what an exec'd command left running in its
	// process group alive when it exits (Spec.Background).
	KeepBackground bool
	Namespaces     bool
	ReadOnlyRoot   bool
	PrivateTmp     bool
	TmpSize        int64
	Masks          []string
	// Redacted maps masks that read as this content instead of as empty
	// (Spec.Redacted).
	Redacted map[string]string `json:",omitempty"`
	// TmpDir, when set, is the host directory mounted as /tmp instead of
	// an empty tmpfs (a session's /tmp, kept across its commands).
	TmpDir string
	// TmpCap is how far the sandbox's processes may grow TmpDir before
	// they are killed (Limits.Tmp; watchTmp), or TmpShare the percentage
	// of its disk's free space and what it holds (Limits.TmpShare).
	TmpCap   int64 `json:",omitempty"`
	TmpShare int   `json:",omitempty"`
	// Shm mounts a private tmpfs of TmpSize on /dev/shm.
	Shm bool
	// VarTmp mounts the private /tmp on /var/tmp too (where that is a
	// directory): mktemp -p /var/tmp writes the command's own /tmp.
	VarTmp bool
	// Pty mounts a devpts of the sandbox's own on /dev/pts, its ptmx on
	// /dev/ptmx: the command's own pseudo-terminals (script, tmux, a test
	// that drives a CLI through one), none of the host's.
	Pty bool
	// Protected are paths inside writable directories made read-only by
	// a bind mount of their own.
	Protected []string
	// Pinned are the directories on the way to a protected path, each
	// bind-mounted onto itself (still writable) before the protected
	// mounts, so that it cannot be renamed or removed.
	Pinned []string `json:"pinned,omitempty"`
	// Sweep are protected paths missing at the start, moved out of the
	// project after the run if the command created them. The host does
	// this; the init never sees it.
	Sweep []string `json:"-"`
	// Keep are granted paths under /tmp, carried over into the private
	// /tmp so that the command still sees them.
	Keep     []keep
	Writable []string // paths kept writable under ReadOnlyRoot
	Landlock landlockPlan
	Seccomp  seccompPlan
	Rlimits  []rlimit
	// OOMScoreAdj raises each command's OOM score so that the memory cap's
	// kill falls on a command before the init or launcher (oom_linux.go).
	OOMScoreAdj int `json:",omitempty"`
	Args        []string
	Dir         string
	Env         []string
	// Listen are the addresses on the sandbox's loopback where the host
	// serves something (ProxyAddr for the egress proxy, SignerAddr for the
	// signer). The init makes a listener on each and sends them all, in
	// this order and in one message, to the host over the socket ListenFD.
	Listen   []string
	ListenFD int
	// StdinPassed says the command's standard input comes over ListenFD
	// first, as one descriptor (an init started before its run was known,
	// earlyInit.hand); without it the command has the init's own fd 0.
	StdinPassed bool `json:",omitempty"`
}

// keep is a path carried into the private /tmp.
type keep struct {
	Path     string
	Dir      bool
	Writable bool
}

type rlimit struct {
	Resource int
	Cur, Max uint64
}

// outcome is what the init reports back on its result pipe.
type outcome struct {
	// Ready says a serving init has built the sandbox and is listening.
	Ready bool `json:",omitempty"`
	// Setup is set when the sandbox could not be built; the command never
	// ran.
	Setup string `json:",omitempty"`
	// ExecErrno is set when the command could not be started (not found,
	// not executable, not readable inside the sandbox).
	ExecErrno int    `json:",omitempty"`
	ExecPath  string `json:",omitempty"`
	ExecDir   bool   `json:",omitempty"` // ExecPath is the directory the command could not start in
	Exit      int
	Signal    int
	CPU       int64 // nanoseconds of user and system time
	// TmpOver says the command was killed for growing the session's /tmp
	// past its cap (LimitTmp).
	TmpOver bool `json:",omitempty"`
}

// Arguments the binary is re-executed with; Main recognises them.
const (
	initArg0  = "warden-sandbox-init"
	stageArg0 = "warden-sandbox-stage"
	// initNamespacesArg follows initArg0 for an init started in new
	// namespaces.
	initNamespacesArg = "namespaces"
	// initEarlyArg follows initNamespacesArg for an init started before
	// its run (earlyInit) whose run will likely need a stage (a profile
	// that forbids new processes or caps the CPU: launcherFits): it starts
	// its stage as soon as it is in its cgroup, before its plan comes.
	initEarlyArg = "early"
	// initEarlyThreadArg is initEarlyArg for a run that will likely start
	// its command from the init's own restricted thread (the workspace
	// profile): no stage is started before the plan, and the init takes
	// the command's standard input itself. A plan that needs a stage after
	// all gets one then.
	initEarlyThreadArg = "early-thread"
)

// Main runs the sandbox's init or stage when this process was started as
// one, and never returns then; otherwise it returns at once. Every binary
// that runs sandboxes (warden, and test binaries that use this package)
// must call it first thing in main or TestMain.
func Main() {
	switch os.Args[0] {
	case initArg0:
		os.Exit(runInit())
	case stageArg0:
		runStage()
	case launcherArg0:
		runLauncher()
	case spawnerArg0:
		runSpawner()
	}
}

// Fixed file descriptors of the init and the stage: the plan arrives on 3,
// the report leaves on 4.
const (
	fdPlan   = 3
	fdReport = 4
)

// readPlan reads this process's plan from fdPlan, to its end.
func readPlan() (*plan, error) {
	p, _, err := readPlanBytes()
	return p, err
}

// warmPlanDecoder decodes a plan once, so that the run's own plan decodes
// without encoding/json building its caches for these types first (about
// a quarter of a millisecond in a fresh process): an init or stage started
// before its plan does it while it waits.
func warmPlanDecoder() {
	b, err := json.Marshal(&plan{Masks: []string{"/"}, Keep: []keep{{Path: "/"}}, Rlimits: []rlimit{{}}, Args: []string{"/"}, Env: []string{"A=b"}})
	if err == nil {
		var p plan
		_ = json.Unmarshal(b, &p)
	}
}

// readPlanBytes is readPlan that also returns the plan as it came, for an
// init to pass on to its stage unchanged.
func readPlanBytes() (*plan, []byte, error) {
	f := os.NewFile(fdPlan, "plan")
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<24))
	if err != nil {
		return nil, nil, fmt.Errorf("read the sandbox plan: %w", err)
	}
	var p plan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, nil, fmt.Errorf("read the sandbox plan: %w", err)
	}
	return &p, b, nil
}
