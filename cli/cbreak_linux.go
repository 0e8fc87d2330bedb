package cli

import (
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// keyAtATime makes the terminal tty deliver each key as it is typed, not
// echoed and without waiting for Enter, while Ctrl-C still interrupts. The
// returned function restores the terminal; it is also restored when an
// interrupt or termination ends the process. It is a no-op where the
// terminal cannot be switched.
func keyAtATime(tty *os.File) (restore func()) {
	fd := int(tty.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return func() {}
	}
	t := *old
	t.Lflag &^= unix.ICANON | unix.ECHO
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &t); err != nil {
		return func() {}
	}
	back := func() { _ = unix.IoctlSetTermios(fd, unix.TCSETS, old) }
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			back()
			// End as the signal would have: the caller sees it (130 for Ctrl-C).
			signal.Reset(s)
			_ = syscall.Kill(os.Getpid(), s.(syscall.Signal))
			time.Sleep(time.Second)
			os.Exit(128 + int(s.(syscall.Signal)))
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
		back()
	}
}
