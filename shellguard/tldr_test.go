package shellguard

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/shellguard/walk"
)

// readOnlyPages are tldr pages whose examples only inspect.
var readOnlyPages = map[string]bool{"ls": true, "cat": true, "grep": true, "git log": true, "git status": true, "git diff": true, "ps": true, "df": true, "jq": true}

func TestCorpusTLDR(t *testing.T) {
	rows := loadCorpus(t, "tldr-examples.jsonl")
	p := corpusPolicy()
	counts := map[warden.Verdict]int{}
	rules := map[string]int{}
	unknown := map[string]int{}
	for _, r := range rows {
		res := Classify(r.Command, corpusEnv, p)
		counts[res.Verdict]++
		if res.Verdict == warden.Deny && os.Getenv("SHELLGUARD_TLDR_DENIES") != "" {
			t.Logf("deny %s: %q (%s)", r.Page, r.Command, res.Rule)
		}
		if res.Verdict != warden.Allow {
			rules[res.Rule]++
			if res.Rule == "shell.unknown_program" {
				prog, _, _ := strings.Cut(res.Reason, " ")
				unknown[prog]++
			}
		}
		wr := walk.Walk(r.Command, walk.Options{Cwd: corpusEnv.Cwd, Home: corpusEnv.Home, Tmp: corpusEnv.Tmp})
		if res.Verdict == warden.Allow && len(wr.Issues) > 0 {
			t.Errorf("Classify(%q) = allow, but Walk reports issues %v", r.Command, wr.Issues)
		}
		// Examples that pipe into placeholder programs ("| program") or use
		// tldr's a|b notation are not single inspection commands.
		single := len(wr.Issues) == 0 && len(wr.Commands) == 1
		if readOnlyPages[r.Page] && single && res.Verdict != warden.Allow {
			t.Errorf("read-only page %s: Classify(%q) = %s (%s: %s), want allow", r.Page, r.Command, res.Verdict, res.Rule, res.Reason)
		}
	}
	n := float64(len(rows))
	t.Logf("tldr %d examples: allow %.1f%%, sandbox %.1f%%, ask %.1f%%, deny %.1f%%", len(rows),
		100*float64(counts[warden.Allow])/n, 100*float64(counts[warden.Sandbox])/n, 100*float64(counts[warden.Ask])/n, 100*float64(counts[warden.Deny])/n)
	type kv struct {
		k string
		v int
	}
	var top []kv
	for k, v := range rules {
		top = append(top, kv{k, v})
	}
	sort.Slice(top, func(i, j int) bool { return top[i].v > top[j].v })
	for i := 0; i < len(top) && i < 15; i++ {
		t.Logf("  %6d %s", top[i].v, top[i].k)
	}
	top = top[:0]
	for k, v := range unknown {
		top = append(top, kv{k, v})
	}
	sort.Slice(top, func(i, j int) bool { return top[i].v > top[j].v })
	var names []string
	for i := 0; i < len(top) && i < 40; i++ {
		names = append(names, top[i].k)
	}
	t.Logf("most frequent unknown programs: %s", strings.Join(names, " "))
}
