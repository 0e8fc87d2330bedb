package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestDefaultFileLoadsAsDefault(t *testing.T) {
	l := mustParse(t, string(DefaultFile()))
	if len(l.Problems) != 0 {
		t.Fatalf("DefaultFile problems: %v", l.Problems)
	}
	if !reflect.DeepEqual(l.Policy, Default()) {
		t.Errorf("DefaultFile policy = %+v\nwant Default() = %+v", l.Policy, Default())
	}
	checkPolicy(t, l.Policy)
}

// The default file must be in the encoder's layout, so that the first Set on
// a fresh file changes only the line it sets.
func TestDefaultFileIsStableUnderRewrite(t *testing.T) {
	_, doc, err := parse(DefaultFile())
	if err != nil {
		t.Fatal(err)
	}
	out, err := encodeDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != string(DefaultFile()) {
		t.Errorf("re-encoded default file differs:\n%s", out)
	}
}

func TestDefaultFileDocumentsEveryKey(t *testing.T) {
	text := string(DefaultFile())
	for _, kv := range mustParse(t, text).List() {
		leaf := kv.Key[strings.LastIndex(kv.Key, ".")+1:]
		if !strings.Contains(text, leaf+":") {
			t.Errorf("DefaultFile does not mention %s", kv.Key)
		}
	}
	for _, want := range []string{"# - tool: transfer_token", "#   tier: 3", "Unlisted tools are tier 3"} {
		if !strings.Contains(text, want) {
			t.Errorf("DefaultFile lacks %q", want)
		}
	}
	for line := range strings.Lines(text) {
		s := strings.TrimSpace(line)
		if s == "" || strings.HasPrefix(s, "#") || strings.HasPrefix(s, "- tool:") || strings.HasSuffix(s, ":") {
			continue
		}
		if !strings.Contains(line, "# ") && !strings.Contains(prevComment(text, line), "Default") && !strings.Contains(line, "max_amount_usd") && !strings.Contains(line, "tier: 2") {
			t.Errorf("line %q has no comment", strings.TrimRight(line, "\n"))
		}
	}
}

// prevComment returns the comment line just above line in text.
func prevComment(text, line string) string {
	i := strings.Index(text, line)
	if i <= 0 {
		return ""
	}
	before := strings.TrimRight(text[:i], "\n")
	return before[strings.LastIndex(before, "\n")+1:]
}

func TestDefaultReturnsFreshCopies(t *testing.T) {
	a := Default()
	a.Tools.Tiers["unkill"] = 1
	a.Safety.BlockedTokens[0] = "X"
	b := Default()
	if b.Tools.Tiers["unkill"] != 4 || b.Safety.BlockedTokens[0] != "SQUID" {
		t.Fatalf("Default shares state between calls: %+v", b)
	}
}
