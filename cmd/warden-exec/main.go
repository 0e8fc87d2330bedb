// Command warden-exec starts a command a hook contained, quickly.
//
//	warden-exec WARDEN --home H exec [flags] -- CMD [ARG…]
//
// It is what warden's hooks write into the commands an agent host runs, in
// front of `WARDEN --home H exec …`. When the session's sandbox world is
// running, its supervisor (a warden process with everything loaded) runs
// that `warden exec` for it, deciding and auditing the command as the warden
// binary would, with this process's directory, environment and streams; a
// full warden start is saved on every command. Otherwise, or when the
// supervisor says so before running anything, it execs WARDEN with the same
// arguments. Its exit status is that of `warden exec`.
//
// It never decides anything itself: every path ends in a warden process's
// gate.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentwarden/warden/internal/execwire"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: warden-exec WARDEN --home H exec [flags] -- CMD [ARG…]\n(warden's hooks write it; run `warden exec` yourself)")
		os.Exit(2)
	}
	wardenPath, args := os.Args[1], os.Args[2:]
	if status, ok := throughSupervisor(args); ok {
		os.Exit(status)
	}
	err := syscall.Exec(wardenPath, append([]string{wardenPath}, args...), os.Environ())
	fmt.Fprintf(os.Stderr, "warden-exec: cannot start %s: %v\n", wardenPath, err)
	os.Exit(126)
}

// throughSupervisor runs the command line through the session's
// supervisor; ok is false when nothing ran and the warden binary is to run
// it instead.
func throughSupervisor(args []string) (status int, ok bool) {
	home, session, ok := execwire.Target(args)
	if !ok {
		return 0, false
	}
	c, err := execwire.Dial(execwire.SocketPath(home, session))
	if err != nil {
		return 0, false
	}
	dir, err := os.Getwd()
	if err != nil {
		c.Close()
		return 0, false
	}
	// Interrupted or told to stop, hang up: the supervisor stops the
	// command, as a warden exec that is killed has its command stopped.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	go func() {
		s := <-sigs
		c.Close()
		os.Exit(128 + int(s.(syscall.Signal)))
	}()
	status, err = c.Call(execwire.Request{Version: execwire.Version, Args: args, Dir: dir, Env: os.Environ()}, [3]int{0, 1, 2})
	c.Close()
	switch {
	case errors.Is(err, execwire.ErrFallback):
		signal.Stop(sigs)
		return 0, false
	case err != nil:
		fmt.Fprintf(os.Stderr, "warden: %v\n", err)
		return 125, true
	}
	return status, true
}
