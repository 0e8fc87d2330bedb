// Package sandbox runs commands inside isolation the kernel enforces.
//
// A Spec says how a command is isolated: a Mode (off, light, standard, max),
// the paths it may read and write, the paths it must never read, its network,
// its limits (memory, CPU, wall time, processes, output, file size) and which
// credential-like environment variables it may keep. An Engine runs a Command
// under a Spec and reports how it ended in a Result, naming the limit that
// killed it when one did.
//
// The native engine (Linux) uses the kernel directly, with no external
// programs. The process that runs a command re-executes its own binary as a
// small init: in standard and max modes the init is pid 1 of new user,
// mount, pid, network, ipc and uts namespaces, mounts a fresh /proc and a
// private /tmp, masks denied paths (and the other names of denied files
// that hard links give them where the command can read), and starts the
// command as its child through a second stage. The stage runs as the
// caller's own uid and gid (a nested user namespace maps them onto the
// init's root), and on the thread that calls execve applies Landlock
// (read-only and read-write roots; nothing else readable or writable),
// drops every capability, sets no_new_privs and rlimits, and loads a
// seccomp filter (foreign architectures killed; sockets only of the
// families on its list: IPv4 and IPv6 (not in light mode), netlink for
// routing and socket diagnostics, Unix only with Spec.UnixSockets, any
// other an unsupported family; io_uring, ptrace, mount, keyctl, bpf and
// namespace calls refused; process creation refused under NoSpawn). Memory
// and process counts are capped by a cgroup (v2, else v1) where one can be
// created, else by rlimits, and the Result says so. When the command ends,
// the init exits, and the kernel kills everything left in its pid
// namespace.
//
// Where the kernel lacks a feature the spec needs, the engine runs with what
// it has and lists what is missing in Result.Warnings, or refuses when
// Spec.Strict is set. Inside another sandbox (Codex's: no capabilities,
// no_new_privs, its own seccomp filter) namespaces are refused, so the
// command runs in light mode, with Landlock and seccomp stacked on the
// outer sandbox's, and the warnings say so.
package sandbox
