//go:build amd64 || arm64

package sandbox_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/agentwarden/warden/sandbox"
)

func oomScoreOf(t *testing.T, pid string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + pid + "/oom_score_adj")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCommandsAreTheMemoryCapsVictims: under a memory cap the kernel kills
// the heaviest process of the sandbox's cgroup, which must be a command,
// not the init or a world's launcher (whose death loses the answer): each
// way a command starts (a one-shot run's stage and init thread, a world's
// stage and launcher) gives it an OOM score raised by 64 MB's share of the
// cap, and the world's init keeps the host's own.
func TestCommandsAreTheMemoryCapsVictims(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	if !platform.CgroupWritable {
		t.Skip("no writable cgroup here: the sandbox has no memory cap to choose a victim under")
	}
	own := oomScoreOf(t, "self")
	guard := guardSpec(t)
	workspace, _ := workspaceSpec(t)
	workspace.Limits.Memory = 1 << 30
	cases := []struct {
		name string
		spec sandbox.Spec
		want int
	}{
		{"guard (64 MB)", guard, min(1000, own+1000)},
		{"workspace (1 GB)", workspace, min(1000, own+63)},
	}
	read := []string{"/bin/cat", "/proc/self/oom_score_adj"}
	for _, c := range cases {
		if c.spec.Limits.Memory == 0 {
			t.Fatalf("%s: the spec has no memory cap", c.name)
		}
		r := runWith(t, c.spec, nil, read...)
		if r.err != nil || strings.TrimSpace(r.stdout) != strconv.Itoa(c.want) {
			t.Errorf("%s, one-shot: the command's OOM score = %v; want %d", c.name, r, c.want)
		}

		m := testManager(t.TempDir())
		ctx := context.Background()
		info, err := m.Start(ctx, "oom", "p", c.spec)
		if err != nil {
			t.Fatalf("%s: Start: %v", c.name, err)
		}
		var out bytes.Buffer
		res, err := m.Exec(ctx, "oom", sandbox.Command{Args: read, Env: []string{"PATH=" + systemPath}, Stdout: &out, Stderr: &out}, sandbox.Limits{})
		if err != nil || res.ExitCode != 0 || strings.TrimSpace(out.String()) != strconv.Itoa(c.want) {
			t.Errorf("%s, in a world: the command's OOM score = %+v %q %v; want %d", c.name, res, out.String(), err, c.want)
		}
		if got := oomScoreOf(t, fmt.Sprint(info.Init)); got != own {
			t.Errorf("%s: the world's init has OOM score %d; want the host's own %d", c.name, got, own)
		}
		if _, err := m.Stop(ctx, "oom"); err != nil {
			t.Fatal(err)
		}
	}
}
