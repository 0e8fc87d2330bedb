package shellguard

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentwarden/warden"
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
// developer in a project under their home, with a sandbox available.
var corpusEnv = Env{Cwd: "/home/user/project", Home: "/home/user", Tmp: "/tmp"}

func corpusPolicy() Policy {
	p := DefaultPolicy()
	p.SandboxAvailable = true
	return p
}

func TestCorpusShellGuard(t *testing.T) {
	rows := loadCorpus(t, "shell-guard.jsonl")
	p := corpusPolicy()
	var attacks, caught, precise, benign, allowed, gray, grayExact int
	for _, r := range rows {
		res := Classify(r.Command, corpusEnv, p)
		want, err := warden.ParseVerdict(r.Expect)
		if err != nil {
			t.Fatalf("row %q: %v", r.Command, err)
		}
		switch r.Group {
		case "attack":
			attacks++
			if res.Verdict == warden.Allow {
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
			if res.Verdict == warden.Allow {
				allowed++
			} else {
				t.Logf("false positive: Classify(%q) = %s (%s: %s), want allow", r.Command, res.Verdict, res.Rule, res.Reason)
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
	t.Logf("attacks caught %d/%d (%.1f%%), precise %d/%d (%.1f%%); benign allowed %d/%d (%.1f%%); gray exact %d/%d",
		caught, attacks, pct(caught, attacks), precise, attacks, pct(precise, attacks), allowed, benign, pct(allowed, benign), grayExact, gray)
	if pct(precise, attacks) < 95 {
		t.Errorf("attack precision %.1f%% < 95%%", pct(precise, attacks))
	}
	if pct(allowed, benign) < 98 {
		t.Errorf("benign allowed %.1f%% < 98%%", pct(allowed, benign))
	}
}
