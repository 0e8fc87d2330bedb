package sandbox_test

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/agentwarden/warden/sandbox"
)

// attachScript attaches (PTRACE_ATTACH) to a child it forks, to pid 1, to
// its parent and to each pid it is given, and prints what each gave: "ok"
// or the error.
const attachScript = `
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
def attach(pid):
    if libc.ptrace(16, pid, None, None) != 0:
        return os.strerror(ctypes.get_errno())
    os.waitpid(pid, 0)
    libc.ptrace(17, pid, None, None)
    return "ok"
child = os.fork()
if child == 0:
    time.sleep(30)
    os._exit(0)
time.sleep(0.2)
print("child", attach(child))
print("init", attach(1))
print("parent", attach(os.getppid()))
for a in sys.argv[1:]:
    print("host", attach(int(a)))
os.kill(child, 9)
`

// TestTracingReachesOnlyTheCommandsOwnProcesses: the seccomp filter lets
// PTRACE_ATTACH through (gdb -p, strace -p, LeakSanitizer), and the kernel
// keeps it to the command's own processes: it attaches to a child it
// forked, but not to the sandbox's init, its parent, or a process of the
// host's, which in a pid namespace it cannot name and without one
// (light mode, nested in another sandbox) Landlock refuses, being outside
// the command's domain.
func TestTracingReachesOnlyTheCommandsOwnProcesses(t *testing.T) {
	host := exec.Command("sleep", "30")
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = host.Process.Kill(); _ = host.Wait() })
	hostPid := strconv.Itoa(host.Process.Pid)
	for _, mode := range []sandbox.Mode{sandbox.ModeStandard, sandbox.ModeLight} {
		t.Run(string(mode), func(t *testing.T) {
			requireMode(t, mode)
			s, home := workspaceSpec(t)
			s.Mode = mode
			r := runAt(t, s, home, pythonPath(t), "-c", attachScript, hostPid)
			if r.err != nil || r.res.ExitCode != 0 {
				t.Fatalf("the script failed: %s", r)
			}
			t.Logf("%s", r.stdout)
			got := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				who, what, _ := strings.Cut(line, " ")
				got[who] = what
			}
			if got["child"] != "ok" {
				t.Errorf("attaching to its own child: %q, want ok (%s)", got["child"], r)
			}
			for _, who := range []string{"init", "parent", "host"} {
				if what, ok := got[who]; !ok || what == "ok" {
					t.Errorf("attaching to the %s's process (%s): %q, want an error", who, hostPid, what)
				}
			}
		})
	}
}
