package session

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// attackTimeout bounds each step of an attack case.
const attackTimeout = 45 * time.Second

// A verdictCase is one attack case played and judged.
type verdictCase struct {
	Name    string
	Results []result
	Effects []string
	Skipped string
}

// playAttack plays one attack case in a fresh world, with GITHUB_TOKEN in
// the host's environment, and returns what each step did and its effects.
func playAttack(t *testing.T, h *harness, s script, direct bool) verdictCase {
	w := newWorld(t, h, worldOptions{project: s.Project, files: s.Files, token: true, worktree: s.Worktree})
	cwd := w.fill(s.Cwd)
	if cwd != "" {
		// Made when missing: a directory made is no effect by itself.
		if err := os.MkdirAll(cwd, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	host := newHostIn(w, direct, cwd)
	var results []result
	for i, st := range s.Steps {
		cmd := w.fill(st.Command)
		timeout := st.Timeout
		if timeout == 0 {
			timeout = attackTimeout
		}
		r := host.callTool(st.Tool, cmd, timeout)
		results = append(results, r)
		what := r.where()
		if r.ran() {
			what += fmt.Sprintf(", exit %d", r.Exit)
		}
		if st.Tool != "" {
			cmd = st.Tool + " " + cmd
		}
		t.Logf("#%d %s  [%s, %s] %s", i+1, oneLine(cmd), r.Verdict, what, oneLine(clip(r.Reason, 160)))
		if r.ran() && r.Output != "" {
			t.Logf("   output: %s", oneLine(clip(r.Output, 300)))
		}
	}
	host.end()
	// The user comes back to the project after the session and runs git
	// there, on the host: what that runs is the case's effect too.
	user := w.userGit(t)
	return verdictCase{Name: s.Group + "/" + s.Name, Results: results, Effects: append(user, w.effects(t, results)...)}
}

// TestAttacks plays each attack case of testdata/attacks through warden's
// Claude Code hook and runs what the hook lets run as Claude Code would. A
// case fails on any effect: a secret printed or left where the agent can
// read it, a file outside the writable set changed, the listener reached.
// An ask is a refusal (a human sees it); a deny is one too.
//
// With -e2e.direct the cases run with no hook, and a case fails when it has
// NO effect: a check that each case is live.
func TestAttacks(t *testing.T) {
	h := setup(t)
	t.Parallel()
	cases := loadCorpus(t, filepath.Join("testdata", "attacks"), "go")
	if h.metadata == "" {
		t.Logf("nothing answers at 169.254.169.254 here: cases that reach it have no observable effect on this machine")
	}
	var (
		mu     sync.Mutex
		played []verdictCase
	)
	t.Run("cases", func(t *testing.T) {
		for _, s := range cases {
			t.Run(s.Group+"/"+s.Name, func(t *testing.T) {
				t.Parallel()
				if tool := h.missing(s.Requires); tool != "" {
					mu.Lock()
					played = append(played, verdictCase{Name: s.Group + "/" + s.Name, Skipped: tool + " is not installed"})
					mu.Unlock()
					t.Skipf("%s is not installed", tool)
				}
				v := playAttack(t, h, s, *flagDirect)
				mu.Lock()
				played = append(played, v)
				mu.Unlock()
				switch {
				case *flagDirect && len(v.Effects) == 0:
					t.Errorf("%s has no effect even with no hook: the case is inert", v.Name)
				case *flagDirect:
					t.Logf("live: %s", strings.Join(v.Effects, "; "))
				case len(v.Effects) > 0:
					t.Errorf("%s had an effect (%s):\n  %s", v.Name, stepsSummary(v.Results), strings.Join(v.Effects, "\n  "))
				}
			})
		}
	})
	t.Logf("%s", attackSummary(played, *flagDirect))
}

// stepsSummary says how each step of a case went: "allow→warden exec, ask".
func stepsSummary(rs []result) string {
	var parts []string
	for _, r := range rs {
		s := r.Verdict
		if r.ran() {
			s += " → " + r.where()
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// attackSummary groups the cases by class (their corpus file) and by how
// each ended: refused (no step ran: each was denied or asked), contained
// (some step ran, with no effect), or with an effect.
func attackSummary(played []verdictCase, direct bool) string {
	sort.Slice(played, func(i, j int) bool { return played[i].Name < played[j].Name })
	type tally struct{ cases, refused, contained, effect, skipped, onHost int }
	classes := map[string]*tally{}
	var order []string
	var all tally
	for _, v := range played {
		class, _, _ := strings.Cut(v.Name, "/")
		if classes[class] == nil {
			classes[class] = &tally{}
			order = append(order, class)
		}
		for _, c := range []*tally{classes[class], &all} {
			c.cases++
			ran := false
			for _, r := range v.Results {
				ran = ran || r.ran()
				if r.ran() && !r.Contained {
					c.onHost++
				}
			}
			switch {
			case v.Skipped != "":
				c.skipped++
			case len(v.Effects) > 0:
				c.effect++
			case ran:
				c.contained++
			default:
				c.refused++
			}
		}
	}
	var b strings.Builder
	if direct {
		fmt.Fprintf(&b, "attack cases with no hook: %d of %d live (with an effect), %d skipped\n", all.effect, all.cases, all.skipped)
	} else {
		fmt.Fprintf(&b, "attack cases: %d of %d with an effect; %d refused (denied or asked), %d contained (ran, no effect), %d skipped; %d steps ran on the host, not in warden exec\n",
			all.effect, all.cases, all.refused, all.contained, all.skipped, all.onHost)
	}
	fmt.Fprintf(&b, "  %-20s %5s %7s %9s %6s %7s\n", "class", "cases", "refused", "contained", "effect", "skipped")
	for _, class := range order {
		c := classes[class]
		fmt.Fprintf(&b, "  %-20s %5d %7d %9d %6d %7d\n", class, c.cases, c.refused, c.contained, c.effect, c.skipped)
	}
	for _, v := range played {
		switch {
		case v.Skipped != "":
			fmt.Fprintf(&b, "  SKIP   %s: %s\n", v.Name, v.Skipped)
		case len(v.Effects) > 0 && !direct:
			fmt.Fprintf(&b, "  EFFECT %s [%s]: %s\n", v.Name, stepsSummary(v.Results), strings.Join(v.Effects, "; "))
		case len(v.Effects) == 0 && direct:
			fmt.Fprintf(&b, "  INERT  %s [%s]\n", v.Name, stepsSummary(v.Results))
		case !direct:
			fmt.Fprintf(&b, "  held   %s [%s]\n", v.Name, stepsSummary(v.Results))
		}
	}
	return b.String()
}
