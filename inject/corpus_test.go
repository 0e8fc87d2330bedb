package inject

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentwarden/warden/internal/corpustest"
)

// The quality bar on the shared injection corpus. Issue 25's target is
// recall >= 90 % at <= 2 % false positives, and the test asserts it. The
// built-in scanner reaches 90.2 % at 1.7 %; most of what it misses are goal
// hijacks with no override phrasing and no message around them to be out of
// place in (CyberSecEval personal-data requests, few-shot dialogues), which
// no payload database can catch: that is the Classifier's job. No
// benign row may be flagged for invisible characters alone. The same test
// measures a held-out file named by $WARDEN_INJECTION_CORPUS (same format).
const (
	wantRecall = 0.90 // the target
	wantFPR    = 0.02
)

type corpusRow struct {
	Text     string `json:"text"`
	Label    string `json:"label"`
	Source   string `json:"source"`
	Category string `json:"category"`
	Variant  string `json:"variant"`
}

// corpusSource is the row's source repository ("synthetic" for the
// generated Unicode rows).
func (r corpusRow) corpusSource() string {
	if strings.HasPrefix(r.Source, "synthetic") {
		return "synthetic"
	}
	src, _, _ := strings.Cut(r.Source, "@")
	return src
}

func loadCorpus(t *testing.T) []corpusRow {
	if p := os.Getenv("WARDEN_INJECTION_CORPUS"); p != "" {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("$WARDEN_INJECTION_CORPUS: %v", err)
		}
		var rows []corpusRow
		for i, line := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			var r corpusRow
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("%s:%d: %v", p, i+1, err)
			}
			rows = append(rows, r)
		}
		return rows
	}
	return corpustest.Load[corpusRow](t, "injection-payloads.jsonl")
}

type tally struct{ inj, caught, benign, flagged int }

func (c tally) String() string {
	s := ""
	if c.inj > 0 {
		s += fmt.Sprintf("recall %5.1f%% (%d/%d)", 100*float64(c.caught)/float64(c.inj), c.caught, c.inj)
	}
	if c.benign > 0 {
		if s != "" {
			s += "  "
		}
		s += fmt.Sprintf("false positives %4.1f%% (%d/%d)", 100*float64(c.flagged)/float64(c.benign), c.flagged, c.benign)
	}
	return s
}

// TestCorpus measures the scanner on the corpus, overall, per source and
// per category, and fails below the targets. With -v it lists every miss
// and false positive.
func TestCorpus(t *testing.T) {
	rows := loadCorpus(t)
	s, err := NewScanner(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var all tally
	bySource := map[string]*tally{}
	byCategory := map[string]*tally{}
	invisibleOnly := 0
	for _, r := range rows {
		res := s.Scan(r.Text)
		for _, c := range []*tally{&all, get(bySource, r.corpusSource()), get(byCategory, r.Category+"/"+r.Variant)} {
			if r.Label == "injection" {
				c.inj++
				if res.Injection {
					c.caught++
				}
			} else {
				c.benign++
				if res.Injection {
					c.flagged++
				}
			}
		}
		switch {
		case r.Label == "injection" && !res.Injection:
			t.Logf("MISS %-40s %.3f %.160q", r.Category+"/"+r.Variant, res.Score, r.Text)
		case r.Label != "injection" && res.Injection:
			t.Logf("FALSE POSITIVE %-40s %.3f %v %.160q", r.Category+"/"+r.Variant, res.Score, ruleIDs(res), r.Text)
			if allHidden(res) {
				invisibleOnly++
			}
		}
	}
	report := "overall: " + all.String() + "\n"
	for _, m := range []map[string]*tally{bySource, byCategory} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			report += fmt.Sprintf("  %-62s %s\n", k, m[k])
		}
	}
	t.Log("\n" + report)
	recall := float64(all.caught) / float64(all.inj)
	fpr := float64(all.flagged) / float64(all.benign)
	if recall < wantRecall || fpr > wantFPR {
		t.Errorf("recall %.1f%% at %.1f%% false positives; want recall >= %.0f%% at <= %.0f%%", 100*recall, 100*fpr, 100*wantRecall, 100*wantFPR)
	}
	if invisibleOnly > 0 {
		t.Errorf("%d benign rows flagged for invisible characters alone", invisibleOnly)
	}
}

func get(m map[string]*tally, k string) *tally {
	if m[k] == nil {
		m[k] = &tally{}
	}
	return m[k]
}

func ruleIDs(r Result) []string {
	var ids []string
	for _, m := range r.Matches {
		if !slices.Contains(ids, m.Rule) {
			ids = append(ids, m.Rule)
		}
	}
	return ids
}

func allHidden(r Result) bool {
	for _, m := range r.Matches {
		if m.View != "hidden" {
			return false
		}
	}
	return true
}
