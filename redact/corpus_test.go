package redact

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// corpusDir holds the project's shared test corpora, outside this module.
var corpusDir = filepath.Join("..", "..", "shared", "corpus")

// readCorpus returns the JSON lines of a shared corpus file, or skips the test
// when the corpus is not checked out next to the module.
func readCorpus(t *testing.T, name string) []map[string]json.RawMessage {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, name))
	if os.IsNotExist(err) {
		t.Skipf("corpus %s not found in %s", name, corpusDir)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []map[string]json.RawMessage
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var line map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("%s:%d: %v", name, n, err)
		}
		lines = append(lines, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return lines
}

// field returns the string field key of line.
func field(t *testing.T, line map[string]json.RawMessage, key string) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(line[key], &s); err != nil {
		t.Fatalf("field %q: %v", key, err)
	}
	return s
}

// TestCorpusText runs String over the shell and prose corpora: it must never
// panic and must be idempotent. The shell commands hold no real secrets, so
// every change is logged for review as a possible false positive.
func TestCorpusText(t *testing.T) {
	for _, c := range []struct {
		file, field string
		maxChanged  int // a ceiling that catches a detector gone wild
	}{
		{"shell-guard.jsonl", "command", 0},
		// About 300 tldr examples put a placeholder where a secret goes
		// (--password password, TOKEN=token, Authorization: Bearer token);
		// masking those is right.
		{"tldr-examples.jsonl", "command", 320},
		// Prompt-injection texts quote passwords and reset tokens.
		{"injection-payloads.jsonl", "text", 10},
	} {
		t.Run(c.file, func(t *testing.T) {
			lines := readCorpus(t, c.file)
			changed := 0
			for _, line := range lines {
				in := field(t, line, c.field)
				got := String(in)
				if again := String(got); again != got {
					t.Errorf("String(String(%q)) = %q, want %q", in, again, got)
				}
				if got != in {
					changed++
					t.Logf("changed: %q\n     -> %q", in, got)
				}
			}
			t.Logf("%s: %d of %d lines changed", c.file, changed, len(lines))
			if changed > c.maxChanged {
				t.Errorf("%s: %d lines changed, want at most %d", c.file, changed, c.maxChanged)
			}
		})
	}
}

// TestCorpusFinance runs JSON over the trading and signing requests: token
// addresses, amounts and symbols must stay readable, and the output must be
// valid JSON. Only the two 32-byte hex values (a message and a hash to sign)
// are masked, because they cannot be told apart from private keys.
func TestCorpusFinance(t *testing.T) {
	lines := readCorpus(t, "finance-signing-cases.jsonl")
	changed := 0
	for _, line := range lines {
		in := line["input"]
		got := JSON(in)
		if !json.Valid(got) {
			t.Errorf("JSON(%s) = %s, which is not valid JSON", in, got)
		}
		if string(got) != string(in) {
			changed++
			t.Logf("changed: %s\n     -> %s", in, got)
		}
	}
	t.Logf("finance-signing-cases.jsonl: %d of %d inputs changed", changed, len(lines))
	if changed > 2 {
		t.Errorf("finance-signing-cases.jsonl: %d inputs changed, want at most 2", changed)
	}
}
