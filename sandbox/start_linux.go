//go:build amd64 || arm64

package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
)

// initProc is a started init and the pipe it reports on.
type initProc struct {
	pid int
	// cmd is the init when this process started it; pidfd when a
	// spawner did (spawner.spawn).
	cmd    *exec.Cmd
	pidfd  *pidFD
	report *os.File
}

// startInit starts a sandbox's init (re-executing exe) with the given
// standard streams and extra files (fd 5 on), moves it into cg, and sends
// it the plan. On error nothing it started is left running. A kernel that
// refuses the namespaces is a *namespaceError, so the caller can fall back.
func startInit(exe string, mode Mode, cg *cgroup, p *plan, stdin io.Reader, stdout, stderr io.Writer, extra ...*os.File) (*initProc, error) {
	ip, planW, err := spawnInit(exe, initArgs(mode), mode, stdin, stdout, stderr, extra...)
	if err != nil {
		return nil, err
	}
	if err := ip.admit(planW, cg); err != nil {
		return nil, err
	}
	if err := ip.sendPlan(planW, p); err != nil {
		return nil, err
	}
	return ip, nil
}

// spawnInit starts a sandbox's init with args (initArgs), which then waits
// for its plan on the pipe returned; it must be admitted to its cgroup
// (admit) before the plan is sent (sendPlan).
func spawnInit(exe string, args []string, mode Mode, stdin io.Reader, stdout, stderr io.Writer, extra ...*os.File) (*initProc, *os.File, error) {
	planR, planW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	reportR, reportW, err := os.Pipe()
	if err != nil {
		planR.Close()
		planW.Close()
		return nil, nil, err
	}
	cmd := &exec.Cmd{
		Path: exe, Args: args, Env: helperEnv, Dir: "/",
		Stdin: stdin, Stdout: stdout, Stderr: stderr,
		ExtraFiles:  append([]*os.File{planR, reportW}, extra...),
		SysProcAttr: initAttr(mode),
	}
	err = cmd.Start()
	planR.Close()
	reportW.Close()
	if err != nil {
		planW.Close()
		reportR.Close()
		if mode.Namespaces() && isNamespaceRefusal(err) {
			return nil, nil, &namespaceError{err}
		}
		return nil, nil, fmt.Errorf("start the sandbox: %w", err)
	}
	return &initProc{pid: cmd.Process.Pid, cmd: cmd, report: reportR}, planW, nil
}

// initArgs are the arguments an init of mode is started with.
func initArgs(mode Mode) []string {
	if mode.Namespaces() {
		return []string{initArg0, initNamespacesArg}
	}
	return []string{initArg0}
}

// admit moves the init into cg, before its plan lets it start anything.
// On error the init is killed and waited for, and planW closed.
func (ip *initProc) admit(planW *os.File, cg *cgroup) error {
	var err error
	if cg != nil {
		err = cg.add(ip.pid)
	}
	if err != nil {
		planW.Close()
		ip.abort()
		return err
	}
	return nil
}

// sendPlan sends the init its plan, closing planW. On error the init is
// killed and waited for.
func (ip *initProc) sendPlan(planW *os.File, p *plan) error {
	defer planW.Close()
	if err := json.NewEncoder(planW).Encode(p); err != nil {
		ip.abort()
		return err
	}
	return nil
}

// abort kills the init and waits for it.
func (ip *initProc) abort() {
	ip.kill()
	ip.wait()
	ip.report.Close()
}

// wait waits for the init to exit. It is called once.
func (ip *initProc) wait() {
	if ip.pidfd != nil {
		ip.pidfd.wait()
		return
	}
	_ = ip.cmd.Wait()
}

// kill kills the init and, without a pid namespace, what shares its
// session (a spawner starts only inits in namespaces).
func (ip *initProc) kill() {
	if ip.pidfd != nil {
		ip.pidfd.kill()
		return
	}
	_ = syscall.Kill(-ip.pid, syscall.SIGKILL)
	_ = ip.cmd.Process.Kill()
}

// readOutcome reads the init's report. ok is false when the init died
// before it could write one.
func (ip *initProc) readOutcome() (o outcome, ok bool) {
	err := json.NewDecoder(io.LimitReader(ip.report, 1<<16)).Decode(&o)
	ip.report.Close()
	return o, err == nil
}
