package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/approval"
)

// TestFileToolsDecideAuditAndRecordOutcomes checks the one gate for warden's
// own file tools: every call is a decision in the audit log, an allowed call
// leaves an action_result event with its trace id and size, and contents are
// never stored.
func TestFileToolsDecideAuditAndRecordOutcomes(t *testing.T) {
	a := openTestApp(t, Options{OpenDatabase: true})
	ctx := context.Background()
	ft, err := a.FileTools("", warden.Request{Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	defer ft.Close()
	const secret = "contents-never-audited"
	if err := ft.Write(ctx, "a.txt", []byte(secret)); err != nil {
		t.Fatal(err)
	}
	got, err := ft.Read(ctx, "a.txt")
	if err != nil || string(got) != secret {
		t.Fatalf("Read = %q, %v", got, err)
	}
	// Refused: warden's own policy file, reached with .. from the workspace.
	_, err = ft.Read(ctx, "../../warden.yaml")
	var refused *Refused
	if !errors.As(err, &refused) || refused.Decision.Rule != "fs.self_protect" {
		t.Fatalf("reading warden.yaml: %v; want a refusal by fs.self_protect", err)
	}

	entries, err := a.Store.Entries(ctx, warden.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Fatalf("%d audit rows; want one per call (3)", len(entries))
	}
	events, err := a.Store.Events(ctx, warden.EventFilter{Type: warden.EventActionResult})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 {
		t.Fatalf("%d action_result events; want one per allowed call (2)", len(events))
	}
	byTrace := map[string]bool{}
	for _, e := range entries {
		byTrace[e.TraceID] = true
		if strings.Contains(string(e.Args)+string(e.Raw)+e.Resource+e.Reason, secret) {
			t.Fatalf("audit row holds file contents: %+v", e)
		}
	}
	for _, ev := range events {
		if !byTrace[ev.TraceID] {
			t.Fatalf("event %s has no decision with its trace id", ev.TraceID)
		}
		if strings.Contains(ev.Summary+string(ev.Metadata), secret) {
			t.Fatalf("event holds file contents: %+v", ev)
		}
		if !strings.Contains(string(ev.Metadata), `"bytes":22`) {
			t.Fatalf("event metadata %s lacks the size", ev.Metadata)
		}
	}
}

// A search never reads a file the policy denies, even inside its root.
func TestFileToolsSearchSkipsDeniedFiles(t *testing.T) {
	a := openTestApp(t)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "ok.txt"), []byte("needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".env"), []byte("needle=secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a.Policy.Filesystem.Workspace = root
	a.Policy.Filesystem.Denied = append(a.Policy.Filesystem.Denied, "**/.env")
	ft, err := a.FileTools("", warden.Request{})
	if err != nil {
		t.Fatal(err)
	}
	defer ft.Close()
	ms, _, err := ft.Search(context.Background(), ".", regexp.MustCompile("needle"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Path != "ok.txt" {
		t.Fatalf("matches %+v; want only ok.txt (.env is denied)", ms)
	}
}

// BenchmarkFileToolRead4K is one `warden fs read` of a 4 KB file in a
// long-lived process: the gate's decision, its durable audit row, the read
// through os.Root, and the outcome event. Compare with
// fstools.BenchmarkOSReadFile4K.
func BenchmarkFileToolRead4K(b *testing.B) {
	a := openTestApp(b, Options{OpenDatabase: true})
	ft, err := a.FileTools("", warden.Request{})
	if err != nil {
		b.Fatal(err)
	}
	defer ft.Close()
	ctx := context.Background()
	if err := os.WriteFile(filepath.Join(ft.Dir(), "f"), make([]byte, 4096), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ft.Read(ctx, "f"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFileToolDecide4K is the decision alone for the same read: the
// pipeline with the filesystem guard (path resolution included), no audit.
func BenchmarkFileToolDecide4K(b *testing.B) {
	a := openTestApp(b)
	p := Pipeline(a.Home, a.Policy, nil, a.Store, a.Now)
	ws := Workspace(a.Home, a.Policy)
	if err := os.WriteFile(filepath.Join(ws, "f"), make([]byte, 4096), 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		req := warden.Request{Capability: warden.CapFilesystem, Action: "read", Resource: ws + "/f", Tool: "read_file"}
		if d := p.Decide(ctx, &req); d.Verdict != warden.Allow {
			b.Fatalf("%s %s", d.Verdict, d.Reason)
		}
	}
}

// A "~/x" given to the file tools is a name below the root (fstools never
// expands ~), so the guard must judge that path, not the user's home.
func TestFileToolsJudgeThePathTheyOpen(t *testing.T) {
	a := openTestApp(t, Options{OpenDatabase: true})
	ft, err := a.FileTools("", warden.Request{})
	if err != nil {
		t.Fatal(err)
	}
	defer ft.Close()
	if err := os.MkdirAll(filepath.Join(ft.Dir(), "~"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ft.Dir(), "~", "x"), []byte("in the root"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ft.Read(context.Background(), "~/x"); err != nil {
		t.Fatal(err)
	}
	rows, err := a.Store.Entries(context.Background(), warden.AuditFilter{})
	if err != nil || len(rows) != 1 {
		t.Fatalf("rows %+v, %v", rows, err)
	}
	if want := ft.Dir() + "/~/x"; rows[0].Resource != want {
		t.Fatalf("decided on %q; want the path opened, %q", rows[0].Resource, want)
	}
}

// When the filesystem guard cannot be built, nothing that needs it is
// allowed: filesystem requests and shell commands naming paths are denied.
func TestUnusableFilesystemPolicyFailsClosed(t *testing.T) {
	a := openTestApp(t)
	t.Setenv("HOME", "") // "~/.ssh/**" cannot be expanded
	p := Pipeline(a.Home, a.Policy, nil, a.Store, a.Now)
	ctx := context.Background()
	for _, req := range []warden.Request{
		{Capability: warden.CapFilesystem, Action: "read", Resource: Workspace(a.Home, a.Policy) + "/x"},
		{Capability: warden.CapShell, Action: "exec", Resource: "cat notes.txt", Cwd: t.TempDir()},
	} {
		if d := p.Decide(ctx, &req); d.Verdict != warden.Deny || !strings.Contains(d.Reason, "filesystem policy is not available") {
			t.Errorf("%s %q: %s %s (%s); want a deny naming the unusable filesystem policy", req.Capability, req.Resource, d.Verdict, d.Rule, d.Reason)
		}
	}
}

// TestFileToolWaitsForTheAnswer: with Wait, a call the policy asks about
// (a write of a protected path of the project) opens an approval and waits; approved, it runs;
// denied, it is refused and writes nothing; without Wait, it is refused as an
// ask at once.
func TestFileToolWaitsForTheAnswer(t *testing.T) {
	a := openTestApp(t, Options{OpenDatabase: true})
	ctx := context.Background()
	proj := t.TempDir()
	ft, err := a.FileTools(proj, warden.Request{Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	defer ft.Close()
	answering := func(ans warden.Answer) *AskWait {
		return &AskWait{Channel: "fs", Notify: func(id string) {
			go func() {
				time.Sleep(20 * time.Millisecond) // let the caller start waiting
				if _, err := a.Queue.Answer(ctx, id, ans, approval.Who{Channel: "console", Name: "op"}); err != nil {
					t.Errorf("answer %s: %v", id, err)
				}
			}()
		}}
	}

	ft.Wait = answering(warden.AnswerOnce)
	if err := ft.Write(ctx, ".mcp.json", []byte("x")); err != nil {
		t.Fatalf("approved write: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(proj, ".mcp.json")); err != nil || string(b) != "x" {
		t.Fatalf("approved write left %q, %v", b, err)
	}

	ft.Wait = answering(warden.AnswerDeny)
	err = ft.Write(ctx, ".warden.yaml", []byte("x"))
	var refused *Refused
	if !errors.As(err, &refused) || refused.Decision.Verdict != warden.Deny || refused.Decision.Rule != "approval.denied" {
		t.Fatalf("denied write: %v; want a deny by approval.denied", err)
	}
	if _, err := os.Stat(filepath.Join(proj, ".warden.yaml")); !os.IsNotExist(err) {
		t.Fatalf("a denied write left a file: %v", err)
	}

	ft.Wait = nil
	if err := os.Mkdir(filepath.Join(proj, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = ft.Write(ctx, "pkg/.mcp.json", []byte("x"))
	if !errors.As(err, &refused) || refused.Decision.Verdict != warden.Ask {
		t.Fatalf("write without waiting: %v; want refused as an ask", err)
	}
}
