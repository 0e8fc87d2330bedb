package audit

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

var update = flag.Bool("update", false, "rewrite the hash lines of testdata/*-v1.txt")

// vector is a test vector file: a "key: value" header, a blank line, a JSON row.
type vector struct {
	path       string
	prev, hash string
	body       []byte
}

func readVector(t *testing.T, path string) vector {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head, body, ok := bytes.Cut(data, []byte("\n\n"))
	if !ok {
		t.Fatalf("%s: no blank line after the header", path)
	}
	v := vector{path: path, body: body}
	for _, line := range strings.Split(string(head), "\n") {
		k, val, _ := strings.Cut(line, ": ")
		switch k {
		case "prev":
			v.prev = val
		case "hash":
			v.hash = val
		default:
			t.Fatalf("%s: unknown header key %q", path, k)
		}
	}
	return v
}

func (v vector) check(t *testing.T, got string) {
	t.Helper()
	if *update {
		data, _ := os.ReadFile(v.path)
		data = regexp.MustCompile(`(?m)^hash: .*$`).ReplaceAll(data, []byte("hash: "+got))
		if err := os.WriteFile(v.path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != v.hash {
		t.Errorf("%s: hash = %s, want %s\n(a changed encoding needs a new EntryEncoding/EventEncoding version, not a new vector)", v.path, got, v.hash)
	}
}

// TestVectors pins the v1 encoding: the hashes in testdata must never change.
func TestVectors(t *testing.T) {
	t.Run("entry", func(t *testing.T) {
		v := readVector(t, filepath.Join("testdata", "entry-v1.txt"))
		var e warden.AuditEntry
		dec := json.NewDecoder(bytes.NewReader(v.body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			t.Fatal(err)
		}
		v.check(t, HashEntry(v.prev, &e))
	})
	t.Run("event", func(t *testing.T) {
		v := readVector(t, filepath.Join("testdata", "event-v1.txt"))
		var ev warden.SecurityEvent
		dec := json.NewDecoder(bytes.NewReader(v.body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ev); err != nil {
			t.Fatal(err)
		}
		v.check(t, HashEvent(v.prev, &ev))
	})
}

func sampleEntry() warden.AuditEntry {
	return warden.AuditEntry{
		Seq: 7, ID: "id-1", TraceID: "tr-1", CreatedAt: time.UnixMilli(1_740_000_000_123).UTC(),
		Capability: "shell", Action: "exec", Resource: "ls -la", Tool: "Bash", Tier: warden.TierConfirmOnce,
		Args: json.RawMessage(`{"cmd":"ls"}`), Context: "look", RequestedBy: "agent", Autonomous: true,
		Session: "s", Host: "claude", Raw: json.RawMessage(`{}`), Verdict: warden.Allow, Blocked: false,
		BlockReason: "", Reason: "read-only", Rule: "shell.readonly", Result: json.RawMessage(`"success"`),
		Output: "total 0", Error: "", Duration: 1500 * time.Microsecond,
		Stages: []warden.StageAnswer{
			{Stage: "shellguard", Verdict: warden.Allow, Reason: "read-only", Rule: "shell.readonly", Duration: time.Microsecond},
			{Stage: "tier", Verdict: warden.Allow, Reason: "tier 2 granted", Rule: "tier.granted"},
		},
	}
}

// TestEntryEncodingCoversEveryField changes each stored field in turn and
// expects a different hash; PrevHash and Hash are the only fields left out.
func TestEntryEncodingCoversEveryField(t *testing.T) {
	base := sampleEntry()
	h0 := HashEntry(GenesisHash, &base)
	mutations := map[string]func(e *warden.AuditEntry){
		"Seq":         func(e *warden.AuditEntry) { e.Seq++ },
		"ID":          func(e *warden.AuditEntry) { e.ID += "x" },
		"TraceID":     func(e *warden.AuditEntry) { e.TraceID += "x" },
		"CreatedAt":   func(e *warden.AuditEntry) { e.CreatedAt = e.CreatedAt.Add(time.Millisecond) },
		"Capability":  func(e *warden.AuditEntry) { e.Capability += "x" },
		"Action":      func(e *warden.AuditEntry) { e.Action += "x" },
		"Resource":    func(e *warden.AuditEntry) { e.Resource += "x" },
		"Tool":        func(e *warden.AuditEntry) { e.Tool += "x" },
		"Tier":        func(e *warden.AuditEntry) { e.Tier++ },
		"Args":        func(e *warden.AuditEntry) { e.Args = json.RawMessage(`{"cmd":"rm"}`) },
		"Context":     func(e *warden.AuditEntry) { e.Context += "x" },
		"RequestedBy": func(e *warden.AuditEntry) { e.RequestedBy += "x" },
		"Autonomous":  func(e *warden.AuditEntry) { e.Autonomous = !e.Autonomous },
		"Session":     func(e *warden.AuditEntry) { e.Session += "x" },
		"Host":        func(e *warden.AuditEntry) { e.Host += "x" },
		"Raw":         func(e *warden.AuditEntry) { e.Raw = json.RawMessage(`[]`) },
		"Verdict":     func(e *warden.AuditEntry) { e.Verdict = warden.Deny },
		"Blocked":     func(e *warden.AuditEntry) { e.Blocked = !e.Blocked },
		"BlockReason": func(e *warden.AuditEntry) { e.BlockReason += "x" },
		"Reason":      func(e *warden.AuditEntry) { e.Reason += "x" },
		"Rule":        func(e *warden.AuditEntry) { e.Rule += "x" },
		"Result":      func(e *warden.AuditEntry) { e.Result = json.RawMessage(`"error"`) },
		"Output":      func(e *warden.AuditEntry) { e.Output += "x" },
		"Error":       func(e *warden.AuditEntry) { e.Error += "x" },
		"Duration":    func(e *warden.AuditEntry) { e.Duration++ },
		"Stages":      func(e *warden.AuditEntry) { e.Stages = e.Stages[:1] },
		"StageOrder":  func(e *warden.AuditEntry) { e.Stages[0], e.Stages[1] = e.Stages[1], e.Stages[0] },
		"StageName":   func(e *warden.AuditEntry) { e.Stages[1].Stage += "x" },
		"StageVerd":   func(e *warden.AuditEntry) { e.Stages[1].Verdict = warden.Ask },
		"StageReason": func(e *warden.AuditEntry) { e.Stages[1].Reason += "x" },
		"StageRule":   func(e *warden.AuditEntry) { e.Stages[1].Rule += "x" },
		"StageError":  func(e *warden.AuditEntry) { e.Stages[1].Error += "x" },
		"StageDur":    func(e *warden.AuditEntry) { e.Stages[1].Duration++ },
	}
	for name, mutate := range mutations {
		t.Run(name, func(t *testing.T) {
			e := sampleEntry()
			e.Stages = append([]warden.StageAnswer(nil), base.Stages...)
			mutate(&e)
			if h := HashEntry(GenesisHash, &e); h == h0 {
				t.Errorf("changing %s did not change the hash", name)
			}
		})
	}
	t.Run("PrevHashAndHashIgnored", func(t *testing.T) {
		e := sampleEntry()
		e.PrevHash, e.Hash = "p", "h"
		if h := HashEntry(GenesisHash, &e); h != h0 {
			t.Errorf("HashEntry depends on e.PrevHash or e.Hash")
		}
	})
	t.Run("Prev", func(t *testing.T) {
		e := sampleEntry()
		if h := HashEntry(strings.Repeat("1", 64), &e); h == h0 {
			t.Errorf("HashEntry does not depend on prev")
		}
	})
}

// TestEncodingIsUnambiguous moves bytes across field boundaries; each variant
// must encode differently.
func TestEncodingIsUnambiguous(t *testing.T) {
	a := warden.AuditEntry{Capability: "ab", Action: "c"}
	b := warden.AuditEntry{Capability: "a", Action: "bc"}
	c := warden.AuditEntry{Stages: []warden.StageAnswer{{Stage: "x", Reason: "y"}}}
	d := warden.AuditEntry{Stages: []warden.StageAnswer{{Stage: "xy"}}}
	e := warden.AuditEntry{Stages: []warden.StageAnswer{{Stage: "x"}, {Stage: "y"}}}
	seen := map[string]string{}
	for name, en := range map[string]*warden.AuditEntry{"a": &a, "b": &b, "c": &c, "d": &d, "e": &e} {
		enc := string(AppendEntry(nil, en))
		if other, dup := seen[enc]; dup {
			t.Errorf("entries %s and %s encode alike", name, other)
		}
		seen[enc] = name
	}
	// An event never encodes like an entry: the encodings start with different tags.
	ev := warden.SecurityEvent{}
	if bytes.HasPrefix(AppendEvent(nil, &ev), AppendEntry(nil, &warden.AuditEntry{})[:len(EntryEncoding)+1]) {
		t.Error("event and entry encodings share a tag")
	}
}

func TestEventEncodingCoversEveryField(t *testing.T) {
	base := warden.SecurityEvent{Seq: 3, ID: "e", TraceID: "t", CreatedAt: time.UnixMilli(5), Type: warden.EventKillSwitchOn,
		Severity: warden.SevCritical, Summary: "on", Metadata: json.RawMessage(`{"a":1}`)}
	h0 := HashEvent(GenesisHash, &base)
	for name, mutate := range map[string]func(*warden.SecurityEvent){
		"Seq":       func(e *warden.SecurityEvent) { e.Seq++ },
		"ID":        func(e *warden.SecurityEvent) { e.ID += "x" },
		"TraceID":   func(e *warden.SecurityEvent) { e.TraceID += "x" },
		"CreatedAt": func(e *warden.SecurityEvent) { e.CreatedAt = e.CreatedAt.Add(time.Millisecond) },
		"Type":      func(e *warden.SecurityEvent) { e.Type += "x" },
		"Severity":  func(e *warden.SecurityEvent) { e.Severity = warden.SevInfo },
		"Summary":   func(e *warden.SecurityEvent) { e.Summary += "x" },
		"Metadata":  func(e *warden.SecurityEvent) { e.Metadata = nil },
	} {
		ev := base
		mutate(&ev)
		if HashEvent(GenesisHash, &ev) == h0 {
			t.Errorf("changing %s did not change the event hash", name)
		}
	}
}

func TestTimestamp(t *testing.T) {
	for _, tc := range []struct{ in, want time.Time }{
		{time.Unix(10, 999_999_999), time.UnixMilli(10_999)},
		{time.Unix(-1, 500_000), time.UnixMilli(-1000)},
		{time.Date(2025, 3, 1, 12, 0, 0, 1_234_567, time.FixedZone("X", 3600)), time.Date(2025, 3, 1, 11, 0, 0, 1_000_000, time.UTC)},
	} {
		got := Timestamp(tc.in)
		if !got.Equal(tc.want) || got.Location() != time.UTC {
			t.Errorf("Timestamp(%v) = %v, want %v in UTC", tc.in, got, tc.want)
		}
	}
}

func ExampleHashEntry() {
	e := warden.AuditEntry{Seq: 1, ID: "0190f3a4-0000-7000-8000-000000000001", Capability: "shell", Action: "exec",
		Resource: "ls", Verdict: warden.Allow, Reason: "read-only", Rule: "shell.readonly"}
	e.PrevHash = GenesisHash
	e.Hash = HashEntry(e.PrevHash, &e)
	fmt.Println(len(e.Hash), VerifyEntries([]warden.AuditEntry{e}) == nil)
	// Output: 64 true
}
