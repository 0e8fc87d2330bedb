// Package execwire is the wire between warden-exec, the small program an
// agent host starts for every command a hook contained, and the supervisor
// of the session's sandbox world, a warden process that is already running
// with everything loaded. warden-exec sends the `warden exec` command line
// it was given, its working directory, its environment and its three
// standard streams (as SCM_RIGHTS) in one message on a SOCK_SEQPACKET Unix
// socket in warden's run directory; the supervisor runs that `warden exec`
// as the warden binary would, with those streams, and answers with its exit
// status. When it cannot (the world must start anew, the request is not one
// it serves), it answers Fallback before anything ran, and warden-exec
// execs the warden binary with the same arguments instead.
//
// The package uses the standard library and golang.org/x/sys/unix only, so
// that warden-exec stays a small binary that starts in about a millisecond.
package execwire

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
)

// Version is the version of the messages; a server answers Fallback to any
// other.
const Version = 1

// MaxRequest is the largest request a server reads, in bytes. A larger one
// (a huge command line or environment) is refused by the socket before it
// is sent, and warden-exec falls back.
const MaxRequest = 1 << 20

// Request is warden-exec's one message. Its streams travel with it.
type Request struct {
	Version int      `json:"v"`
	Args    []string `json:"args"` // warden's arguments, without the program name
	Dir     string   `json:"dir"`
	Env     []string `json:"env"`
}

// Response is the server's answer: Fallback (with its reason) when it ran
// nothing and warden-exec is to run the warden binary itself, else the exit
// status of `warden exec`.
type Response struct {
	Fallback string `json:"fallback,omitempty"`
	Exit     int    `json:"exit"`
}

// RunDir is the directory of warden's home that holds the sockets (the
// same as the long-lived sandboxes' run directory, masked in every
// sandbox).
const RunDir = "run"

// SocketPath is the socket that serves session's commands in home.
func SocketPath(home, session string) string {
	sum := sha256.Sum256([]byte(session))
	return filepath.Join(home, RunDir, "exec-"+hex.EncodeToString(sum[:10])+".sock")
}

// Target finds, in a `warden exec` command line as a hook writes it
// (--home H exec [flags] -- CMD…), the home and the session; ok is false
// for any other command line, which is never sent.
func Target(args []string) (home, session string, ok bool) {
	if len(args) < 4 || args[0] != "--home" || args[2] != "exec" {
		return "", "", false
	}
	home = args[1]
	for i := 3; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			return home, session, session != "" && filepath.IsAbs(home)
		case a == "--session" && i+1 < len(args):
			session = args[i+1]
			i++
		}
	}
	return "", "", false
}
