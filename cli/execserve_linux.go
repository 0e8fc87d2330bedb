//go:build amd64 || arm64

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/internal/execwire"
	"github.com/agentwarden/warden/internal/msgbuf"
	"github.com/agentwarden/warden/sandbox"
)

// serveExecs serves warden-exec on path until ctx ends: each request is a
// `warden exec` command line, run here exactly as the warden binary would
// run it (its own decision, audit and policy, loaded afresh), with the
// client's directory, environment and streams. This process is the
// supervisor of world, which such a run therefore never restarts: it
// answers Fallback, and the client runs the warden binary, which does.
// A session's world serves the session's commands (warden-exec, from the
// hooks' rewrite); a world kept for one-shot runs (session "") serves the
// one-shot runs of its directory and profile (warden exec itself hands
// them over, sparing their decision, audit and sandbox a process of their
// own).
//
// Only one supervisor serves a socket; another finds it taken and leaves
// it. Anything unusual ends in Fallback or in the warden binary: this is a
// shortcut, never a second way in.
func serveExecs(ctx context.Context, home app.Home, path, world, session string) {
	l, err := listenExecs(path)
	if err != nil {
		return
	}
	if session != "" {
		// The requests that are not the world's (the guard profile's) run
		// one-shot sandboxes: keep an init ready for them.
		sandbox.KeepEarly("")
		defer sandbox.DiscardEarly()
	}
	homes := &openedHomes{home: home, world: world, session: session}
	defer homes.closeAll()
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	var mine unix.Stat_t
	if err := unix.Stat(path, &mine); err == nil {
		defer removeIfOurs(path, mine)
	}
	for {
		c, err := l.AcceptUnix()
		if err != nil {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			serveExec(ctx, c, homes)
		}()
	}
}

// listenExecs listens on path unless a live server already does. The run
// directory is warden's own (0700, masked in every sandbox).
func listenExecs(path string) (*net.UnixListener, error) {
	if c, err := net.Dial("unixpacket", path); err == nil {
		c.Close()
		return nil, errors.New("served by another supervisor")
	}
	_ = os.Remove(path) // a dead server's
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	l, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: path, Net: "unixpacket"})
	if err != nil {
		return nil, err
	}
	l.SetUnlinkOnClose(false) // removeIfOurs decides
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// removeIfOurs removes the socket at path when it is still the one this
// server made (mine, its identity when it was made): another supervisor
// may have replaced it since.
func removeIfOurs(path string, mine unix.Stat_t) {
	var there unix.Stat_t
	if unix.Stat(path, &there) == nil && mine.Ino == there.Ino && mine.Dev == there.Dev {
		_ = os.Remove(path)
	}
}

// openedHomes keeps the home opened for the requests, and opens it anew
// when the policy file changes; an old one is closed once no request uses
// it.
type openedHomes struct {
	home    app.Home
	world   string
	session string
	mu      sync.Mutex
	cur     *openedHome
}

type openedHome struct {
	app   *app.App
	stamp string
	uses  int
	old   bool
}

// acquire returns the home opened under the current policy file.
func (o *openedHomes) acquire(ctx context.Context) (*openedHome, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	stamp, err := o.home.PolicyStamp()
	if err != nil {
		return nil, err
	}
	if o.cur == nil || o.cur.stamp != stamp {
		a, err := app.Open(ctx, o.home, app.Options{OpenDatabase: true})
		if err != nil {
			return nil, err
		}
		a.Supervises = o.world
		if o.cur != nil {
			o.cur.old = true
			if o.cur.uses == 0 {
				o.cur.app.Close()
			}
		}
		// The stamp from before the open: a change during it is seen as
		// one on the next request.
		o.cur = &openedHome{app: a, stamp: stamp}
	}
	o.cur.uses++
	return o.cur, nil
}

func (o *openedHomes) release(h *openedHome) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if h.uses--; h.uses == 0 && h.old {
		h.app.Close()
	}
}

func (o *openedHomes) closeAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cur != nil && o.cur.uses == 0 {
		o.cur.app.Close()
	}
	o.cur = nil
}

// serveExec answers one request.
func serveExec(ctx context.Context, c *net.UnixConn, homes *openedHomes) {
	answer := func(r execwire.Response) {
		b, _ := json.Marshal(r)
		_, _ = c.Write(b)
	}
	req, files, why := readExecRequest(c, homes.home, homes.world, homes.session)
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	if why != "" {
		answer(execwire.Response{Fallback: why})
		return
	}
	// The client sends nothing more: a read returns when it hangs up, and
	// then the command is stopped.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		var b [1]byte
		_, _ = c.Read(b[:])
		cancel()
	}()
	h, err := homes.acquire(ctx)
	if err != nil {
		answer(execwire.Response{Fallback: "cannot open the home: " + err.Error()})
		return
	}
	defer homes.release(h)
	e := &env{stdin: files[0], stdout: files[1], stderr: files[2], dir: req.Dir, environ: req.Env, supervises: homes.world, shared: h.app, only: "exec"}
	if req.Stdin != nil {
		e.stdin = bytes.NewReader(req.Stdin) // a hook's payload
		e.only = "hook"
	}
	status := e.main(ctx, req.Args)
	if e.fallback != "" {
		answer(execwire.Response{Fallback: e.fallback})
		return
	}
	answer(execwire.Response{Exit: status})
	if homes.session != "" {
		// Off the answered run's path: the next one-shot run's init.
		sandbox.RefillEarly()
	}
}

var _ [msgbuf.Size - execwire.MaxRequest]byte // a request fits a lent buffer

// readExecRequest reads and checks a request: from this user, a `warden
// exec` of this home (of session, or, for a world kept for one-shot runs,
// a one-shot run of that world's directory and profile) for this process's
// home directory, with its three streams. why says why it is not served.
func readExecRequest(c *net.UnixConn, home app.Home, world, session string) (req execwire.Request, files []*os.File, why string) {
	buf := msgbuf.Get()
	defer msgbuf.Put(buf)
	oob := make([]byte, unix.CmsgSpace(3*4))
	n, oobn, flags, _, err := c.ReadMsgUnix(buf[:execwire.MaxRequest], oob)
	if err != nil {
		return req, nil, "unreadable request"
	}
	files = sandbox.PassedFiles(oob[:oobn])
	if flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0 {
		return req, files, "the request is too large"
	}
	if uid, ok := peerUID(c); !ok || uid != os.Getuid() {
		return req, files, "not this supervisor's user"
	}
	if err := json.Unmarshal(buf[:n], &req); err != nil || req.Version != execwire.Version {
		return req, files, "unreadable request"
	}
	if len(files) != 3 {
		return req, files, "the request came without its three streams"
	}
	if session == "" {
		h, profile, ok := execwire.OneShotTarget(req.Args)
		if !ok || req.Stdin != nil || filepath.Clean(h) != home.Abs() || !filepath.IsAbs(req.Dir) || app.OneShotWorld(profile, req.Dir) != world {
			return req, files, "not a one-shot warden exec of this home, directory and profile"
		}
		return req, files, sameUser(req)
	}
	h, s, ok := execwire.Target(req.Args)
	if !ok {
		// A hook: its session and event are in the payload; it runs with
		// this home named, which is the one the client's would be.
		var host string
		h, host, ok = execwire.HookTarget(req.Args, req.Env)
		s, _ = execwire.HookSession(req.Stdin)
		req.Args = []string{"--home", h, "hook", host}
	} else if req.Stdin != nil {
		ok = false
	}
	if !ok || filepath.Clean(h) != home.Abs() || s != session || !filepath.IsAbs(req.Dir) {
		return req, files, "not a warden exec or hook of this home and session"
	}
	return req, files, sameUser(req)
}

// sameUser says why req is not one this supervisor can run as the warden
// binary would: "" when it is the same binary, with the same values of
// what the run's sandbox is computed from in this process's own
// environment (the home directory, PATH, whose directories stay read-only,
// the user's name and the XDG directories, where git's configuration may
// name programs).
func sameUser(req execwire.Request) string {
	if !sameBinary(req.Warden) {
		return "another warden binary than this supervisor's"
	}
	if execwire.EnvValue(req.Env, "HOME") != os.Getenv("HOME") {
		return "another home directory than this supervisor's"
	}
	names := []string{"PATH", "USER", "LOGNAME"}
	for _, env := range [][]string{req.Env, os.Environ()} {
		for _, kv := range env {
			if strings.HasPrefix(kv, "XDG_") {
				name, _, _ := strings.Cut(kv, "=")
				names = append(names, name)
			}
		}
	}
	for _, n := range names {
		if execwire.EnvValue(req.Env, n) != os.Getenv(n) {
			return "another " + n + " than this supervisor's"
		}
	}
	return ""
}

// sameBinary reports whether path is the binary this process runs: a
// supervisor started before warden was replaced runs the old one, and
// leaves the new one's commands to it.
func sameBinary(path string) bool {
	self, err := os.Executable()
	if err != nil {
		return false
	}
	want, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	var a, b unix.Stat_t
	return unix.Stat(self, &a) == nil && unix.Stat(want, &b) == nil && a.Ino == b.Ino && a.Dev == b.Dev
}

func peerUID(c *net.UnixConn) (int, bool) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, false
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil || credErr != nil {
		return 0, false
	}
	return int(cred.Uid), true
}
