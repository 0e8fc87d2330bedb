package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentwarden/warden/internal/execwire"
)

// client is one build of warden-exec: argv0 and the environment it needs.
type client struct {
	name string
	path string
	env  []string
}

// clients are the Go client (this test binary as main) and the C client
// (cmd/warden-exec/native, what `make build` installs where there is a C
// compiler; scripts/deps.sh installs one, so CI always tests it).
func clients(t *testing.T) []client {
	t.Helper()
	cs := []client{{name: "go", path: os.Args[0], env: []string{"WARDEN_EXEC_AS_MAIN=1"}}}
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Logf("no C compiler (cc) on $PATH: the C client is not tested here (scripts/deps.sh installs gcc)")
		return cs
	}
	out := filepath.Join(t.TempDir(), "warden-exec")
	b, err := exec.Command(cc, "-O2", "-Wall", "-Wextra", "-o", out, "native/warden-exec.c").CombinedOutput()
	if err != nil {
		t.Fatalf("the C client does not build: %v\n%s", err, b)
	}
	if len(b) > 0 {
		t.Logf("the C compiler warns:\n%s", b)
	}
	return append(cs, client{name: "c", path: out})
}

// fakeSupervisor serves one session's socket in home as a supervisor
// would, answering each request with answer and handing it to got.
func fakeSupervisor(t *testing.T, home, session string, answer execwire.Response) <-chan execwire.Request {
	t.Helper()
	path := execwire.SocketPath(home, session)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: path, Net: "unixpacket"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	got := make(chan execwire.Request, 1)
	go func() {
		for {
			c, err := l.AcceptUnix()
			if err != nil {
				return
			}
			buf := make([]byte, execwire.MaxRequest)
			oob := make([]byte, 64)
			n, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
			if err != nil {
				c.Close()
				continue
			}
			// The client's streams: a supervisor runs the command with
			// them; here they are only counted and closed.
			streams := 0
			if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
				for _, m := range msgs {
					fds, _ := unix.ParseUnixRights(&m)
					for _, fd := range fds {
						unix.Close(fd)
						streams++
					}
				}
			}
			var req execwire.Request
			if json.Unmarshal(buf[:n], &req) != nil {
				req.Warden = "UNREADABLE: " + string(buf[:n])
			}
			if streams != 3 {
				req.Warden = "NOT THREE STREAMS"
			}
			b, _ := json.Marshal(answer)
			c.Write(b)
			c.Close()
			got <- req
		}
	}()
	return got
}

// TestClientsSpeakTheWire: both clients find a session's socket by the
// same name, send the same request (warden, arguments, directory,
// environment, a hook's payload, with the three streams), exit with the
// supervisor's status, and run the warden binary (with the payload on its
// stdin) when it answers fallback or nobody serves the session.
func TestClientsSpeakTheWire(t *testing.T) {
	for _, cl := range clients(t) {
		t.Run(cl.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "h")
			dir := t.TempDir()
			// A warden that says what it was given.
			warden := filepath.Join(t.TempDir(), "warden")
			if err := os.WriteFile(warden, []byte("#!/bin/sh\necho \"warden ran: $*\"\ncat\nexit 9\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			run := func(stdin string, extraEnv []string, args ...string) (int, string) {
				t.Helper()
				cmd := exec.Command(cl.path, args...)
				cmd.Dir = dir
				cmd.Env = append(append(append(os.Environ(), cl.env...), "PWD="+dir, "WARDEN_WIRE_TEST=a\"b\\c\td\x01é"), extraEnv...)
				cmd.Stdin = strings.NewReader(stdin)
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				err := cmd.Run()
				var ee *exec.ExitError
				if err != nil && !errors.As(err, &ee) {
					t.Fatalf("warden-exec %q: %v", args, err)
				}
				return cmd.ProcessState.ExitCode(), out.String()
			}
			receive := func(got <-chan execwire.Request) execwire.Request {
				t.Helper()
				select {
				case r := <-got:
					return r
				case <-time.After(10 * time.Second):
					t.Fatal("the client sent the supervisor nothing")
				}
				return execwire.Request{}
			}

			for _, session := range []string{"s1", "019a-codex-1", "8f0c1d2e-0000-4000-8000-000000000001", "sé 1/x"} {
				got := fakeSupervisor(t, home, session, execwire.Response{Exit: 7})
				args := []string{"--home", home, "exec", "--profile", "workspace", "--session", session, "--", "ls", "-la", "a b", "ü"}
				status, out := run("", nil, append([]string{warden}, args...)...)
				if status != 7 {
					t.Fatalf("session %q: exit %d, want the supervisor's 7\n%s", session, status, out)
				}
				req := receive(got)
				if req.Version != execwire.Version || req.Warden != warden || !slices.Equal(req.Args, args) || req.Dir != dir || req.Stdin != nil ||
					!slices.Contains(req.Env, "WARDEN_WIRE_TEST=a\"b\\c\td\x01é") {
					t.Fatalf("session %q: the supervisor got %+v", session, req)
				}
			}

			// A hook: its payload travels with it, and its session picks
			// the socket.
			payload := `{"session_id":"s2","transcript_path":"/t","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls \"x\""}}`
			got := fakeSupervisor(t, home, "s2", execwire.Response{Exit: 0})
			if status, out := run(payload, nil, warden, "hook", "claude", "--home", home); status != 0 {
				t.Fatalf("hook: exit %d\n%s", status, out)
			}
			if req := receive(got); string(req.Stdin) != payload || !slices.Equal(req.Args, []string{"hook", "claude", "--home", home}) {
				t.Fatalf("hook: the supervisor got %+v", req)
			}

			// Fallback: the warden binary runs with the same arguments, and
			// a hook's payload on its stdin.
			fakeSupervisor(t, home, "s3", execwire.Response{Fallback: "the world must start anew"})
			fb := strings.Replace(payload, `"s2"`, `"s3"`, 1)
			status, out := run(fb, nil, warden, "hook", "claude", "--home", home)
			if status != 9 || !strings.Contains(out, "warden ran: hook claude --home "+home) || !strings.Contains(out, fb) {
				t.Fatalf("hook after fallback: exit %d\n%s", status, out)
			}
			// Nobody serves the session, or the event is not one a
			// supervisor answers: the warden binary.
			for _, p := range []string{strings.Replace(payload, `"s2"`, `"nobody"`, 1), strings.Replace(payload, "PreToolUse", "SessionEnd", 1)} {
				status, out = run(p, nil, warden, "hook", "claude", "--home", home)
				if status != 9 || !strings.Contains(out, p) {
					t.Fatalf("hook nobody serves: exit %d\n%s", status, out)
				}
			}
			status, out = run("", nil, warden, "--home", home, "exec", "--session", "nobody", "--", "true")
			if status != 9 || !strings.Contains(out, "warden ran: --home "+home+" exec --session nobody -- true") {
				t.Fatalf("exec nobody serves: exit %d\n%s", status, out)
			}
			// Words that are not UTF-8 would not survive JSON: the warden
			// binary gets them as they are.
			got = fakeSupervisor(t, home, "s4", execwire.Response{Exit: 0})
			status, out = run("", nil, warden, "--home", home, "exec", "--session", "s4", "--", "cat", "x\xffy")
			if status != 9 || !strings.Contains(out, "-- cat x\xffy") {
				t.Fatalf("a word that is not UTF-8: exit %d\n%s", status, out)
			}
			select {
			case r := <-got:
				t.Fatalf("a word that is not UTF-8 went to the supervisor: %q", r.Args)
			default:
			}
		})
	}
}
