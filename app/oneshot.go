package app

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/sandbox"
)

// A one-shot run (warden exec with no session) gets a sandbox that is new to
// it, but it need not be built for it: where its profile could be a
// session's world, the run goes into a long-lived sandbox kept for one-shot
// runs of that directory and profile, which runs it alone (Command.Alone):
// emptied first of what the last run left (processes, /tmp, /dev/shm, IPC
// objects), and with everything the run started killed when it ends. The
// command sees what a sandbox of its own would give it, and saves the
// namespaces, mounts, Landlock domain and cgroup a start builds. A run that
// finds no such sandbox running under its spec (the first here, one after
// it stopped idle, or after the policy changed what it would be) has a
// sandbox of its own, and, when another run came here within
// oneShotIdleStop (oneShotAgain), starts the kept one in the background
// once it is done; a run while another has the kept sandbox has one of its
// own too.

// oneShotIdleStop is how long a one-shot runs' sandbox waits for the next
// run before it stops.
const oneShotIdleStop = 5 * time.Minute

// oneShotWorld returns the name of the long-lived sandbox for one-shot runs
// of profile in dir, when this run can go there: no session (a session's
// runs have its world) and no requester named (its supervisor's egress
// proxy decides for none), and what sessionWorld asks of a world
// otherwise, with commands that may create processes (they start from the
// world's launcher).
func (a *App) oneShotWorld(profile, dir string, spec sandbox.Spec, req *warden.Request, o ExecOverride) (string, bool) {
	if !a.Policy.Sandbox.KeepOneShot || req.Session != "" || req.RequestedBy != "" || req.Autonomous ||
		spec.NoSpawn || spec.Limits.CPU > 0 || !a.worldCanHold(profile, spec, o) {
		return "", false
	}
	world := OneShotWorld(profile, dir)
	return world, !a.worldUnavailable(world)
}

// oneShotPrefix begins the names of one-shot runs' sandboxes.
const oneShotPrefix = "oneshot-"

// OneShotWorld names the sandbox one-shot runs of profile in dir share.
func OneShotWorld(profile, dir string) string {
	if profile == "" {
		profile = config.ProfileWorkspace
	}
	sum := sha256.Sum256([]byte(filepath.Clean(dir) + "\x00" + profile))
	return oneShotPrefix + hex.EncodeToString(sum[:10])
}

// IsOneShotWorld reports whether name is a sandbox kept for one-shot runs.
func IsOneShotWorld(name string) bool { return strings.HasPrefix(name, oneShotPrefix) }

// oneShotAgain reports whether a one-shot run of world ran within
// oneShotIdleStop before this one, and notes this one (a stamp beside the
// sandbox's run directory): a kept sandbox is started only for runs that
// come again.
func (a *App) oneShotAgain(world string) bool {
	stamp := filepath.Join(a.Home.Abs(), RunDir, world+".last")
	st, err := os.Stat(stamp)
	again := err == nil && a.Now().Sub(st.ModTime()) < oneShotIdleStop
	if f, err := os.OpenFile(stamp, os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		f.Close()
	}
	now := a.Now()
	_ = os.Chtimes(stamp, now, now)
	return again
}
