//go:build amd64 || arm64

package sandbox_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"unsafe"
)

// init gives the test binary more roles than TestMain's, for the tests of
// socket families, nesting and uids. It runs before TestMain, and acts only
// when the first argument names one of these roles.
func init() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case "sandbox-socket":
		os.Exit(socketProbe(os.Args[2:]))
	case "sandbox-unix-echo":
		os.Exit(unixEcho(os.Args[2]))
	case "sandbox-unix-dial":
		os.Exit(unixDial(os.Args[2]))
	case "sandbox-nested":
		os.Exit(nestedMain(os.Args[2:]))
	case "sandbox-mqueue":
		os.Exit(mqueueProbe(os.Args[2], os.Args[3]))
	}
}

// mqueueProbe makes POSIX message queue name ("make": prints "there", or
// "refused" where making one is not permitted) or says whether it exists
// ("look": prints "there" or "gone").
func mqueueProbe(op, name string) int {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return 2
	}
	flags := syscall.O_RDONLY
	if op == "make" {
		flags = syscall.O_CREAT | syscall.O_RDWR
	}
	fd, _, errno := syscall.Syscall6(syscall.SYS_MQ_OPEN, uintptr(unsafe.Pointer(p)), uintptr(flags), 0o600, 0, 0, 0)
	switch {
	case errno == 0:
		syscall.Close(int(fd))
		fmt.Println("there")
		return 0
	case errno == syscall.ENOENT && op == "look":
		fmt.Println("gone")
		return 0
	case errno == syscall.EACCES && op == "make":
		fmt.Println("refused") // the sandbox lets no queue be made
		return 0
	}
	fmt.Println("mq_open:", errno)
	return 1
}

// socketProbe makes one socket (or, with a fourth argument "pair", a
// socket pair) of the family, type and protocol given as numbers, and
// prints "ok" or "errno N". It exits 0 when the socket was made.
func socketProbe(args []string) int {
	var n [3]int
	for i := range n {
		v, err := strconv.Atoi(args[i])
		if err != nil {
			fmt.Println("bad argument", args[i])
			return 2
		}
		n[i] = v
	}
	var err error
	if len(args) > 3 && args[3] == "pair" {
		var fds [2]int
		if fds, err = syscall.Socketpair(n[0], n[1], n[2]); err == nil {
			syscall.Close(fds[0])
			syscall.Close(fds[1])
		}
	} else {
		var fd int
		if fd, err = syscall.Socket(n[0], n[1], n[2]); err == nil {
			syscall.Close(fd)
		}
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		fmt.Printf("errno %d (%v)\n", int(errno), errno)
		return 1
	}
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("ok")
	return 0
}

// unixEcho listens on a Unix socket in dir, connects to it and passes a
// byte through: what a command's own helper servers do.
// unixDial connects to the Unix socket at path and writes to it; it prints
// "connected" and exits 0 when it could connect.
func unixDial(path string) int {
	c, err := net.Dial("unix", path)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	defer c.Close()
	_, _ = c.Write([]byte("reached\n"))
	fmt.Println("connected")
	return 0
}

func unixEcho(dir string) int {
	path := filepath.Join(dir, "echo.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			b := make([]byte, 1)
			if _, err := c.Read(b); err == nil {
				_, _ = c.Write(b)
			}
			c.Close()
		}
	}()
	c, err := net.Dial("unix", path)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	defer c.Close()
	b := []byte{'e'}
	if _, err := c.Write(b); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	if _, err := c.Read(b); err != nil || b[0] != 'e' {
		fmt.Println("error: no echo:", err)
		return 1
	}
	fmt.Println("ok")
	return 0
}
