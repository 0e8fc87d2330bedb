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
	"encoding/json"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"strings"
	"unicode/utf8"
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
	Version int `json:"v"`
	// Warden is the warden binary warden-exec would run itself: a server
	// that is another binary (an older one, replaced since it started)
	// answers Fallback.
	Warden string   `json:"warden"`
	Args   []string `json:"args"` // warden's arguments, without the program name
	Dir    string   `json:"dir"`
	Env    []string `json:"env"`
	// Stdin, for a hook, is the payload warden-exec read from its stdin
	// (the session is in it); the command reads it instead of the stream.
	Stdin []byte `json:"stdin,omitempty"`
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

// SocketPath is the socket that serves session's commands in home: named
// by the FNV-1a 64 hash of the session id (cmd/warden-exec/native computes
// the same). Two sessions that share a name cost speed only: a supervisor
// answers Fallback to another session's requests.
func SocketPath(home, session string) string {
	h := fnv.New64a()
	h.Write([]byte(session))
	return filepath.Join(home, RunDir, fmt.Sprintf("exec-%016x.sock", h.Sum64()))
}

// Sendable reports whether every string of r survives JSON as it is:
// encoding/json replaces bytes that are not UTF-8, and the supervisor would
// run other words than these. A request that is not sendable goes to the
// warden binary.
func (r Request) Sendable() bool {
	if !utf8.ValidString(r.Warden) || !utf8.ValidString(r.Dir) {
		return false
	}
	for _, ss := range [][]string{r.Args, r.Env} {
		for _, s := range ss {
			if !utf8.ValidString(s) {
				return false
			}
		}
	}
	return true
}

// HookEvents are the hook events a supervisor answers: a tool call's
// decision and its report. Any other (a session's end stops the world
// itself) goes to the warden binary.
var HookEvents = map[string]bool{"PreToolUse": true, "PostToolUse": true, "PostToolUseFailure": true, "BeforeTool": true, "AfterTool": true}

// HookTarget finds, in a `warden hook` command line as `warden install`
// writes it (hook HOST, then --home H unless the home is the default), the
// home and the host; env is the environment the hook runs with, for the
// default home ($WARDEN_HOME, else ~/.warden). ok is false for any other
// command line, or a home that is not an absolute path.
func HookTarget(args, env []string) (home, host string, ok bool) {
	switch {
	case len(args) == 2 && args[0] == "hook":
		if home = EnvValue(env, "WARDEN_HOME"); home == "" {
			if h := EnvValue(env, "HOME"); h != "" {
				home = filepath.Join(h, ".warden")
			}
		}
	case len(args) == 4 && args[0] == "hook" && args[2] == "--home":
		home = args[3]
	case len(args) == 4 && args[0] == "--home" && args[2] == "hook":
		home, args = args[1], args[2:]
	default:
		return "", "", false
	}
	if !filepath.IsAbs(home) {
		return "", "", false
	}
	return filepath.Clean(home), args[1], true
}

// EnvValue is name's value in env (the last one wins, as in a shell).
func EnvValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// HookSession reads the session and the event from a hook payload; ok is
// false when the payload is not a JSON object with both, or the event is
// not one of HookEvents.
func HookSession(payload []byte) (session string, ok bool) {
	var p struct {
		Session string `json:"session_id"`
		Event   string `json:"hook_event_name"`
	}
	if json.Unmarshal(payload, &p) != nil || p.Session == "" || !HookEvents[p.Event] {
		return "", false
	}
	return p.Session, true
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

// OneShotSocketPath is the socket that serves the one-shot runs (warden exec
// with no session) of world, a sandbox kept for the one-shot runs of one
// directory and profile.
func OneShotSocketPath(home, world string) string {
	return filepath.Join(home, RunDir, world+".sock")
}

// OneShotTarget finds, in a `warden exec` command line with no session
// (--home H exec [flags] -- CMD…), the home and the profile it names
// (--profile P or --profile=P; "" for none); ok is false for any other
// command line, which is never sent. The server runs the command line as
// warden would, whatever this reading of it: this only picks the requests
// worth sending.
func OneShotTarget(args []string) (home, profile string, ok bool) {
	if len(args) < 5 || args[0] != "--home" || args[2] != "exec" || !filepath.IsAbs(args[1]) {
		return "", "", false
	}
	for i := 3; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			return args[1], profile, i+1 < len(args)
		case a == "--session" || strings.HasPrefix(a, "--session="):
			return "", "", false
		case a == "--profile" && i+1 < len(args):
			profile = args[i+1]
			i++
		case strings.HasPrefix(a, "--profile="):
			profile = strings.TrimPrefix(a, "--profile=")
		}
	}
	return "", "", false
}
