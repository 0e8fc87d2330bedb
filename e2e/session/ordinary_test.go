package session

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// minWorking is the share of ordinary commands that must work (issue 22).
const minWorking = 0.97

// An outcome is one ordinary step judged: it worked, or why not.
type outcome struct {
	Session string
	Step    int
	Line    int
	Command string
	Result  result
	Failure string // "" when the step worked
	Cause   string // a short class of the failure, for the summary
}

func (o outcome) id() string { return fmt.Sprintf("%s#%d (line %d)", o.Session, o.Step, o.Line) }

// judgeStep decides whether an ordinary step worked: it asked when it was
// meant to, and otherwise ran, exited as expected and left what it should.
func judgeStep(w *world, st step, r result) (failure, cause string) {
	if st.Ask {
		switch {
		case r.asked():
			return "", ""
		case r.Verdict == verdictDeny:
			return "denied instead of asking: " + r.Reason, "denied (should ask)"
		default:
			return fmt.Sprintf("ran (%s, exit %d) instead of asking", r.where(), r.Exit), "ran (should ask)"
		}
	}
	switch {
	case r.Verdict == verdictDeny:
		return "denied: " + r.Reason, "denied"
	case r.Verdict == verdictNone:
		return "no decision from the hook, so the host asks: " + r.Reason, "hook gave no decision"
	case r.asked():
		return "asked: " + r.Reason, "asked"
	case r.TimedOut:
		return fmt.Sprintf("timed out (%s) after %s: %s", r.where(), r.Elapsed.Round(100*time.Millisecond), clip(r.Output, 300)), "timed out" + symptom(r.Output)
	case r.Exit != st.Exit:
		return fmt.Sprintf("exit %d, want %d (%s): %s", r.Exit, st.Exit, r.where(), clip(r.Output, 400)), "failed when run" + symptom(r.Output)
	}
	for _, want := range st.Contains {
		if !strings.Contains(r.Output, w.fill(want)) {
			return fmt.Sprintf("output lacks %q (%s): %s", want, r.where(), clip(r.Output, 300)), "wrong output"
		}
	}
	for _, bad := range st.Lacks {
		if strings.Contains(r.Output, w.fill(bad)) {
			return fmt.Sprintf("output holds %q (%s): %s", bad, r.where(), clip(r.Output, 300)), "wrong output"
		}
	}
	for _, f := range st.FileHas {
		data, err := os.ReadFile(filepath.Join(w.project, w.fill(f.Path)))
		if err != nil {
			return fmt.Sprintf("%s: %v (%s)", f.Path, err, r.where()), "file not written"
		}
		if f.Text != "" && !strings.Contains(string(data), w.fill(f.Text)) {
			return fmt.Sprintf("%s lacks %q (%s)", f.Path, f.Text, r.where()), "file not written"
		}
	}
	for _, p := range st.FileGone {
		if _, err := os.Lstat(filepath.Join(w.project, w.fill(p))); err == nil {
			return fmt.Sprintf("%s still exists (%s)", p, r.where()), "file not removed"
		}
	}
	return "", ""
}

// symptom names what the output of a failed command points at, for the
// summary by cause; "" when nothing telling shows.
func symptom(out string) string {
	for _, s := range []struct{ text, what string }{
		{"warden: waiting for approval", "waiting for a warden approval"},
		{"Forbidden", "the network refused"},
		{"403", "the network refused"},
		{"Read-only file system", "a file system refused"},
		{"Permission denied", "a file system refused"},
		{"Operation not permitted", "refused by the kernel"},
		{"Device or resource busy", "a sandbox mount in the way"},
	} {
		if strings.Contains(out, s.text) {
			return ": " + s.what
		}
	}
	return ""
}

// tmpName finds the /tmp paths a command names.
var tmpName = regexp.MustCompile(`/tmp/[A-Za-z0-9._-]+`)

// removeTmpNamedIn removes what a session left in the host's /tmp under the
// names its commands use, when they ran on the host (with no hook, or a
// warden that does not give each session its own /tmp).
func (w *world) removeTmpNamedIn(steps []step) {
	for _, st := range steps {
		for _, p := range tmpName.FindAllString(st.Command, -1) {
			if fi, err := os.Lstat(p); err == nil && !fi.ModTime().Before(w.started) {
				removeAll(p)
			}
		}
	}
}

// playSession runs one ordinary session in a fresh world and judges each step.
func playSession(t *testing.T, h *harness, s script, direct bool) []outcome {
	w := newWorld(t, h, worldOptions{project: s.Project, files: s.Files, worktree: s.Worktree, goCache: true})
	host := newHostIn(w, direct, w.fill(s.Cwd))
	defer host.end()
	defer w.removeTmpNamedIn(s.Steps)
	var out []outcome
	for i, st := range s.Steps {
		cmd := w.fill(st.Command)
		if direct && st.Ask {
			t.Logf("skip #%d %s  [it must ask, and with no hook nothing asks]", i+1, oneLine(cmd))
			continue
		}
		r := host.callTool(st.Tool, cmd, st.Timeout)
		if st.Tool != "" {
			cmd = st.Tool + " " + cmd
		}
		o := outcome{Session: s.Group + "/" + s.Name, Step: i + 1, Line: st.Line, Command: cmd, Result: r}
		o.Failure, o.Cause = judgeStep(w, st, r)
		if o.Failure == "" {
			t.Logf("ok   #%d %s  [%s, %s, %s]", i+1, oneLine(cmd), r.Verdict, r.where(), r.Elapsed.Round(10*time.Millisecond))
		} else {
			t.Logf("FAIL #%d %s  [%s]: %s", i+1, oneLine(cmd), r.Verdict, o.Failure)
		}
		out = append(out, o)
	}
	return out
}

// TestOrdinaryWork replays ordinary coding-agent sessions in Go, Node, Python
// and C projects through warden's Claude Code hook, runs each command as
// Claude Code would, and fails when less than 97% of them work.
//
// With -e2e.direct the commands run with no hook (those that must ask are
// left out), and every one must work: a check of the corpus itself.
func TestOrdinaryWork(t *testing.T) {
	h := setup(t)
	t.Parallel()
	sessions := loadCorpus(t, filepath.Join("testdata", "sessions"), "")
	var (
		mu       sync.Mutex
		outcomes []outcome
		skipped  []string
	)
	t.Run("sessions", func(t *testing.T) {
		for _, s := range sessions {
			t.Run(s.Group+"/"+s.Name, func(t *testing.T) {
				t.Parallel()
				if tool := h.missing(s.Requires); tool != "" {
					mu.Lock()
					skipped = append(skipped, fmt.Sprintf("%s/%s (%d commands): %s is not installed", s.Group, s.Name, len(s.Steps), tool))
					mu.Unlock()
					t.Skipf("%s is not installed", tool)
				}
				got := playSession(t, h, s, *flagDirect)
				mu.Lock()
				outcomes = append(outcomes, got...)
				mu.Unlock()
			})
		}
	})
	if len(outcomes) == 0 {
		t.Fatalf("no ordinary session ran (skipped: %s)", strings.Join(skipped, "; "))
	}
	sort.Slice(outcomes, func(i, j int) bool {
		if outcomes[i].Session != outcomes[j].Session {
			return outcomes[i].Session < outcomes[j].Session
		}
		return outcomes[i].Step < outcomes[j].Step
	})
	var failed []outcome
	causes := map[string]int{}
	contained := 0
	for _, o := range outcomes {
		if o.Result.Contained {
			contained++
		}
		if o.Failure != "" {
			failed = append(failed, o)
			causes[o.Cause]++
		}
	}
	worked := len(outcomes) - len(failed)
	share := float64(worked) / float64(len(outcomes))
	var b strings.Builder
	fmt.Fprintf(&b, "ordinary work: %d of %d commands worked (%.1f%%; want at least %.0f%%); %d ran rewritten into warden exec, %d on the host\n",
		worked, len(outcomes), 100*share, 100*minWorking, contained, countRanOnHost(outcomes))
	for _, s := range skipped {
		fmt.Fprintf(&b, "  skipped %s\n", s)
	}
	if len(causes) > 0 {
		fmt.Fprintf(&b, "failures by cause:\n")
		for _, c := range sortedKeys(causes) {
			fmt.Fprintf(&b, "  %3d  %s\n", causes[c], c)
		}
		fmt.Fprintf(&b, "failures:\n")
		for _, o := range failed {
			fmt.Fprintf(&b, "  %s  %s\n        %s\n", o.id(), oneLine(o.Command), o.Failure)
		}
	}
	if share < minWorking || *flagDirect && len(failed) > 0 {
		t.Errorf("%s", b.String())
	} else {
		t.Logf("%s", b.String())
	}
}

func countRanOnHost(outcomes []outcome) int {
	n := 0
	for _, o := range outcomes {
		if o.Result.ran() && !o.Result.Contained {
			n++
		}
	}
	return n
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

// oneLine shows a command on one line, shortened.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", "⏎")
	if r := []rune(s); len(r) > 110 {
		return string(r[:110]) + "…"
	}
	return s
}
