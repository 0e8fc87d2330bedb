//go:build amd64 || arm64

package sandbox

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// runInit is the sandbox's init. In namespace modes it is pid 1: it shapes
// the mounts and network, starts the command through the stage as its only
// child, forwards signals to it, and reports how it ended. When the init
// exits the kernel kills everything else in its pid namespace.
func runInit() int {
	report := os.NewFile(fdReport, "report")
	send := func(o outcome) int {
		_ = json.NewEncoder(report).Encode(o)
		report.Close()
		if o.Signal != 0 {
			return 128 + o.Signal
		}
		return o.Exit
	}
	p, err := readPlan()
	if err != nil {
		return send(outcome{Setup: err.Error(), Exit: 125})
	}
	if p.Namespaces {
		if err := setupMounts(p); err != nil {
			return send(outcome{Setup: err.Error(), Exit: 125})
		}
		if err := loopbackUp(); err != nil {
			return send(outcome{Setup: err.Error(), Exit: 125})
		}
		_ = unix.Sethostname([]byte("warden-sandbox"))
	} else {
		// Without a pid namespace, orphans of the command come back to the
		// init rather than escaping to the host's init.
		_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	}
	if p.Serve {
		_ = json.NewEncoder(report).Encode(outcome{Ready: true})
		report.Close()
		return serveInit(p)
	}

	planR, planW, err := os.Pipe()
	if err != nil {
		return send(outcome{Setup: "start the command: " + err.Error(), Exit: 125})
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		return send(outcome{Setup: "start the command: " + err.Error(), Exit: 125})
	}
	stage := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{stageArg0},
		Env:        []string{},
		Dir:        p.Dir,
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		ExtraFiles: []*os.File{planR, errW},
	}
	// Forward what would stop the sandbox to the command; as pid 1 the init
	// would otherwise ignore it.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	if err := stage.Start(); err != nil {
		return send(outcome{Setup: "start the command: " + err.Error(), Exit: 125})
	}
	planR.Close()
	errW.Close()
	go func() {
		for s := range sigs {
			_ = stage.Process.Signal(s)
		}
	}()
	_ = json.NewEncoder(planW).Encode(p)
	planW.Close()

	// The stage writes an errno here only when execve fails; on success the
	// pipe closes with the exec.
	var execErr struct {
		Errno int
		Path  string
	}
	msg, _ := io.ReadAll(errR)
	errR.Close()
	if len(msg) > 0 {
		_ = json.Unmarshal(msg, &execErr)
	}

	werr := stage.Wait()
	o := outcome{}
	if execErr.Errno != 0 {
		o.ExecErrno, o.ExecPath = execErr.Errno, execErr.Path
	}
	if st := stage.ProcessState; st != nil {
		ws := st.Sys().(syscall.WaitStatus)
		switch {
		case ws.Signaled():
			o.Signal = int(ws.Signal())
		default:
			o.Exit = ws.ExitStatus()
		}
		o.CPU = int64(st.UserTime() + st.SystemTime())
	} else if werr != nil {
		var ee *exec.ExitError
		if !errors.As(werr, &ee) {
			o.Setup = "wait for the command: " + werr.Error()
			o.Exit = 125
		}
	}
	return send(o)
}
