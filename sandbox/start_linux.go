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
	cmd    *exec.Cmd
	report *os.File
}

// startInit starts a sandbox's init (re-executing exe) with the given
// standard streams and extra files (fd 5 on), moves it into cg, and sends
// it the plan. On error nothing it started is left running. A kernel that
// refuses the namespaces is a *namespaceError, so the caller can fall back.
func startInit(exe string, mode Mode, cg *cgroup, p *plan, stdin io.Reader, stdout, stderr io.Writer, extra ...*os.File) (*initProc, error) {
	planR, planW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer planW.Close()
	reportR, reportW, err := os.Pipe()
	if err != nil {
		planR.Close()
		return nil, err
	}
	cmd := &exec.Cmd{
		Path: exe, Args: []string{initArg0}, Env: helperEnv, Dir: "/",
		Stdin: stdin, Stdout: stdout, Stderr: stderr,
		ExtraFiles:  append([]*os.File{planR, reportW}, extra...),
		SysProcAttr: initAttr(mode),
	}
	err = cmd.Start()
	planR.Close()
	reportW.Close()
	if err != nil {
		reportR.Close()
		if mode.Namespaces() && isNamespaceRefusal(err) {
			return nil, &namespaceError{err}
		}
		return nil, fmt.Errorf("start the sandbox: %w", err)
	}
	ip := &initProc{cmd: cmd, report: reportR}
	if cg != nil {
		err = cg.add(cmd.Process.Pid)
	}
	if err == nil {
		err = json.NewEncoder(planW).Encode(p)
	}
	if err != nil {
		ip.kill()
		_ = cmd.Wait()
		reportR.Close()
		return nil, err
	}
	return ip, nil
}

// kill kills the init and, without a pid namespace, what shares its
// session.
func (ip *initProc) kill() {
	_ = syscall.Kill(-ip.cmd.Process.Pid, syscall.SIGKILL)
	_ = ip.cmd.Process.Kill()
}

// readOutcome reads the init's report. ok is false when the init died
// before it could write one.
func (ip *initProc) readOutcome() (o outcome, ok bool) {
	err := json.NewDecoder(io.LimitReader(ip.report, 1<<16)).Decode(&o)
	ip.report.Close()
	return o, err == nil
}
