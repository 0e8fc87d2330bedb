//go:build amd64 || arm64

package sandbox

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSeccompFilterShape checks what the kernel's verifier would: every
// jump lands inside the program and every path ends in a return, and the
// program starts with the architecture check that stops the i386 bypass.
func TestSeccompFilterShape(t *testing.T) {
	for _, p := range []seccompPlan{{}, {NoSpawn: true}, {BlockInet: true}, {NoSpawn: true, BlockInet: true}, {AllowUnix: true}, {NoSpawn: true, BlockInet: true, AllowUnix: true}} {
		prog := p.filter()
		if len(prog) > 4096 {
			t.Fatalf("%+v: %d instructions, more than the kernel accepts", p, len(prog))
		}
		if prog[0].K != offArch {
			t.Errorf("%+v: the filter does not start with the architecture: %+v", p, prog[:1])
		}
		for _, arch := range []uint32{nativeArch + 1, unix.AUDIT_ARCH_ARM, unix.AUDIT_ARCH_AARCH64, unix.AUDIT_ARCH_X86_64, unix.AUDIT_ARCH_I386} {
			if arch == nativeArch || arch == compatArch {
				continue
			}
			if got := run(t, prog, arch, 20); got != retKill {
				t.Errorf("%+v: a call through the foreign architecture %#x = %#x, want the process killed", p, arch, got)
			}
		}
		if got := run(t, prog, nativeArch, x32Bit|unix.SYS_GETPID); x32Bit != 0 && got != retKill {
			t.Errorf("%+v: an x32 call = %#x, want the process killed", p, got)
		}
		for i, ins := range prog {
			if ins.Code&0x07 == unix.BPF_JMP && ins.Code != unix.BPF_JMP|unix.BPF_JA {
				if i+1+int(ins.Jt) >= len(prog) || i+1+int(ins.Jf) >= len(prog) {
					t.Errorf("%+v: instruction %d jumps past the end", p, i)
				}
			}
		}
		if last := prog[len(prog)-1]; last.Code != unix.BPF_RET|unix.BPF_K || last.K != retAllow {
			t.Errorf("%+v: the program does not end by allowing: %+v", p, last)
		}
	}
}

// run evaluates the filter on one system call the way the kernel would, and
// returns the action it decides.
func run(t *testing.T, prog []unix.SockFilter, arch uint32, nr int, args ...uint64) uint32 {
	t.Helper()
	var data [64]byte
	binary.LittleEndian.PutUint32(data[offNr:], uint32(nr))
	binary.LittleEndian.PutUint32(data[offArch:], arch)
	for i, a := range args {
		binary.LittleEndian.PutUint64(data[offArg0+8*i:], a)
	}
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		ins := prog[pc]
		switch ins.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			acc = binary.LittleEndian.Uint32(data[ins.K:])
		case unix.BPF_RET | unix.BPF_K:
			return ins.K
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			acc &= ins.K
		case unix.BPF_JMP | unix.BPF_JA:
			pc += int(ins.K)
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			var hit bool
			switch ins.Code &^ (unix.BPF_JMP | unix.BPF_K) {
			case unix.BPF_JEQ:
				hit = acc == ins.K
			case unix.BPF_JGE:
				hit = acc >= ins.K
			case unix.BPF_JSET:
				hit = acc&ins.K != 0
			}
			if hit {
				pc += int(ins.Jt)
			} else {
				pc += int(ins.Jf)
			}
		default:
			t.Fatalf("instruction %d has code %#x, which this evaluator does not know", pc, ins.Code)
		}
	}
	t.Fatal("the filter ran off its end")
	return 0
}

// TestSeccompSocketAllowList evaluates the filter on socket and socketpair
// calls: families by list, netlink by protocol, and high bits of the int
// arguments ignored as the kernel ignores them.
func TestSeccompSocketAllowList(t *testing.T) {
	eperm, eacces := retErrno(unix.EPERM), retErrno(unix.EACCES)
	eafnosupport, eprotonosupport := retErrno(unix.EAFNOSUPPORT), retErrno(unix.EPROTONOSUPPORT)
	cases := []struct {
		name string
		plan seccompPlan
		nr   int
		args []uint64
		want uint32
	}{
		{"inet", seccompPlan{}, unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_STREAM, 0}, retAllow},
		{"inet6", seccompPlan{}, unix.SYS_SOCKET, []uint64{unix.AF_INET6, unix.SOCK_DGRAM, 0}, retAllow},
		{"inet blocked", seccompPlan{BlockInet: true}, unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_STREAM, 0}, eacces},
		{"inet6 blocked", seccompPlan{BlockInet: true}, unix.SYS_SOCKET, []uint64{unix.AF_INET6, unix.SOCK_STREAM, 0}, eacces},
		{"unix refused", seccompPlan{}, unix.SYS_SOCKET, []uint64{unix.AF_UNIX, unix.SOCK_STREAM, 0}, eperm},
		{"unix allowed", seccompPlan{AllowUnix: true}, unix.SYS_SOCKET, []uint64{unix.AF_UNIX, unix.SOCK_STREAM, 0}, retAllow},
		{"netlink route", seccompPlan{}, unix.SYS_SOCKET, []uint64{unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE}, retAllow},
		{"netlink sock diag", seccompPlan{BlockInet: true}, unix.SYS_SOCKET, []uint64{unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_SOCK_DIAG}, retAllow},
		{"netlink audit", seccompPlan{}, unix.SYS_SOCKET, []uint64{unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT}, eprotonosupport},
		{"netlink uevent", seccompPlan{AllowUnix: true}, unix.SYS_SOCKET, []uint64{unix.AF_NETLINK, unix.SOCK_DGRAM, unix.NETLINK_KOBJECT_UEVENT}, eprotonosupport},
		{"netlink route with high bits", seccompPlan{}, unix.SYS_SOCKET, []uint64{unix.AF_NETLINK | 1<<32, unix.SOCK_RAW, unix.NETLINK_AUDIT | 1<<40}, eprotonosupport},
		{"vsock", seccompPlan{}, unix.SYS_SOCKET, []uint64{unix.AF_VSOCK, unix.SOCK_STREAM, 0}, eafnosupport},
		{"alg", seccompPlan{AllowUnix: true}, unix.SYS_SOCKET, []uint64{unix.AF_ALG, unix.SOCK_SEQPACKET, 0}, eafnosupport},
		{"packet", seccompPlan{}, unix.SYS_SOCKET, []uint64{unix.AF_PACKET, unix.SOCK_RAW, 0x0300}, eafnosupport},
		{"bluetooth", seccompPlan{}, unix.SYS_SOCKET, []uint64{unix.AF_BLUETOOTH, unix.SOCK_STREAM, 0}, eafnosupport},
		{"xdp", seccompPlan{}, unix.SYS_SOCKET, []uint64{unix.AF_XDP, unix.SOCK_RAW, 0}, eafnosupport},
		{"unspec", seccompPlan{}, unix.SYS_SOCKET, []uint64{unix.AF_UNSPEC, unix.SOCK_STREAM, 0}, eafnosupport},
		{"vsock with high bits set", seccompPlan{}, unix.SYS_SOCKET, []uint64{unix.AF_VSOCK | 1<<32, unix.SOCK_STREAM, 0}, eafnosupport},
		{"socketpair unix", seccompPlan{NoSpawn: true, BlockInet: true}, unix.SYS_SOCKETPAIR, []uint64{unix.AF_UNIX, unix.SOCK_STREAM, 0}, retAllow},
		{"socketpair netlink", seccompPlan{}, unix.SYS_SOCKETPAIR, []uint64{unix.AF_NETLINK, unix.SOCK_RAW, 0}, eafnosupport},
		{"socketpair inet", seccompPlan{AllowUnix: true}, unix.SYS_SOCKETPAIR, []uint64{unix.AF_INET, unix.SOCK_STREAM, 0}, eafnosupport},
		{"other calls pass", seccompPlan{}, unix.SYS_GETPID, nil, retAllow},
		// ptrace: a child asks its parent to trace it, and the parent works
		// on it.
		{"ptrace traceme", seccompPlan{AllowUnix: true}, unix.SYS_PTRACE, []uint64{unix.PTRACE_TRACEME, 0, 0}, retAllow},
		{"ptrace traceme no spawn", seccompPlan{NoSpawn: true, BlockInet: true}, unix.SYS_PTRACE, []uint64{unix.PTRACE_TRACEME, 0, 0}, retAllow},
		{"ptrace cont", seccompPlan{}, unix.SYS_PTRACE, []uint64{unix.PTRACE_CONT, 42, 0, 0}, retAllow},
		{"ptrace peekdata", seccompPlan{}, unix.SYS_PTRACE, []uint64{unix.PTRACE_PEEKDATA, 42, 0x1000, 0}, retAllow},
		// Attach and seize pass the filter: Landlock bounds what they reach.
		{"ptrace attach", seccompPlan{AllowUnix: true}, unix.SYS_PTRACE, []uint64{unix.PTRACE_ATTACH, 1, 0, 0}, retAllow},
		{"ptrace seize", seccompPlan{}, unix.SYS_PTRACE, []uint64{unix.PTRACE_SEIZE, 1, 0, 0}, retAllow},
		{"ptrace attach with high bits", seccompPlan{}, unix.SYS_PTRACE, []uint64{unix.PTRACE_ATTACH | 1<<32, 1, 0, 0}, eperm},
		{"ptrace traceme with high bits", seccompPlan{}, unix.SYS_PTRACE, []uint64{unix.PTRACE_TRACEME | 1<<33, 0, 0, 0}, eperm},
		{"process_vm_readv", seccompPlan{}, unix.SYS_PROCESS_VM_READV, []uint64{1, 0, 1, 0, 1, 0}, eperm},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := run(t, c.plan.filter(), nativeArch, c.nr, c.args...); got != c.want {
				t.Errorf("filter(%+v) on syscall %d%v = %#x, want %#x", c.plan, c.nr, c.args, got, c.want)
			}
		})
	}
	if got := run(t, seccompPlan{}.filter(), nativeArch+1, unix.SYS_SOCKET, unix.AF_INET); got != retKill {
		t.Errorf("a socket call from a foreign architecture = %#x, want the process killed", got)
	}
}

// TestCompatCallsAreJudged: on x86-64, a call through the i386 ABI (a
// 32-bit program, int 0x80) is judged by the same rules under its own
// numbers: harmless calls pass, the denied ones get EPERM, a new socket
// through the socketcall multiplexer is refused, the direct socket call
// is judged by family, clone may not make namespaces.
func TestCompatCallsAreJudged(t *testing.T) {
	if compatArch == 0 {
		t.Skip("no 32-bit ABI is judged on this architecture")
	}
	n := compatSyscalls
	eperm, noaf := retErrno(unix.EPERM), retErrno(unix.EAFNOSUPPORT)
	cases := []struct {
		name string
		plan seccompPlan
		nr   uint32
		args []uint64
		want uint32
	}{
		{"getpid", seccompPlan{}, 20, nil, retAllow},
		{"write", seccompPlan{}, 4, []uint64{1, 0, 0}, retAllow},
		{"mount", seccompPlan{}, n["MOUNT"], nil, eperm},
		{"old umount", seccompPlan{}, n["UMOUNT"], nil, eperm},
		{"unshare", seccompPlan{}, n["UNSHARE"], []uint64{unix.CLONE_NEWUSER}, eperm},
		{"bpf", seccompPlan{}, n["BPF"], nil, eperm},
		{"io_uring_setup", seccompPlan{}, n["IO_URING_SETUP"], nil, eperm},
		{"stime", seccompPlan{}, n["STIME"], nil, eperm},
		{"vm86", seccompPlan{}, n["VM86"], nil, eperm},
		{"socketcall socket", seccompPlan{}, n["SOCKETCALL"], []uint64{1, 0x1000}, noaf},
		{"socketcall socketpair", seccompPlan{}, n["SOCKETCALL"], []uint64{8, 0x1000}, noaf},
		{"socketcall connect", seccompPlan{}, n["SOCKETCALL"], []uint64{3, 0x1000}, retAllow},
		{"socket inet", seccompPlan{}, n["SOCKET"], []uint64{unix.AF_INET, unix.SOCK_STREAM, 0}, retAllow},
		{"socket vsock", seccompPlan{}, n["SOCKET"], []uint64{unix.AF_VSOCK, unix.SOCK_STREAM, 0}, noaf},
		{"socket unix refused", seccompPlan{}, n["SOCKET"], []uint64{unix.AF_UNIX, unix.SOCK_STREAM, 0}, eperm},
		{"socketpair unix", seccompPlan{}, n["SOCKETPAIR"], []uint64{unix.AF_UNIX, unix.SOCK_STREAM, 0}, retAllow},
		{"clone a thread", seccompPlan{NoSpawn: true}, n["CLONE"], []uint64{unix.CLONE_VM | unix.CLONE_THREAD}, retAllow},
		{"clone a process, no spawn", seccompPlan{NoSpawn: true}, n["CLONE"], []uint64{0}, eperm},
		{"clone a user namespace", seccompPlan{}, n["CLONE"], []uint64{unix.CLONE_NEWUSER}, eperm},
		{"clone3", seccompPlan{}, n["CLONE3"], nil, retErrno(unix.ENOSYS)},
		{"fork, no spawn", seccompPlan{NoSpawn: true}, n["FORK"], nil, eperm},
		{"vfork", seccompPlan{}, n["VFORK"], nil, retAllow},
		{"ioctl TIOCSTI", seccompPlan{}, n["IOCTL"], []uint64{0, unix.TIOCSTI}, eperm},
		{"ptrace attach", seccompPlan{}, n["PTRACE"], []uint64{unix.PTRACE_ATTACH, 1}, retAllow},
		{"clone ending with SIGCONT", seccompPlan{}, n["CLONE"], []uint64{uint64(unix.SIGCONT)}, retErrno(unix.EINVAL)},
		{"fcntl64 F_SETSIG SIGCONT", seccompPlan{}, n["FCNTL64"], []uint64{3, unix.F_SETSIG, uint64(unix.SIGCONT)}, eperm},
		{"fcntl64 F_SETSIG SIGKILL", seccompPlan{}, n["FCNTL64"], []uint64{3, unix.F_SETSIG, uint64(unix.SIGKILL)}, eperm},
		{"prctl PR_SET_PDEATHSIG SIGCONT", seccompPlan{}, n["PRCTL"], []uint64{unix.PR_SET_PDEATHSIG, uint64(unix.SIGCONT)}, eperm},
		{"mq_notify", seccompPlan{}, n["MQ_NOTIFY"], []uint64{3, 0}, eperm},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := run(t, c.plan.filter(), compatArch, int(c.nr), c.args...); got != c.want {
				t.Errorf("filter(%+v) on i386 call %d%v = %#x, want %#x", c.plan, c.nr, c.args, got, c.want)
			}
		})
	}
}

// TestCompatSyscallNumbers checks compatSyscalls against x/sys/unix's
// table of i386 numbers, in the module cache of the version go.mod
// requires (what a build downloads).
func TestCompatSyscallNumbers(t *testing.T) {
	if compatArch == 0 {
		t.Skip("no 32-bit ABI is judged on this architecture")
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "golang.org/x/sys").Output()
	if err != nil {
		t.Fatalf("find golang.org/x/sys: %v", err)
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "unix", "zsysnum_linux_386.go"))
	if err != nil {
		t.Fatalf("read the i386 table: %v", err)
	}
	want := map[string]uint32{}
	for _, line := range strings.Split(string(src), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && strings.HasPrefix(f[0], "SYS_") && f[1] == "=" {
			if v, err := strconv.ParseUint(f[2], 10, 32); err == nil {
				want[strings.TrimPrefix(f[0], "SYS_")] = uint32(v)
			}
		}
	}
	for name, nr := range compatSyscalls {
		if w, ok := want[name]; !ok || w != nr {
			t.Errorf("compatSyscalls[%q] = %d; x/sys has %d (%v)", name, nr, w, ok)
		}
	}
	for _, name := range compatDenied {
		if _, ok := compatSyscalls[name]; !ok {
			t.Errorf("compatDenied names %q, which has no number", name)
		}
	}
}

// TestNothingArrangesItsOwnSIGCONT: a process the host holds stopped
// (SIGSTOP) must not be able to arrange, before, that the kernel sends it
// SIGCONT: not as the signal of a child's end (clone's low byte), of a file
// (fcntl F_SETSIG), of its parent's death (PR_SET_PDEATHSIG), or of a
// message queue (mq_notify). The ordinary uses of the same calls pass.
func TestNothingArrangesItsOwnSIGCONT(t *testing.T) {
	eperm := retErrno(unix.EPERM)
	cont := uint64(unix.SIGCONT)
	for _, c := range []struct {
		name string
		nr   int
		args []uint64
		want uint32
	}{
		{"fork-like clone", unix.SYS_CLONE, []uint64{uint64(unix.SIGCHLD)}, retAllow},
		{"thread clone", unix.SYS_CLONE, []uint64{unix.CLONE_VM | unix.CLONE_THREAD | unix.CLONE_SIGHAND}, retAllow},
		{"clone ending with SIGCONT", unix.SYS_CLONE, []uint64{cont}, retErrno(unix.EINVAL)},
		{"clone ending with SIGUSR1", unix.SYS_CLONE, []uint64{uint64(unix.SIGUSR1)}, retErrno(unix.EINVAL)},
		{"fcntl F_SETSIG SIGCONT", unix.SYS_FCNTL, []uint64{3, unix.F_SETSIG, cont}, eperm},
		{"fcntl F_SETSIG SIGIO", unix.SYS_FCNTL, []uint64{3, unix.F_SETSIG, uint64(unix.SIGIO)}, retAllow},
		{"fcntl F_SETSIG SIGKILL", unix.SYS_FCNTL, []uint64{3, unix.F_SETSIG, uint64(unix.SIGKILL)}, eperm},
		{"fcntl F_SETFL", unix.SYS_FCNTL, []uint64{3, unix.F_SETFL, cont}, retAllow},
		{"prctl PR_SET_PDEATHSIG SIGCONT", unix.SYS_PRCTL, []uint64{unix.PR_SET_PDEATHSIG, cont}, eperm},
		{"prctl PR_SET_PDEATHSIG SIGKILL", unix.SYS_PRCTL, []uint64{unix.PR_SET_PDEATHSIG, uint64(unix.SIGKILL)}, retAllow},
		{"prctl PR_SET_NAME", unix.SYS_PRCTL, []uint64{unix.PR_SET_NAME, cont}, retAllow},
		{"mq_notify", unix.SYS_MQ_NOTIFY, []uint64{3, 0}, eperm},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := run(t, seccompPlan{}.filter(), nativeArch, c.nr, c.args...); got != c.want {
				t.Errorf("%s%v = %#x, want %#x", c.name, c.args, got, c.want)
			}
		})
	}
}
