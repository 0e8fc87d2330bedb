package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden/sandbox"
)

// plantedName is the file plantedGuard removes: a stand-in for what the
// real GitGuard (app.gitGuard) takes out of a nested repository, so that
// these tests see when the engine sweeps, in this process and in the
// supervisor's.
const plantedName = "warden-gitguard-planted"

// plantedGuard is the test managers' GitGuard: its sweep removes
// plantedName from the project and says so.
func plantedGuard(s *sandbox.Spec, _ bool) func() []string {
	p := filepath.Join(s.Project, plantedName)
	return func() []string {
		if err := os.Remove(p); err == nil {
			return []string{"removed " + p}
		}
		return nil
	}
}

// TestWorldSweepsWithTheGitGuard: a long-lived sandbox calls its
// GitGuard's sweep after each command (its warning joins the result), at
// each health check (what a background process writes after its command),
// and when it stops.
func TestWorldSweepsWithTheGitGuard(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	m := testManager(t.TempDir())
	spec, home := workspaceSpec(t)
	spec.Tmp = ""
	spec.Background, spec.Session, spec.UserHome = true, "session-gitguard", home
	ctx := context.Background()
	if _, err := m.Start(ctx, "gg", "workspace", spec); err != nil {
		t.Fatalf("Start: %v", err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_, _ = m.Stop(context.Background(), "gg")
		}
	})
	planted := filepath.Join(spec.Project, plantedName)
	run := func(script string) sandbox.Result {
		t.Helper()
		res, err := m.Exec(ctx, "gg", sandbox.Command{
			Args: []string{"/bin/bash", "-c", script}, Dir: spec.Project,
			Env: []string{"PATH=" + systemPath, "HOME=" + home},
		}, sandbox.Limits{Wall: 20 * time.Second})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("Exec %q: exit %d, %v", script, res.ExitCode, err)
		}
		return res
	}

	// The world's health check (every 100 ms here) sweeps too, and on a
	// loaded machine it may take the file between the command's end and
	// the command's own sweep, whose result then has no warning: that
	// race lost, the command runs again.
	for attempt := 1; ; attempt++ {
		res := run("touch " + plantedName)
		if _, err := os.Lstat(planted); err == nil {
			t.Fatalf("after the command: %s still there (%q)", planted, res.Warnings)
		}
		if slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, plantedName) }) {
			break
		}
		if attempt == 5 {
			t.Fatalf("after the command: %s swept each time, but never by the command's own sweep (no warning: %q)", planted, res.Warnings)
		}
	}

	run("(sleep 0.3; touch " + plantedName + ") >/dev/null 2>&1 &")
	time.Sleep(400 * time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Lstat(planted); err != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Lstat(planted); err == nil {
		t.Fatalf("a background process wrote %s after its command, and no health check swept it", planted)
	}

	run("(while true; do touch " + plantedName + "; sleep 0.02; done) >/dev/null 2>&1 &")
	time.Sleep(300 * time.Millisecond)
	if _, err := m.Stop(ctx, "gg"); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	stopped = true
	if _, err := os.Lstat(planted); err == nil {
		t.Errorf("the world stopped with %s, which its background process wrote, still in the project", planted)
	}
}

// TestOneShotRunSweepsWithTheGitGuard: a one-shot run calls the sweep once
// its command has ended, and its warning joins the run's.
func TestOneShotRunSweepsWithTheGitGuard(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	spec, home := workspaceSpec(t)
	n := &sandbox.Native{GitGuard: plantedGuard}
	res, err := n.Run(context.Background(), spec, sandbox.Command{
		Args: []string{"/bin/bash", "-c", "touch " + plantedName}, Dir: spec.Project,
		Env: []string{"PATH=" + systemPath, "HOME=" + home},
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run: exit %d, %v", res.ExitCode, err)
	}
	if _, err := os.Lstat(filepath.Join(spec.Project, plantedName)); err == nil || !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, plantedName) }) {
		t.Fatalf("after the run: %s still there, or no warning (%q)", plantedName, res.Warnings)
	}
}

// TestInterruptedCommandIsSwept: a world's command whose caller gave up
// (its context ended, so Exec returns an error) has run all the same; what
// it wrote is swept before Exec returns, not left for a health check (this
// world's supervisor checks once an hour).
func TestInterruptedCommandIsSwept(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	m := testManager(t.TempDir())
	spec, home := workspaceSpec(t)
	spec.Tmp = ""
	spec.Background, spec.Session, spec.UserHome = true, "session-gitguard-interrupted", home
	if _, err := m.Start(context.Background(), "nohealth-gg", "workspace", spec); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _, _ = m.Stop(context.Background(), "nohealth-gg") })
	planted := filepath.Join(spec.Project, plantedName)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Lstat(planted); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
	}()
	_, err := m.Exec(ctx, "nohealth-gg", sandbox.Command{
		Args: []string{"/bin/bash", "-c", "touch " + plantedName + "; sleep 60"}, Dir: spec.Project,
		Env: []string{"PATH=" + systemPath, "HOME=" + home},
	}, sandbox.Limits{Wall: 90 * time.Second})
	if err == nil {
		t.Fatal("Exec of an interrupted command returned no error")
	}
	if _, lerr := os.Lstat(planted); lerr == nil {
		t.Fatalf("Exec returned (%v) with %s, which its interrupted command wrote, still in the project", err, planted)
	}
}
