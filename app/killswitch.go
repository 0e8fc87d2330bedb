package app

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/config"
)

// KillFile is the emergency stop's own state in warden's home: while it
// exists, the stop is on. It lives apart from the policy file, so that a
// broken, missing or replaced policy can neither block `warden kill` nor
// turn the stop off; every process looks at it on every decision.
const KillFile = "killswitch"

// KillPath is the emergency stop's state file.
func (h Home) KillPath() string { return filepath.Join(string(h), KillFile) }

// Killed reports whether the emergency stop's state file says it is on. A
// state file that cannot be looked at for any reason but its absence counts
// as on: the stop fails closed.
func (h Home) Killed() bool {
	_, err := os.Lstat(h.KillPath())
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}

// killState is what the state file records of who turned the stop on.
type killState struct {
	On     bool      `json:"on"`
	By     string    `json:"by"`
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
}

// SetKill turns the emergency stop on or off for every process of home.
// On writes the state file (atomically, durably), whatever state the policy
// file is in. Off removes it, and also turns off the policy file's own
// safety.killSwitchActive when that is set, which needs a policy file that
// can be written: until then the stop stays on, and the error says why.
//
// In a fleet (the policy's store.dsn), the fleet's stop is turned too, after
// this home's: on stops every daemon of the fleet, off needs the fleet's off
// as well, or the stop stays on everywhere and the error says so.
func SetKill(h Home, on bool, by, reason string, now time.Time) error {
	return SetKillWith(h, "", on, by, reason, now)
}

// SetKillWith is SetKill with the fleet's database named by override (a
// postgres:// URL from --store) when it is not "", instead of the policy's
// store.dsn.
func SetKillWith(h Home, override string, on bool, by, reason string, now time.Time) error {
	if err := setKill(h, on, by, reason, now); err != nil {
		return err
	}
	if err := setFleetKill(h, override, on, by, reason, now); err != nil {
		what := "off"
		if on {
			what = "on"
		}
		return warden.Errorf(warden.EUnavailable, "the emergency stop could not be turned %s for the fleet", what).Wrap(err).
			WithHint("this home's own stop is " + what + "; check that the fleet's database is reachable and run the command again")
	}
	return nil
}

func setKill(h Home, on bool, by, reason string, now time.Time) error {
	if on {
		b, _ := json.Marshal(killState{On: true, By: by, Reason: reason, At: now.UTC()})
		if err := os.MkdirAll(h.Abs(), 0o700); err != nil {
			return warden.Errorf(warden.EUnavailable, "turn the emergency stop on: cannot create %s", h.Abs()).Wrap(err)
		}
		if err := config.WriteAtomic(h.KillPath(), append(b, '\n'), 0o600); err != nil {
			return warden.Errorf(warden.EUnavailable, "turn the emergency stop on: cannot write %s", h.KillPath()).Wrap(err).
				WithHint("check that warden's home is writable; until then stop the agents by hand")
		}
		return nil
	}
	if err := os.Remove(h.KillPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return warden.Errorf(warden.EUnavailable, "turn the emergency stop off: cannot remove %s", h.KillPath()).Wrap(err)
	}
	p, _, err := h.LoadPolicy()
	if err == nil && p.Safety.KillSwitch {
		if err := config.SetKillSwitch(h.PolicyPath(), false); err != nil {
			return warden.Errorf(warden.EInvalid, "the emergency stop stays on: %s also turns it on (safety.killSwitchActive), and it cannot be changed", h.PolicyPath()).Wrap(err).
				WithHint("fix the policy file, then run `warden unkill` again")
		}
	}
	return nil
}
