package execwire

import (
	"encoding/json"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// ErrFallback is Call's error when the command did not run through the
// server and nothing ran: warden-exec then runs the warden binary.
var ErrFallback = errors.New("the session's supervisor did not take the command")

// A Conn is warden-exec's connection to a supervisor.
type Conn struct{ fd int }

// Dial connects to the socket at path; an error means nothing was sent.
func Dial(path string) (*Conn, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &Conn{fd: fd}, nil
}

// Close hangs up; a command still running for this connection is stopped.
// It shuts the socket down first, so that the server sees the hang-up even
// while another goroutine is still blocked reading the answer.
func (c *Conn) Close() error {
	_ = unix.Shutdown(c.fd, unix.SHUT_RDWR)
	return unix.Close(c.fd)
}

// Call sends req with the streams (stdin, stdout, stderr as descriptors)
// and waits for the answer. It returns the exit status of `warden exec`;
// errors.Is(err, ErrFallback) when the server ran nothing (it said so, or
// the request could not be sent). Any other error means the command may
// have run and must not be run again.
func (c *Conn) Call(req Request, streams [3]int) (int, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrFallback, err)
	}
	if err := unix.Sendmsg(c.fd, b, unix.UnixRights(streams[:]...), nil, 0); err != nil {
		return 0, fmt.Errorf("%w: send: %v", ErrFallback, err)
	}
	buf := make([]byte, 4096)
	for {
		n, _, err := unix.Recvfrom(c.fd, buf, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("the session's supervisor went away while the command ran: %v", err)
		}
		if n == 0 {
			return 0, errors.New("the session's supervisor went away while the command ran")
		}
		var resp Response
		if err := json.Unmarshal(buf[:n], &resp); err != nil {
			return 0, fmt.Errorf("the session's supervisor answered something unreadable: %v", err)
		}
		if resp.Fallback != "" {
			return 0, fmt.Errorf("%w: %s", ErrFallback, resp.Fallback)
		}
		return resp.Exit, nil
	}
}
