// Command warden-exec starts what a hook or an agent host asks of warden,
// quickly.
//
//	warden-exec WARDEN --home H exec [flags] -- CMD [ARG…]
//	warden-exec WARDEN hook HOST [--home H]
//
// warden's hooks write it in front of `WARDEN --home H exec …` (every
// command they contain), and `warden install` in front of `WARDEN --home H
// hook HOST …` when it sits beside warden. When the session's sandbox world
// is running, its supervisor (a warden process with everything loaded)
// runs that warden command line for it, deciding and auditing exactly as
// the warden binary would, with this process's directory, environment and
// streams (for a hook, the payload it read): a full warden start is saved
// every time. Otherwise, or when the supervisor says so before running
// anything, it execs WARDEN with the same arguments (and, for a hook, the
// payload on its stdin). Its exit status is warden's.
//
// It never decides anything itself: every path ends in a warden process's
// gate.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentwarden/warden/internal/execwire"
)

// exitHookBlocked is what a hook answers when it cannot pass the payload
// on: every host reads exit status 2 as "blocked".
const exitHookBlocked = 2

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: warden-exec WARDEN --home H exec [flags] -- CMD [ARG…]\n       warden-exec WARDEN hook HOST [--home H]\n(warden writes it; run warden yourself)")
		os.Exit(2)
	}
	wardenPath, args := resolve(os.Args[1]), os.Args[2:]
	home, _, isHook := execwire.HookTarget(args, os.Environ())
	// A hook (any `warden hook` command line, served here or not) that
	// cannot reach warden blocks the call: every host lets a call through
	// on any other failure status.
	failed := 127
	if isHook || args[0] == "hook" || len(args) > 2 && args[2] == "hook" {
		failed = exitHookBlocked
	}
	if wardenPath == "" {
		fmt.Fprintf(os.Stderr, "warden-exec: %s is not on $PATH; install warden with `make install` or put its directory on $PATH\n", os.Args[1])
		os.Exit(failed)
	}
	if isHook {
		payload, err := io.ReadAll(os.Stdin)
		if err == nil {
			if session, ok := execwire.HookSession(payload); ok {
				if status, ok := throughSupervisor(wardenPath, home, session, args, payload); ok {
					os.Exit(status)
				}
			}
		}
		// warden reads the payload from its stdin: give back what was read.
		if err := replaceStdin(payload); err != nil {
			fmt.Fprintf(os.Stderr, "warden-exec: cannot pass the hook's payload on to warden: %v\n", err)
			os.Exit(exitHookBlocked)
		}
	} else if home, session, ok := execwire.Target(args); ok {
		if status, ok := throughSupervisor(wardenPath, home, session, args, nil); ok {
			os.Exit(status)
		}
	}
	err := syscall.Exec(wardenPath, append([]string{wardenPath}, args...), os.Environ())
	fmt.Fprintf(os.Stderr, "warden-exec: cannot start %s: %v\n", wardenPath, err)
	if failed != exitHookBlocked {
		failed = 126
	}
	os.Exit(failed)
}

// throughSupervisor runs the command line through the session's
// supervisor; ok is false when nothing ran and the warden binary is to run
// it instead.
func throughSupervisor(wardenPath, home, session string, args []string, payload []byte) (status int, ok bool) {
	dir, err := os.Getwd()
	if err != nil {
		return 0, false
	}
	req := execwire.Request{Version: execwire.Version, Warden: wardenPath, Args: args, Dir: dir, Env: os.Environ(), Stdin: payload}
	if !req.Sendable() {
		return 0, false
	}
	c, err := execwire.Dial(execwire.SocketPath(home, session))
	if err != nil {
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
	status, err = c.Call(req, [3]int{0, 1, 2})
	c.Close()
	switch {
	case errors.Is(err, execwire.ErrFallback):
		signal.Stop(sigs)
		return 0, false
	case err != nil:
		fmt.Fprintf(os.Stderr, "warden: %v\n", err)
		if payload != nil {
			return exitHookBlocked, true
		}
		return 125, true
	}
	return status, true
}
