package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// passthrough lists, per host, the events acknowledged without a decision.
var passthrough = map[string][]string{
	"claude": {"PostToolUse"},
	"codex":  {"PostToolUse"},
	"gemini": {"AfterTool"},
	"cursor": {"afterShellExecution", "afterMCPExecution", "afterFileEdit"},
}

// allows reports whether an answer lets the call run.
func allows(host string, status int, stdout string) bool {
	if status != statusOK {
		return false
	}
	switch host {
	case "claude":
		return strings.Contains(stdout, `"permissionDecision":"allow"`)
	case "codex":
		return stdout == "" || strings.Contains(stdout, `"permissionDecision":"allow"`)
	case "gemini":
		return strings.Contains(stdout, `"decision":"allow"`)
	case "cursor":
		return strings.Contains(stdout, `"permission":"allow"`)
	}
	return true
}

// fuzzHost checks the properties every adapter must keep on any input: Run
// returns 0 or 2, never panics, blocks with a message, never allows input it
// did not hand to the gate (except acknowledged after-events), and never
// allows a call the gate denied or could not decide.
func fuzzHost(f *testing.F, host string) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", host, "*.json"))
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		for v := range verdicts {
			f.Add(b, uint8(v))
		}
	}
	f.Add([]byte(`{"hook_event_name":null}`), uint8(0))
	f.Add([]byte(`{}`), uint8(0))
	f.Fuzz(func(t *testing.T, payload []byte, v uint8) {
		verdict := verdicts[int(v)%len(verdicts)]
		d := &fakeDecider{verdict: verdict}
		var out, errOut bytes.Buffer
		status := Run(context.Background(), host, bytes.NewReader(payload), &out, &errOut, d, nil)
		stdout := strings.TrimSuffix(out.String(), "\n")
		if status != statusOK && status != statusBlock {
			t.Fatalf("Run(%s, %q) = %d, want 0 or 2", host, payload, status)
		}
		if status == statusBlock && errOut.Len() == 0 {
			t.Fatalf("Run(%s, %q) blocked without a message on stderr", host, payload)
		}
		if stdout != "" && !json.Valid([]byte(stdout)) {
			t.Fatalf("Run(%s, %q) wrote stdout that is not JSON: %q", host, payload, stdout)
		}
		if len(d.reqs) == 0 && status == statusOK {
			var ev struct {
				Event string `json:"hook_event_name"`
			}
			_ = json.Unmarshal(bytes.TrimSpace(payload), &ev)
			known := false
			for _, e := range passthrough[host] {
				known = known || e == ev.Event
			}
			if !known {
				t.Fatalf("Run(%s, %q) answered %q with status 0 without asking the gate", host, payload, stdout)
			}
			return
		}
		if (verdict == "deny" || verdict == "error") && allows(host, status, stdout) {
			t.Fatalf("Run(%s, %q) with verdict %s answered an allow: %q", host, payload, verdict, stdout)
		}
		for _, r := range d.reqs {
			if err := r.Validate(); err != nil {
				t.Fatalf("the gate was handed an invalid request: %v", err)
			}
		}
	})
}

func FuzzClaude(f *testing.F) { fuzzHost(f, "claude") }
func FuzzCodex(f *testing.F)  { fuzzHost(f, "codex") }
func FuzzGemini(f *testing.F) { fuzzHost(f, "gemini") }
func FuzzCursor(f *testing.F) { fuzzHost(f, "cursor") }
