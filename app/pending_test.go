package app

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwarden/warden/sandbox"
)

// TestKilledRunIsJudgedByTheNextWarden: a one-shot git line whose warden
// the agent host killed (with its command, before the take-back and the
// sweeps) left its note; the next warden process of the home does them:
// the key that runs a program comes out of .git/config, and a repository
// the command made loses its own.
func TestKilledRunIsJudgedByTheNextWarden(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	a := openTestApp(t, Options{OpenDatabase: true})
	repo := t.TempDir()
	run := shIn(t, repo)
	run("git init -q && git commit -q --allow-empty -m first")
	cfg := filepath.Join(repo, ".git", "config")
	before, _ := os.ReadFile(cfg)
	s := sandbox.Spec{Project: repo, ProjectWritable: true, Quarantine: filepath.Join(a.Home.Abs(), QuarantineDir)}
	a.beginPending(s, true, before)
	if sweep := a.gitGuard(&s, true); sweep == nil {
		t.Fatal("no git guard for the run")
	}
	note := a.pending.path
	// The command runs, and its warden is killed before it can look.
	run(`git config core.fsmonitor "touch pwned; false" && git init -q sub && git -C sub commit -q --allow-empty -m x && git -C sub config core.fsmonitor "touch pwned2; false" && git add sub`)
	// Its process gone: a pid that no longer runs.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(note)
	var r pendingRun
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	live := r
	r.PID = dead.Process.Pid
	b, _ = json.Marshal(r)
	if err := os.WriteFile(note, b, 0o600); err != nil {
		t.Fatal(err)
	}

	next, err := Open(context.Background(), a.Home, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if now, _ := os.ReadFile(cfg); strings.Contains(string(now), "fsmonitor") {
		t.Errorf(".git/config still sets core.fsmonitor after the next warden:\n%s", now)
	}
	if out, _ := exec.Command("git", "-C", filepath.Join(repo, "sub"), "config", "core.fsmonitor").Output(); len(out) > 0 {
		t.Errorf("the repository the command made keeps core.fsmonitor %q", out)
	}
	if _, err := os.Stat(note); err == nil {
		t.Error("the note is still there after it was acted on")
	}

	// A note whose process still runs is left to it.
	live.path = note
	a.pending = &live
	a.writePending()
	run(`git config core.fsmonitor "touch pwned; false"`)
	if ws := next.recoverPending(); len(ws) != 0 {
		t.Errorf("a live run's note was acted on: %q", ws)
	}
	if now, _ := os.ReadFile(cfg); !strings.Contains(string(now), "fsmonitor") {
		t.Error("a live run's config was taken back by another process")
	}
	a.endPending()
}
