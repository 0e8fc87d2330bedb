package walk

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// corpusDir holds the shared shell corpora, relative to this package.
const corpusDir = "../../../shared/corpus"

var corpusFiles = []string{"shell-guard.jsonl", "tldr-examples.jsonl"}

// loadCorpus reads the "command" field of every line of the named corpus
// file. It skips the test when the file is absent.
func loadCorpus(tb testing.TB, name string) []string {
	tb.Helper()
	f, err := os.Open(filepath.Join(corpusDir, name))
	if os.IsNotExist(err) {
		tb.Skipf("corpus %s not found under %s: the shared corpora are not checked out here", name, corpusDir)
	}
	if err != nil {
		tb.Fatalf("open corpus: %v", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec struct {
			Command string `json:"command"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			tb.Fatalf("corpus %s: %v", name, err)
		}
		if rec.Command != "" {
			out = append(out, rec.Command)
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("read corpus %s: %v", name, err)
	}
	return out
}

func TestCorpus(t *testing.T) {
	for _, name := range corpusFiles {
		t.Run(name, func(t *testing.T) {
			cmds := loadCorpus(t, name)
			var nCmds, withIssues, internal int
			kinds := map[IssueKind]int{}
			var slowest time.Duration
			for _, src := range cmds {
				start := time.Now()
				r := Walk(src, testOpt)
				slowest = max(slowest, time.Since(start))
				// only an empty input or a bare comment may yield nothing
				if len(r.Commands) == 0 && len(r.Issues) == 0 && !strings.HasPrefix(strings.TrimSpace(src), "#") {
					t.Errorf("Walk(%q) = no commands and no issues, want at least one", src)
				}
				nCmds += len(r.Commands)
				if len(r.Issues) > 0 {
					withIssues++
				}
				for _, is := range r.Issues {
					kinds[is.Kind]++
					if is.Kind == Internal {
						internal++
						t.Errorf("Walk(%q) = internal issue %q, want none", src, is.Message)
					}
				}
			}
			var ks []string
			for k := range kinds {
				ks = append(ks, string(k))
			}
			slices.Sort(ks)
			t.Logf("%s: %d inputs, %d commands, %d inputs with issues, internal %d, slowest %v", name, len(cmds), nCmds, withIssues, internal, slowest)
			for _, k := range ks {
				t.Logf("  %s: %d", k, kinds[IssueKind(k)])
			}
		})
	}
}
