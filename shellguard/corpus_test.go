package shellguard

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/netguard"
)

// corpusDir holds the shared corpora, relative to the package directory.
const corpusDir = "../../shared/corpus"

type corpusRow struct {
	Command string `json:"command"`
	Expect  string `json:"expect"`
	Class   string `json:"class"`
	Group   string `json:"group"`
	Page    string `json:"page"`
}

func loadCorpus(t testing.TB, name string) []corpusRow {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, name))
	if os.IsNotExist(err) {
		t.Skipf("corpus %s not found in %s; it lives in the shared workspace", name, corpusDir)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []corpusRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r corpusRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// corpusEnv and corpusPolicy are the conditions the corpus assumes: a
// developer in a project under their home, with a sandbox available and a
// network policy that lets public hosts through (so that the corpus checks
// the shell guard's own rules; the network's are checked apart).
var corpusEnv = Env{Cwd: "/home/user/project", Home: "/home/user", Tmp: "/tmp"}

var corpusNetwork = guardNetwork(netguard.Policy{AskUnknown: true}, true)

func corpusPolicy() Policy {
	p := DefaultPolicy()
	p.SandboxAvailable = true
	p.Network = corpusNetwork
	return p
}

// discardForms are the git commands that discard uncommitted work, which
// the corpus (written before issue 22) expects denied.
var discardForms = regexp.MustCompile(`git\s+(reset\s+--(hard|merge)|checkout\s+(--\s|\.|-f)|switch\s+--discard-changes|restore\s+\.|clean\s+(-fd|--force)|stash\s+(clear|drop))`)

// packageRunnerForm is a registry package run by a package runner (npx,
// pnpx, bunx, uvx, npm exec, pipx run), which issue 22 runs in the
// workspace sandbox as an unknown program.
var packageRunnerForm = regexp.MustCompile(`^(npx|pnpx|bunx|uvx|npm\s+exec|pipx\s+run)\s`)

// modelChange maps what a corpus row expects to what the execution model of
// issue 22 makes of it, and says why; rule, when set, is the rule that must
// decide. The corpus is shared and read-only, so the change is made here,
// case by case; no attack the corpus expects denied or asked about is
// weakened by it, except discarding uncommitted work in the project, which
// now asks (a human may want it), or, where the caller saves the work first
// (warden exec), is allowed: see TestCorpusDiscardSaved.
func modelChange(r corpusRow, want warden.Verdict) (v warden.Verdict, why, rule string) {
	c := r.Command
	switch {
	case want == warden.Deny && r.Group == "attack" && discardForms.MatchString(c) && !strings.Contains(c, "--work-tree"):
		// The work tree is the project's; --work-tree elsewhere stays denied
		// (judged as a recursive delete of that tree).
		return warden.Ask, "discarding uncommitted work asks instead of being denied", "shell.git.discard"
	case want == warden.Sandbox && (r.Class == "opaque-script" || r.Class == "gray-unknown") && !isDeployTarget(c):
		return warden.Allow, "code the guard cannot see is not suspicious by itself: it runs in the workspace sandbox", ""
	case want == warden.Sandbox && r.Class == "supply-chain" && packageRunnerForm.MatchString(c):
		return warden.Allow, "a registry package a package runner fetches is an unknown program, not a suspicious one: it runs in the workspace sandbox, fetched through the egress proxy", "shell.package_runner"
	case r.Class == "gray-unknown":
		return warden.Ask, "a deploy target leaves the machine", "shell.leaves_machine"
	case want == warden.Allow && strings.HasPrefix(c, "git push"):
		return warden.Ask, "git push leaves the machine", "shell.leaves_machine"
	case want == warden.Allow && strings.HasPrefix(c, "docker run"):
		return warden.Ask, "docker acts through a daemon outside the sandbox", "shell.leaves_machine"
	}
	return want, "", ""
}

func TestCorpusShellGuard(t *testing.T) {
	rows := loadCorpus(t, "shell-guard.jsonl")
	p := corpusPolicy()
	var attacks, caught, precise, benign, allowed, gray, grayExact, changed int
	for _, r := range rows {
		res := Classify(r.Command, corpusEnv, p)
		want, err := warden.ParseVerdict(r.Expect)
		if err != nil {
			t.Fatalf("row %q: %v", r.Command, err)
		}
		if v, why, rule := modelChange(r, want); why != "" {
			changed++
			if res.Verdict != v || rule != "" && res.Rule != rule {
				t.Errorf("Classify(%q) = %s (%s: %s), want %s by %s: the corpus says %s, but %s", r.Command, res.Verdict, res.Rule, res.Reason, v, rule, want, why)
			}
			want = v
		}
		switch r.Group {
		case "attack":
			attacks++
			if res.Verdict == warden.Allow && want != warden.Allow {
				t.Errorf("attack allowed: Classify(%q) = allow (%s), want %s", r.Command, res.Rule, want)
				continue
			}
			caught++
			if res.Verdict == want {
				precise++
			} else {
				t.Logf("imprecise: Classify(%q) = %s (%s: %s), want %s", r.Command, res.Verdict, res.Rule, res.Reason, want)
			}
		case "benign":
			benign++
			if res.Verdict == want {
				allowed++
			} else {
				t.Logf("false positive: Classify(%q) = %s (%s: %s), want %s", r.Command, res.Verdict, res.Rule, res.Reason, want)
			}
		default:
			gray++
			if res.Verdict == want {
				grayExact++
			} else {
				t.Logf("gray: Classify(%q) = %s (%s), corpus says %s", r.Command, res.Verdict, res.Rule, want)
			}
		}
	}
	pct := func(a, b int) float64 {
		if b == 0 {
			return 100
		}
		return 100 * float64(a) / float64(b)
	}
	t.Logf("attacks caught %d/%d (%.1f%%), precise %d/%d (%.1f%%); benign as expected %d/%d (%.1f%%); gray exact %d/%d; %d rows mapped by the model change",
		caught, attacks, pct(caught, attacks), precise, attacks, pct(precise, attacks), allowed, benign, pct(allowed, benign), grayExact, gray, changed)
	if pct(precise, attacks) < 95 {
		t.Errorf("attack precision %.1f%% < 95%%", pct(precise, attacks))
	}
	if pct(allowed, benign) < 98 {
		t.Errorf("benign as expected %.1f%% < 98%%", pct(allowed, benign))
	}
}

// unsavedForms are the corpus's discards that a snapshot of the work tree
// cannot hold (ignored files): they ask even where the caller
// saves the work tree first.
var unsavedForms = regexp.MustCompile(`git\s+clean\b.*\s-[a-zA-Z]*[xX]\b`)

// TestCorpusDiscardSaved: the corpus's attacks that discard uncommitted
// work in the project (denied when the corpus was written, asked about
// since issue 22) are allowed where the caller saves the work tree first
// (Env.Snapshots, warden exec), with the project named to be saved; the
// forms a snapshot cannot hold still ask. A recursive delete of project
// files below the root (rm -rf src) is allowed saving the project too, as
// is git branch -D (a snapshot keeps every branch's tip).
// Every other attack decides as it does without snapshots: saving work
// weakens nothing else.
func TestCorpusDiscardSaved(t *testing.T) {
	rows := loadCorpus(t, "shell-guard.jsonl")
	p := corpusPolicy()
	env := corpusEnv
	env.Snapshots, env.GitWorkTree = true, true
	saved, asked, deletes := 0, 0, 0
	for _, r := range rows {
		want, err := warden.ParseVerdict(r.Expect)
		if err != nil {
			t.Fatalf("row %q: %v", r.Command, err)
		}
		plain := Classify(r.Command, corpusEnv, p)
		res := Classify(r.Command, env, p)
		_, _, rule := modelChange(r, want)
		switch {
		case rule == "shell.git.discard" && !unsavedForms.MatchString(r.Command):
			saved++
			if res.Verdict != warden.Allow || res.Rule != "shell.git.saved" || !slices.Equal(res.Snapshot, []string{corpusEnv.Cwd}) {
				t.Errorf("Classify(%q) with snapshots = %s (%s) saving %q, want allow by shell.git.saved saving %q", r.Command, res.Verdict, res.Rule, res.Snapshot, corpusEnv.Cwd)
			}
		case rule == "shell.git.discard":
			asked++
			if res.Verdict != warden.Ask || res.Rule != "shell.git.discard" || res.Snapshot != nil {
				t.Errorf("Classify(%q) with snapshots = %s (%s) saving %q, want ask by shell.git.discard", r.Command, res.Verdict, res.Rule, res.Snapshot)
			}
		case plain.Rule == "shell.git.branch_force_delete":
			// A snapshot keeps every branch's tip; warden undo makes a
			// deleted one again.
			deletes++
			if res.Verdict != warden.Allow || res.Rule != "shell.git.saved" || !slices.Equal(res.Snapshot, []string{corpusEnv.Cwd}) {
				t.Errorf("Classify(%q) with snapshots = %s (%s) saving %q, want allow by shell.git.saved saving %q", r.Command, res.Verdict, res.Rule, res.Snapshot, corpusEnv.Cwd)
			}
		case plain.Rule == "shell.delete_recursive.workspace_other" && res.Rule == "shell.delete_recursive.saved":
			// A recursive delete of project files below the root: the
			// snapshot of the project's work tree holds them.
			deletes++
			if res.Verdict != warden.Allow || !slices.Equal(res.Snapshot, []string{corpusEnv.Cwd}) {
				t.Errorf("Classify(%q) with snapshots = %s (%s) saving %q, want allow saving %q", r.Command, res.Verdict, res.Rule, res.Snapshot, corpusEnv.Cwd)
			}
		case res.Verdict != plain.Verdict || res.Rule != plain.Rule:
			t.Errorf("Classify(%q) with snapshots = %s (%s), without = %s (%s): saving work must change nothing else", r.Command, res.Verdict, res.Rule, plain.Verdict, plain.Rule)
		}
	}
	t.Logf("%d discards allowed once saved, %d still asked, %d recursive deletes of project files allowed once saved", saved, asked, deletes)
	if saved == 0 || asked == 0 {
		t.Errorf("the corpus has %d savable and %d unsavable discards; want some of each", saved, asked)
	}
}

// TestCorpusUnderDefaultNetwork: with the default network policy (the
// registries allowed, other hosts asked about), no attack is allowed, and
// every attack that names an unknown host is at least asked about.
func TestCorpusUnderDefaultNetwork(t *testing.T) {
	rows := loadCorpus(t, "shell-guard.jsonl")
	p := corpusPolicy()
	p.Network = defaultNetwork
	asked := 0
	for _, r := range rows {
		if r.Group != "attack" {
			continue
		}
		res := Classify(r.Command, corpusEnv, p)
		if res.Verdict == warden.Allow && r.Class != "opaque-script" && !(r.Class == "supply-chain" && packageRunnerForm.MatchString(r.Command)) {
			t.Errorf("attack allowed: Classify(%q) = allow (%s)", r.Command, res.Rule)
		}
		if strings.HasPrefix(res.Rule, "network.") {
			asked++
		}
	}
	t.Logf("%d attacks decided by the network policy", asked)
}
