package sandbox

import (
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"time"
)

// Mode is how much isolation a command runs under. The zero value is not a
// mode: a Spec must name one.
type Mode string

// Modes, weakest first.
const (
	// ModeOff runs the command with no isolation at all. It is still
	// audited, and only a policy file that says so explicitly allows it.
	ModeOff Mode = "off"
	// ModeLight restricts the command without namespaces (for hosts where
	// user namespaces are unavailable): Landlock, seccomp, rlimits and a
	// scrubbed environment.
	ModeLight Mode = "light"
	// ModeStandard adds new user, mount, pid, net, ipc and uts namespaces,
	// a fresh /proc, a private /tmp and masks over denied paths.
	ModeStandard Mode = "standard"
	// ModeMax is standard with a read-only root, no process spawning and
	// the tightest limits.
	ModeMax Mode = "max"
)

// Modes lists every mode, weakest first.
var Modes = []Mode{ModeOff, ModeLight, ModeStandard, ModeMax}

// ParseMode returns the named mode, or an error naming the valid ones.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("%q is not a sandbox mode; want one of off, light, standard, max", s)
}

// rank orders modes by strength; an unknown mode ranks below off.
func (m Mode) rank() int {
	for i, x := range Modes {
		if x == m {
			return i
		}
	}
	return -1
}

// Namespaces reports whether the mode runs the command in its own
// namespaces.
func (m Mode) Namespaces() bool { return m == ModeStandard || m == ModeMax }

// Network is what a sandboxed command may reach. The zero value is NetNone.
type Network string

// Network modes.
const (
	// NetNone gives the command no network at all (in namespace modes, a
	// network namespace holding only its own loopback).
	NetNone Network = ""
	// NetProxy sends the command's traffic through warden's egress proxy,
	// which enforces the network policy on every connection.
	NetProxy Network = "proxy"
)

// Egress is the proxy a NetProxy sandbox's connections go to: Serve is
// given the listener on the sandbox's loopback address and returns when it
// is closed. *egress.Proxy is one.
type Egress interface {
	Serve(l net.Listener) error
}

// DirectEgress is an Egress that also serves clients that ignore the proxy
// variables (*egress.Proxy is one). A NetProxy sandbox whose Egress is one
// answers its name lookups itself (fakedns, at DNSAddr): each name gets an
// address of a range routed to the sandbox's loopback, and a connection to
// one on DirectPorts is served from the host for the name it stands for,
// judged by the same policy as the proxy's requests. Nothing else changes:
// an address no lookup gave still has no route.
type DirectEgress interface {
	Egress
	// ServeDirect serves tunnels, ServeDirectHTTP plain HTTP; names says
	// which name an address stands for.
	ServeDirect(l net.Listener, names func(netip.Addr) (string, bool)) error
	ServeDirectHTTP(l net.Listener, names func(netip.Addr) (string, bool)) error
}

// DNSAddr is where a DirectEgress sandbox's lookups go: /etc/resolv.conf
// names it, and the host answers on it.
const DNSAddr = "127.0.0.1:53"

// DirectPorts are the ports a DirectEgress sandbox's clients may reach on
// the addresses its lookups gave: HTTP and HTTPS.
var DirectPorts = []uint16{80, 443}

// ProxyAddr is where a NetProxy sandbox's command finds the proxy: a
// listener on the sandbox's own loopback, made by its init and served from
// the host. HTTP_PROXY, HTTPS_PROXY and ALL_PROXY point at it.
const ProxyAddr = "127.0.0.1:3128"

// ProxyEnv are the proxy variables a NetProxy command gets. Node (22.21,
// 24 and later) honours them in its http, https and fetch only when
// NODE_USE_ENV_PROXY is set.
func ProxyEnv() []string {
	url := "http://" + ProxyAddr
	var env []string
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"} {
		env = append(env, k+"="+url, strings.ToLower(k)+"="+url)
	}
	return append(env, "NODE_USE_ENV_PROXY=1")
}

// Signer is warden's signing endpoint as a sandbox sees it: Serve is given
// the listener on the sandbox's loopback address and returns when it is
// closed. What serves it is an http.Server carrying only the signing
// routes, never the rest of the daemon's API.
type Signer interface {
	Serve(l net.Listener) error
}

// SignerAddr is where a sandbox's command finds the signer: a listener on
// the sandbox's own loopback, made by its init and served from the host,
// like ProxyAddr.
const SignerAddr = "127.0.0.1:8553"

// SignerEnv are the variables that tell a command where the signer is and
// how to authenticate to it. token is the caller's agent-scoped token. They
// belong in Spec.Env: a Command's own environment is scrubbed, and WARDEN_
// variables are among those scrubbed.
func SignerEnv(token string) []string {
	return []string{"WARDEN_SIGNER_URL=http://" + SignerAddr, "WARDEN_SIGNER_TOKEN=" + token}
}

// Limits bound what a sandboxed command may consume. A zero field means no
// limit of that kind, except Wall, which Spec.Validate requires.
type Limits struct {
	Memory   int64         // bytes of memory (cgroup, else RLIMIT_AS)
	CPU      time.Duration // CPU time per process (RLIMIT_CPU)
	Wall     time.Duration // wall-clock time for the whole run
	Pids     int           // processes at once (cgroup pids, else RLIMIT_NPROC)
	Output   int64         // bytes of stdout, and separately of stderr
	FileSize int64         // largest file the command may write (RLIMIT_FSIZE)
	Files    int           // open file descriptors (RLIMIT_NOFILE)
	// Tmp bounds what the command's /tmp holds: the size of a private
	// /tmp's tmpfs (with Memory, the smaller), or for a session's /tmp
	// (Spec.Tmp, on disk) how far the sandbox's processes may grow it
	// before they are killed (LimitTmp). TmpShare, when set, caps a
	// session's /tmp instead at this percentage of what its disk has for
	// it as the sandbox starts: the space free there and what /tmp holds.
	Tmp      int64
	TmpShare int
}

// Spec is everything that decides how a command is isolated. Paths are
// absolute. The zero value is not runnable: Mode and Limits.Wall must be set.
type Spec struct {
	Mode Mode
	// Strict refuses to run when the kernel cannot give the isolation the
	// mode asks for, instead of running with less and saying so.
	Strict bool
	// Project is the directory the command works in; it is readable, and
	// writable only when ProjectWritable is set.
	Project         string
	ProjectWritable bool
	// Workspace is the directory the command may always write.
	Workspace string
	// ReadOnly and ReadWrite are further paths the command may read, or
	// read and write.
	ReadOnly, ReadWrite []string
	// EmptyDirsIn are directories beneath which the command may remove an
	// empty directory (rmdir) and do nothing else: the directory beside
	// the project that holds a linked worktree a line of git commands
	// removes (git worktree remove ../feature), which git removes last.
	EmptyDirsIn []string
	// Hidden are paths the command must not read even where they lie inside
	// a readable directory (the policy's denied paths).
	Hidden []string
	// Redacted are hidden files that read as this content instead of as
	// empty: a credential file's copy without its secret lines (~/.npmrc
	// keeps its registry and settings). Where the file cannot be masked
	// as given, it is hidden whole.
	Redacted map[string][]byte
	// Unreadable are directories ReadAll leaves out of its grant as a
	// whole (Landlock grants nothing in them, not even their listing).
	// Unlike a Hidden path, masked as it is when the sandbox is built, what
	// appears in one later stays unreadable too: warden's home, whose
	// database files come and go while a session's sandbox lives. Paths
	// granted by name inside one (the workspace, ReadWrite, ReadOnly, the
	// session's /tmp) are still granted.
	Unreadable []string
	// LinkRoots are the hidden trees whose files' other names (hard links
	// made earlier) are searched for and masked too: the credential stores.
	// Nil searches every hidden path, which for broad denied trees (/var)
	// costs milliseconds on every run. The system secrets are always
	// searched.
	LinkRoots []string
	// UserHome is the home of the user the command runs for. With ReadAll
	// it is readable even when it lies under the /tmp the sandbox replaces
	// (it is carried in, read-only, with its masks). Empty takes the
	// command's HOME.
	UserHome string
	// ReadAll makes the whole filesystem readable (the workspace profile),
	// except Hidden and the system secrets, which stay masked.
	ReadAll bool
	// Protected are paths inside writable directories that stay read-only
	// (a project's .git/config and .git/hooks, the agent hosts' settings).
	// One missing at the start, whose parent exists, is swept after the
	// run: what the command created there is moved to Quarantine (or
	// removed when that is empty), and Result.Warnings says so.
	Protected []string
	// NestedGit are paths inside a git directory (config, hooks/) that
	// stay read-only in every repository nested in a writable project
	// too: a clone inside it, vendored or a fixture, whose git git on the
	// host runs when the user (an editor, a shell prompt) enters it. The
	// sandbox finds them when it starts (nestedRepos), as Protected
	// otherwise.
	NestedGit []string
	// ModuleDirs are directories a Python program git runs on the host
	// imports its modules from first (its script's directory, its
	// sys.path[0]), where they lie in a writable directory and are not
	// protected whole (the top of the work tree, its git directory): a
	// module file or package the command adds there (selectors.py, a
	// NAME.so, NAME/__init__.py) would be imported in place of the one the
	// program or the standard library meant. What the command adds is
	// swept as a protected path is; what was there at the start stays.
	ModuleDirs []string
	Quarantine string
	// Notes say why the sandbox is narrower than its profile (a project
	// kept read-only, and what to change); the caller passes them on with
	// the run's result.
	Notes []string
	// Runs, when set, is a directory where a one-shot run registers its
	// init while it runs, so that the host can hold it (HoldRuns).
	Runs string
	// Tmp, when set, is a host directory mounted as the command's /tmp, so
	// that what one command of a session leaves there the next one finds.
	// Empty gives each run a fresh private /tmp.
	Tmp string
	// UnixSockets lets the command create AF_UNIX sockets (for its own
	// servers and helpers). The host's sockets stay out of reach: /run is
	// masked, /tmp is private and the network namespace has its own
	// abstract socket space. Without it, AF_UNIX sockets are refused.
	UnixSockets bool
	// Background, in a long-lived sandbox, lets what a command starts in
	// the background (a dev server) outlive it, until the sandbox stops; a
	// command killed by a limit still takes its process group along.
	Background bool
	// Session names who a long-lived sandbox's network requests are made
	// for (the agent session it serves), for its egress proxy.
	Session string
	// Idle stops a long-lived sandbox after this long without a command;
	// zero keeps it until it is stopped.
	Idle time.Duration
	Net  Network
	// AllowDomains are the domains the egress proxy lets the command reach
	// under NetProxy.
	AllowDomains []string
	// Egress serves the connections the command makes to its proxy address
	// under NetProxy: the sandbox's only way out.
	Egress Egress `json:"-"`
	// Signer serves the connections the command makes to SignerAddr; nil
	// gives the command no signer. It needs a network namespace, and works
	// under either network: under NetNone the signer is the only thing
	// outside the sandbox the command can reach.
	Signer Signer `json:"-"`
	// Env is added to the command's environment after scrubbing (secret
	// placeholders, the proxy's certificate bundle, SignerEnv).
	Env    []string
	Limits Limits
	// NoSpawn forbids creating processes (threads are still allowed).
	NoSpawn bool
	// PassEnv names environment variables that survive scrubbing.
	PassEnv []string
}

// Validate reports the first thing that makes the spec unrunnable.
func (s *Spec) Validate() error {
	switch {
	case s.Mode.rank() < 0:
		return fmt.Errorf("sandbox mode %q is not one of off, light, standard, max", s.Mode)
	case s.Limits.Wall <= 0:
		return fmt.Errorf("the sandbox needs a wall-clock timeout greater than zero")
	case s.Net != NetNone && s.Net != NetProxy:
		return fmt.Errorf("network %q is not one of none, proxy", s.Net)
	case s.Net == NetProxy && s.Egress == nil:
		return fmt.Errorf("network proxy needs an egress proxy to serve the sandbox")
	case s.Net == NetProxy && !s.Mode.Namespaces():
		return fmt.Errorf("network proxy needs a network namespace, so mode standard or max (mode %s has none)", s.Mode)
	case s.Signer != nil && !s.Mode.Namespaces():
		return fmt.Errorf("the signer needs a network namespace, so mode standard or max (mode %s has none)", s.Mode)
	case s.Limits.Memory < 0 || s.Limits.CPU < 0 || s.Limits.Pids < 0 || s.Limits.Output < 0 || s.Limits.FileSize < 0 || s.Limits.Files < 0 || s.Limits.Tmp < 0 || s.Limits.TmpShare < 0:
		return fmt.Errorf("sandbox limits cannot be negative")
	case s.Limits.TmpShare > 100:
		return fmt.Errorf("the /tmp cap's share of the disk is %d%%; it can be at most 100%%", s.Limits.TmpShare)
	}
	return nil
}

// Command is one program to run inside a sandbox. Args[0] is looked up in
// the PATH of Env when it has no slash. A nil Stdin reads nothing; nil
// Stdout or Stderr discard.
type Command struct {
	Args   []string
	Dir    string
	Env    []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Alone, in a long-lived sandbox (Manager.Exec), runs the command as a
	// one-shot run: no other alone command runs meanwhile, it finds none
	// of what earlier commands left (their processes, files in /tmp and
	// /dev/shm, IPC objects), and whatever it starts is killed when it
	// ends.
	Alone bool
}

// Limit names the limit that ended a run.
type Limit string

// Limits that can end a run. The zero value means none did.
const (
	LimitNone     Limit = ""
	LimitWall     Limit = "timeout"
	LimitCPU      Limit = "cpu"
	LimitMemory   Limit = "memory"
	LimitOutput   Limit = "output"
	LimitFileSize Limit = "file-size"
	LimitSyscall  Limit = "syscall"
	LimitTmp      Limit = "tmp-size"
)

// Describe says in words what the limit did, for stderr and the audit log.
func (l Limit) Describe(lim Limits) string {
	switch l {
	case LimitWall:
		return fmt.Sprintf("killed after the wall-clock timeout of %s", lim.Wall)
	case LimitCPU:
		return fmt.Sprintf("killed after %s of CPU time (the cpu limit)", lim.CPU)
	case LimitMemory:
		return fmt.Sprintf("killed for using more than the memory limit of %s", FormatBytes(lim.Memory))
	case LimitOutput:
		return fmt.Sprintf("killed for writing more than the output limit of %s", FormatBytes(lim.Output))
	case LimitFileSize:
		return fmt.Sprintf("killed for writing a file larger than %s", FormatBytes(lim.FileSize))
	case LimitSyscall:
		return "killed for making a system call the sandbox forbids (a foreign-architecture or x32 call)"
	case LimitTmp:
		cap := FormatBytes(lim.Tmp)
		if lim.TmpShare > 0 {
			cap = fmt.Sprintf("%d%% of what its disk had for it as the sandbox started", lim.TmpShare)
		}
		return fmt.Sprintf("killed, with everything the session's sandbox ran, for growing the session's /tmp past its cap of %s (the profile's tmp_size): remove what it does not need from /tmp", cap)
	}
	return ""
}

// Result is how a run ended.
type Result struct {
	// ExitCode is the command's exit status, or 128 plus the signal that
	// killed it, as a shell reports it.
	ExitCode int
	// Signal is the signal that killed the command, or 0.
	Signal int
	// Limit is the limit that ended the run, if one did.
	Limit Limit
	// Mode is the isolation the command actually ran under.
	Mode Mode
	// Warnings say where the command ran with less isolation than the spec
	// asked for, and why.
	Warnings []string
	Wall     time.Duration
	CPU      time.Duration
}
