//go:build amd64 || arm64

package sandbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/agentwarden/warden/sandbox"
	"golang.org/x/sys/unix"
)

// nestedJob is what the test binary, started inside an outer sandbox, is
// asked to run in a sandbox of its own, and nestedReport what it says back.
type nestedJob struct {
	// OuterFilter installs, before anything else, the seccomp filters an
	// outer sandbox such as Codex's would: one that allows everything, then
	// one that refuses unshare and clone into new namespaces.
	OuterFilter bool
	Spec        sandbox.Spec
	Args        []string
}

type nestedReport struct {
	Status   string // this process's own /proc/self/status, as the outer sandbox left it
	Mode     sandbox.Mode
	Warnings []string
	Exit     int
	Stdout   string
	Stderr   string
	Err      string
}

func nestedMain(args []string) int {
	var job nestedJob
	if err := json.Unmarshal([]byte(args[0]), &job); err != nil {
		fmt.Fprintln(os.Stderr, "bad job:", err)
		return 2
	}
	if job.OuterFilter {
		if err := outerFilters(); err != nil {
			fmt.Fprintln(os.Stderr, "install the outer filters:", err)
			return 2
		}
	}
	var rep nestedReport
	b, _ := os.ReadFile("/proc/self/status")
	rep.Status = string(b)
	var out, errb bytes.Buffer
	res, err := (&sandbox.Native{}).Run(context.Background(), job.Spec, sandbox.Command{
		Args: job.Args, Dir: job.Spec.Project, Env: []string{"PATH=" + systemPath},
		Stdout: &out, Stderr: &errb,
	})
	rep.Mode, rep.Warnings, rep.Exit = res.Mode, res.Warnings, res.ExitCode
	rep.Stdout, rep.Stderr = out.String(), errb.String()
	if err != nil {
		rep.Err = err.Error()
	}
	_ = json.NewEncoder(os.Stdout).Encode(rep)
	return 0
}

// outerFilters installs on every thread of this process what an outer
// sandbox leaves behind: a filter allowing everything, and one refusing
// unshare and clone with namespace flags (EPERM), and clone3 (ENOSYS, so
// that callers fall back to clone).
func outerFilters() error {
	ld := func(off uint32) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}
	}
	ret := func(v uint32) unix.SockFilter { return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: v} }
	jeq := func(k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: k, Jt: jt, Jf: jf}
	}
	const namespaces = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
		unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP
	eperm := uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	refuse := []unix.SockFilter{
		ld(0),                       // 0: nr
		jeq(unix.SYS_UNSHARE, 0, 1), // 1
		ret(eperm),                  // 2
		jeq(unix.SYS_CLONE3, 0, 1),  // 3
		ret(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)), // 4
		jeq(unix.SYS_CLONE, 0, 3),                         // 5
		ld(16),                                            // 6: the flags, low half
		{Code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, K: namespaces, Jt: 0, Jf: 1}, // 7
		ret(eperm),                  // 8
		ret(unix.SECCOMP_RET_ALLOW), // 9
	}
	for _, prog := range [][]unix.SockFilter{{ret(unix.SECCOMP_RET_ALLOW)}, refuse} {
		fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
		if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog))); e != 0 {
			return e
		}
	}
	return nil
}

// codexLike are setpriv's options for what Codex's workspace-write sandbox
// leaves a command: uid 0 with every capability gone (effective, permitted,
// inheritable, ambient and bounding) and no_new_privs.
var codexLike = []string{"--reuid=0", "--regid=0", "--clear-groups",
	"--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all", "--no-new-privs"}

// runNested starts exe (the test binary, or a copy of it) through setpriv
// with opts, and has it run job in a sandbox of its own.
func runNested(t *testing.T, setpriv, exe string, opts []string, job nestedJob) nestedReport {
	t.Helper()
	b, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	args := append(slices.Clone(opts), "--", exe, "sandbox-nested", string(b))
	cmd := exec.Command(setpriv, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("setpriv %s: %v\n%s", strings.Join(opts, " "), err, stderr.String())
	}
	var rep nestedReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("the nested run's report %q: %v\n%s", out, err, stderr.String())
	}
	return rep
}

func requireSetpriv(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("dropping every capability as Codex does needs root")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("util-linux setpriv is not installed")
	}
	return setpriv
}

// TestNestedInsideAnOuterSandbox runs a sandbox from inside what Codex's
// workspace-write sandbox leaves a command: uid 0 without any capability,
// no_new_privs, and a seccomp filter refusing namespaces. The command must
// run, its output must arrive, Landlock must still refuse a read outside
// what it grants, and the result must say it ran nested in light mode.
func TestNestedInsideAnOuterSandbox(t *testing.T) {
	requireMode(t, sandbox.ModeLight)
	setpriv := requireSetpriv(t)
	self, _ := os.Executable()
	outside := outsideFile(t)
	cases := []struct {
		name     string
		outer    bool
		mode     sandbox.Mode
		wantMode sandbox.Mode // "" when either mode is right
		wantWarn string
	}{
		{name: "standard falls back to light under a filter refusing namespaces", outer: true, mode: sandbox.ModeStandard,
			wantMode: sandbox.ModeLight, wantWarn: "an outer sandbox holds this process"},
		{name: "light without capabilities", mode: sandbox.ModeLight, wantMode: sandbox.ModeLight},
		{name: "light under a filter refusing namespaces", outer: true, mode: sandbox.ModeLight, wantMode: sandbox.ModeLight},
		{name: "standard without capabilities", mode: sandbox.ModeStandard},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := guardSpec(t)
			s.Mode = c.mode
			s.Limits.CPU = 0 // not this test's business, and the nested runs share a slow CI machine
			mustWrite(t, filepath.Join(s.Project, "readme"), "hello from the project")

			rep := runNested(t, setpriv, self, codexLike, nestedJob{OuterFilter: c.outer, Spec: s, Args: []string{"cat", "readme"}})
			for _, want := range []string{"CapEff:\t0000000000000000", "CapBnd:\t0000000000000000", "NoNewPrivs:\t1"} {
				if !strings.Contains(rep.Status, want) {
					t.Fatalf("the outer sandbox was not built: its status lacks %q:\n%s", want, rep.Status)
				}
			}
			if c.outer && !strings.Contains(rep.Status, "Seccomp:\t2") {
				t.Fatalf("the outer filter is not installed:\n%s", rep.Status)
			}
			if rep.Err != "" || rep.Exit != 0 || rep.Stdout != "hello from the project" {
				t.Fatalf("cat readme nested: err %q exit %d stdout %q stderr %q warnings %q", rep.Err, rep.Exit, rep.Stdout, rep.Stderr, rep.Warnings)
			}
			if c.wantMode != "" && rep.Mode != c.wantMode {
				t.Errorf("nested run reported mode %s, want %s (warnings %q)", rep.Mode, c.wantMode, rep.Warnings)
			}
			if c.wantWarn != "" && !slicesContainsSubstring(rep.Warnings, c.wantWarn) {
				t.Errorf("nested run's warnings %q lack %q", rep.Warnings, c.wantWarn)
			}
			if rep.Mode == sandbox.ModeLight && c.mode != sandbox.ModeLight && !slicesContainsSubstring(rep.Warnings, "ran in light mode") {
				t.Errorf("nested run fell back to light mode without saying so: %q", rep.Warnings)
			}
			t.Logf("ran as %s; warnings: %q", rep.Mode, rep.Warnings)

			rep = runNested(t, setpriv, self, codexLike, nestedJob{OuterFilter: c.outer, Spec: s, Args: []string{self, "sandbox-probe", "read", outside}})
			if rep.Err != "" || rep.Exit != 1 || !strings.Contains(rep.Stdout, "permission denied") {
				t.Fatalf("reading %s outside the grant, nested: err %q exit %d stdout %q stderr %q; want it refused", outside, rep.Err, rep.Exit, rep.Stdout, rep.Stderr)
			}

			rep = runNested(t, setpriv, self, codexLike, nestedJob{OuterFilter: c.outer, Spec: s, Args: []string{self, "sandbox-probe", "status"}})
			for _, want := range []string{"NoNewPrivs:\t1", "CapEff:\t0000000000000000", "Seccomp_filters:\t"} {
				if !strings.Contains(rep.Stdout, want) {
					t.Errorf("the nested command's status lacks %q:\n%s", want, rep.Stdout)
				}
			}
			if want := map[bool]string{true: "Seccomp_filters:\t3", false: "Seccomp_filters:\t1"}[c.outer]; !strings.Contains(rep.Stdout, want) {
				t.Errorf("the nested command's filters do not stack on the outer ones: status lacks %q:\n%s", want, rep.Stdout)
			}
		})
	}
}

func slicesContainsSubstring(list []string, sub string) bool {
	return slices.ContainsFunc(list, func(s string) bool { return strings.Contains(s, sub) })
}

// TestPrivilegeStepsStillRefusedWhereTheyMatter checks that the stage
// accepts a failed privilege step only where what it protects holds: a
// root that lost CAP_SETPCAP but keeps the rest of its bounding set would
// regain those capabilities at exec without the securebits, so there the
// command must not run.
func TestPrivilegeStepsStillRefusedWhereTheyMatter(t *testing.T) {
	requireMode(t, sandbox.ModeLight)
	setpriv := requireSetpriv(t)
	self, _ := os.Executable()
	s := guardSpec(t)
	s.Mode = sandbox.ModeLight
	opts := []string{"--reuid=0", "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-setpcap", "--no-new-privs"}
	rep := runNested(t, setpriv, self, opts, nestedJob{Spec: s, Args: []string{"true"}})
	if !strings.Contains(rep.Err, "securebits") {
		t.Fatalf("light mode as root with a bounding set but no CAP_SETPCAP: err %q exit %d; want the securebits step refused", rep.Err, rep.Exit)
	}
}
