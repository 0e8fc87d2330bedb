//go:build amd64 || arm64

package sandbox_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden/sandbox"
)

// TestAloneRunsFindANewSandbox: one-shot runs served by a long-lived
// sandbox (Command.Alone) must each find it as a sandbox of their own would
// be: nothing an earlier run left in /tmp, /dev/shm or the IPC namespace,
// and no process of it, even one that left its process group; and nothing
// a run starts outlives it. What the sandbox mounts into /tmp (the home and
// project, which lie under /tmp here) is kept.
func TestAloneRunsFindANewSandbox(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	m := testManager(t.TempDir())
	spec, home := workspaceSpec(t)
	spec.Tmp, spec.Quarantine = "", ""
	spec.UserHome = home
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(home, "probe")
	if data, err := os.ReadFile(self); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(probe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := m.Start(ctx, "oneshot", "workspace", spec); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _, _ = m.Stop(context.Background(), "oneshot") })
	run := func(script string) string {
		t.Helper()
		var out bytes.Buffer
		res, err := m.Exec(ctx, "oneshot", sandbox.Command{
			Args: []string{"/bin/bash", "-c", script}, Dir: spec.Project,
			Env:    []string{"PATH=" + systemPath, "HOME=" + home},
			Stdout: &out, Stderr: &out, Alone: true,
		}, sandbox.Limits{Wall: 20 * time.Second})
		if err != nil {
			t.Fatalf("Exec %q: %v", script, err)
		}
		if res.ExitCode != 0 {
			t.Fatalf("%q: exit %d: %s", script, res.ExitCode, out.String())
		}
		return out.String()
	}
	out := run(`set -e
		echo left > /tmp/left; mkdir -p /tmp/d/e; echo left > /tmp/d/e/f; echo left > /dev/shm/left
		ipcmk -M 4096 >/dev/null; ipcmk -Q >/dev/null; ipcmk -S 1 >/dev/null
		` + probe + ` sandbox-mqueue make left-queue
		setsid sleep 1000 </dev/null >/dev/null 2>&1 &
		(trap '' HUP; exec -a left-behind sleep 1000) </dev/null >/dev/null 2>&1 &
		ipcs | grep -c 0x; ls /tmp`)
	if !strings.Contains(out, "\n3\n") || !strings.Contains(out, "left") {
		t.Fatalf("the first run did not leave what the test needs:\n%s", out)
	}
	out = run(`ls -A /tmp /dev/shm; ipcs -m -q -s | grep -c 0x; ` + probe + ` sandbox-mqueue look left-queue; ps -eo comm= | grep -c sleep; cat ` + filepath.Join(spec.Project, ".git", "config"))
	for _, left := range []string{"left\n", "d\n"} {
		if strings.Contains(out, left) {
			t.Errorf("the next run finds %q from the last one:\n%s", strings.TrimSpace(left), out)
		}
	}
	if !strings.Contains(out, "\n0\ngone\n0\n") {
		t.Errorf("the next run finds IPC objects or processes of the last one (want 0, gone, 0):\n%s", out)
	}
	if !strings.Contains(out, filepath.Base(filepath.Dir(home))) || !strings.Contains(out, "[core]") {
		t.Errorf("the home mounted into /tmp went with what the last run left:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(spec.Project, ".git", "config")); err != nil {
		t.Errorf("the project lost a file: %v", err)
	}
	// What a run leaves running dies when it ends, not at the next run:
	// a process writing into the project every 50 ms stops by then.
	mark := filepath.Join(spec.Project, "ticks")
	run(`(setsid bash -c 'while :; do echo t >> ` + mark + `; sleep 0.05; done' &) ; sleep 0.3`)
	before, _ := os.ReadFile(mark)
	time.Sleep(400 * time.Millisecond)
	after, _ := os.ReadFile(mark)
	if len(before) == 0 || len(after) != len(before) {
		t.Errorf("a process a run left went on after it ended: %d bytes, then %d", len(before), len(after))
	}
}
