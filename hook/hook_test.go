package hook

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/agentwarden/warden"
)

// fakeDecider answers every request with one verdict, or fails, and records
// what it was asked.
type fakeDecider struct {
	verdict string // allow, ask, deny, sandbox or error
	rewrite string
	panics  bool
	reqs    []*warden.Request
}

func (f *fakeDecider) Check(_ context.Context, req *warden.Request) (warden.Decision, error) {
	f.reqs = append(f.reqs, req)
	if f.panics {
		panic("fake decider panics")
	}
	if f.verdict == "error" {
		return warden.Decision{}, warden.Errorf(warden.EUnavailable, "the audit log is unavailable")
	}
	v, err := warden.ParseVerdict(f.verdict)
	if err != nil {
		return warden.Decision{}, err
	}
	return warden.Decision{Verdict: v, Reason: "fake " + f.verdict + " reason", Rule: "test.fake", Rewrite: f.rewrite}, nil
}

var verdicts = []string{"allow", "ask", "deny", "sandbox", "error"}

// requestView is what a golden file records of each request.
type requestView struct {
	Capability  string                     `json:"capability"`
	Action      string                     `json:"action"`
	Resource    string                     `json:"resource"`
	Tool        string                     `json:"tool,omitempty"`
	Params      map[string]json.RawMessage `json:"params,omitempty"`
	RequestedBy string                     `json:"requested_by"`
	Session     string                     `json:"session,omitempty"`
	Host        string                     `json:"host"`
	Cwd         string                     `json:"cwd,omitempty"`
}

func viewOf(r *warden.Request) string {
	b, _ := json.Marshal(requestView{r.Capability, r.Action, r.Resource, r.Tool, r.Params, r.RequestedBy, r.Session, r.Host, r.Cwd})
	return string(b)
}

// golden is a parsed .golden file: "key: value" lines; "#" starts a comment.
// Keys are "request" (one line per request decided, in order) and
// VERDICT.status, VERDICT.stdout and VERDICT.stderr for each fake verdict; an
// absent stdout or stderr means nothing was written, and a newline in stderr
// is written as \n.
type golden struct {
	keys []string
	vals map[string][]string
}

func readGolden(t *testing.T, path string) golden {
	t.Helper()
	g := golden{vals: map[string][]string{}}
	f, err := os.Open(path)
	if err != nil {
		t.Errorf("open golden: %v", err)
		return g
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("%s: line %q is not key: value", path, line)
		}
		v = strings.TrimPrefix(v, " ")
		if _, seen := g.vals[k]; !seen {
			g.keys = append(g.keys, k)
		}
		g.vals[k] = append(g.vals[k], v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return g
}

// goldenRunner is the warden exec command line the recorded payloads'
// answers wrap contained shell commands in.
var goldenRunner = Runner{"/opt/warden", "--home", "/h", "exec"}

// run runs Run for host with payload and a fake decider answering verdict,
// with a sandbox available (goldenRunner).
func run(host string, payload []byte, d Decider) (status int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	status = Run(context.Background(), host, bytes.NewReader(payload), &out, &errOut, d, func() Runner { return goldenRunner })
	return status, strings.TrimSuffix(out.String(), "\n"), strings.TrimSuffix(errOut.String(), "\n")
}

// TestRecordedPayloads runs every recorded payload under testdata/<host>
// against every fake verdict and compares request, exit status, stdout and
// stderr with the payload's .golden file.
func TestRecordedPayloads(t *testing.T) {
	for _, host := range HostNames() {
		payloads, err := filepath.Glob(filepath.Join("testdata", host, "*.json"))
		if err != nil || len(payloads) == 0 {
			t.Fatalf("no payloads for %s: %v", host, err)
		}
		for _, path := range payloads {
			name := host + "/" + strings.TrimSuffix(filepath.Base(path), ".json")
			t.Run(name, func(t *testing.T) {
				payload, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				g := readGolden(t, strings.TrimSuffix(path, ".json")+".golden")
				var want, got strings.Builder
				for _, k := range g.keys {
					for _, v := range g.vals[k] {
						fmt.Fprintf(&want, "%s: %s\n", k, v)
					}
				}
				for _, v := range verdicts {
					d := &fakeDecider{verdict: v}
					status, stdout, stderr := run(host, payload, d)
					if v == "allow" {
						for _, r := range d.reqs {
							fmt.Fprintf(&got, "request: %s\n", viewOf(r))
						}
					}
					fmt.Fprintf(&got, "%s.status: %d\n", v, status)
					if stdout != "" {
						fmt.Fprintf(&got, "%s.stdout: %s\n", v, stdout)
					}
					if stderr != "" {
						fmt.Fprintf(&got, "%s.stderr: %s\n", v, strings.ReplaceAll(stderr, "\n", `\n`))
					}
					checkRaw(t, host, payload, d.reqs)
				}
				if os.Getenv("WARDEN_UPDATE_GOLDEN") != "" {
					golden := strings.TrimSuffix(path, ".json") + ".golden"
					old, _ := os.ReadFile(golden)
					var head strings.Builder
					for line := range strings.Lines(string(old)) {
						if !strings.HasPrefix(line, "#") {
							break
						}
						head.WriteString(line)
					}
					if err := os.WriteFile(golden, []byte(head.String()+got.String()), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				if got.String() != want.String() {
					t.Errorf("Run(%s) answers differ from the golden file\n--- got\n%s--- want\n%s", name, got.String(), want.String())
				}
			})
		}
	}
}

// checkRaw asserts that Raw is the payload verbatim, except for Cursor's
// beforeReadFile, whose Raw must hold no file contents.
func checkRaw(t *testing.T, host string, payload []byte, reqs []*warden.Request) {
	t.Helper()
	for _, r := range reqs {
		if host == "cursor" && r.Action == "read" {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(r.Raw, &m); err != nil {
				t.Fatalf("Raw is not JSON: %v", err)
			}
			for _, k := range cursorContentKeys {
				if _, ok := m[k]; ok {
					t.Errorf("cursor beforeReadFile Raw keeps %q", k)
				}
			}
			continue
		}
		if !bytes.Equal(r.Raw, bytes.TrimSpace(payload)) {
			t.Errorf("%s Raw = %s, want the payload verbatim", host, r.Raw)
		}
	}
}

// TestFailuresBlock covers every failure Run must answer with a block.
func TestFailuresBlock(t *testing.T) {
	big := append([]byte(`{"hook_event_name":"PreToolUse","x":"`), bytes.Repeat([]byte("a"), maxPayloadBytes)...)
	big = append(big, `"}`...)
	cases := []struct {
		name, host, payload string
		d                   Decider
	}{
		{name: "unknown host", host: "vim", payload: `{}`, d: &fakeDecider{verdict: "allow"}},
		{name: "empty payload", host: "claude", payload: ``, d: &fakeDecider{verdict: "allow"}},
		{name: "white space", host: "codex", payload: " \n", d: &fakeDecider{verdict: "allow"}},
		{name: "not an object", host: "gemini", payload: `[1]`, d: &fakeDecider{verdict: "allow"}},
		{name: "two objects", host: "claude", payload: `{"hook_event_name":"PreToolUse"} {}`, d: &fakeDecider{verdict: "allow"}},
		{name: "truncated", host: "cursor", payload: `{"hook_event_name":"beforeShellExecution","command":"ls"`, d: &fakeDecider{verdict: "allow"}},
		{name: "oversized", host: "claude", payload: string(big), d: &fakeDecider{verdict: "allow"}},
		{name: "no event", host: "claude", payload: `{"tool_name":"Bash","tool_input":{"command":"ls"}}`, d: &fakeDecider{verdict: "allow"}},
		{name: "wrong field type", host: "claude", payload: `{"hook_event_name":"PreToolUse","tool_name":7}`, d: &fakeDecider{verdict: "allow"}},
		{name: "tool_input not object", host: "codex", payload: `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":"ls"}`, d: &fakeDecider{verdict: "allow"}},
		{name: "bash without command", host: "claude", payload: `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{}}`, d: &fakeDecider{verdict: "allow"}},
		{name: "command not a string", host: "gemini", payload: `{"hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":["ls"]}}`, d: &fakeDecider{verdict: "allow"}},
		{name: "patch without files", host: "codex", payload: `{"hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"hello"}}`, d: &fakeDecider{verdict: "allow"}},
		{name: "fails Validate", host: "claude", payload: `{"hook_event_name":"PreToolUse","session_id":"a\u0007b","tool_name":"Bash","tool_input":{"command":"ls"}}`, d: &fakeDecider{verdict: "allow"}},
		{name: "nil decider", host: "claude", payload: `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`},
		{name: "decider panics", host: "cursor", payload: `{"hook_event_name":"beforeShellExecution","command":"ls"}`, d: &fakeDecider{verdict: "allow", panics: true}},
		{name: "cursor prompt", host: "cursor", payload: `{"hook_event_name":"beforeSubmitPrompt","prompt":"hi"}`, d: &fakeDecider{verdict: "allow"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, stdout, stderr := run(c.host, []byte(c.payload), c.d)
			if status != statusBlock || stderr == "" {
				t.Fatalf("Run(%s, %.60q) = %d, stderr %q; want 2 with a message", c.host, c.payload, status, stderr)
			}
			if c.host == "cursor" {
				var a cursorAnswer
				if err := json.Unmarshal([]byte(stdout), &a); err != nil || a.Permission != "deny" {
					t.Errorf("cursor block stdout = %q, want a deny", stdout)
				}
			} else if stdout != "" {
				t.Errorf("Run(%s) stdout = %q, want nothing", c.host, stdout)
			}
		})
	}
}

// failingWriter fails every write, or panics.
type failingWriter struct{ panics bool }

func (w failingWriter) Write([]byte) (int, error) {
	if w.panics {
		panic("writer panics")
	}
	return 0, errors.New("broken pipe")
}

func TestStdoutWriteFailureBlocks(t *testing.T) {
	payload := `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`
	for _, panics := range []bool{false, true} {
		t.Run(fmt.Sprintf("panics=%v", panics), func(t *testing.T) {
			var errOut bytes.Buffer
			status := Run(context.Background(), "claude", strings.NewReader(payload), failingWriter{panics}, &errOut, &fakeDecider{verdict: "allow"}, nil)
			if status != statusBlock || errOut.Len() == 0 {
				t.Errorf("Run with a failing stdout = %d, stderr %q; want 2 with a message", status, errOut.String())
			}
		})
	}
}

// TestStrongestVerdictWins: an apply_patch touching two files is decided
// per file and the strongest verdict answers.
func TestStrongestVerdictWins(t *testing.T) {
	payload := `{"hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Update File: a.go\n*** Add File: b.go\n*** End Patch"}}`
	d := &seqDecider{verdicts: []warden.Verdict{warden.Allow, warden.Ask}}
	status, _, stderr := run("codex", []byte(payload), d)
	if status != statusBlock || !strings.Contains(stderr, "verdict 1") {
		t.Errorf("Run = %d, %q; want the ask of the second file as a block", status, stderr)
	}
	if d.n != 2 {
		t.Errorf("decided %d requests, want 2", d.n)
	}
}

type seqDecider struct {
	verdicts []warden.Verdict
	n        int
}

func (s *seqDecider) Check(context.Context, *warden.Request) (warden.Decision, error) {
	v := s.verdicts[s.n%len(s.verdicts)]
	s.n++
	return warden.Decision{Verdict: v, Reason: fmt.Sprintf("verdict %d", s.n-1), Rule: "test.seq"}, nil
}

// TestSandboxRunner covers the answers once warden exec can sandbox: hosts
// that can rewrite a command wrap it; the rest keep refusing.
func TestSandboxRunner(t *testing.T) {
	cases := []struct {
		name, host, payload, rewrite, want string
	}{
		{"claude wraps", "claude", `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"make test","timeout":5}}`, "",
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"/opt/warden --home /h exec --profile guard --requested-by agent -- make test","timeout":5}}}`},
		{"claude uses the rewrite", "claude", `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"npm test"}}`, "bun test",
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"/opt/warden --home /h exec --profile guard --requested-by agent -- bun test"}}}`},
		{"claude refuses to disable the sandbox", "claude", `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"make","dangerouslyDisableSandbox":true}}`, "",
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"warden lets this command run only inside its sandbox, and the call asks to disable the sandbox: fake sandbox reason (warden rule test.fake)"}}`},
		{"claude asks for a non-shell tool", "claude", `{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/a"}}`, "",
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"fake sandbox reason (warden rule test.fake)"}}`},
		{"codex wraps", "codex", `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"make"}}`, "",
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"/opt/warden --home /h exec --profile guard --requested-by agent -- make"}}}`},
		{"gemini wraps", "gemini", `{"hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"make","dir_path":"/p"}}`, "",
			`{"decision":"allow","hookSpecificOutput":{"hookEventName":"BeforeTool","tool_input":{"command":"/opt/warden --home /h exec --profile guard --requested-by agent -- make","dir_path":"/p"}}}`},
		{"cursor asks", "cursor", `{"hook_event_name":"beforeShellExecution","command":"make"}`, "",
			`{"permission":"ask","user_message":"fake sandbox reason (warden rule test.fake)","agent_message":"fake sandbox reason (warden rule test.fake)"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			payload, err := readPayload(strings.NewReader(c.payload))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := adapters[c.host].handle(context.Background(), payload, &fakeDecider{verdict: "sandbox", rewrite: c.rewrite}, func() Runner { return Runner{"/opt/warden", "--home", "/h", "exec"} })
			if err != nil {
				t.Fatal(err)
			}
			if string(resp.stdout) != c.want || resp.status != statusOK {
				t.Errorf("handle = %d %s\nwant 0 %s", resp.status, resp.stdout, c.want)
			}
		})
	}
}

// TestRunnerIsFoundOnlyForContainedCommands checks that Run looks the
// sandbox runner up (which, through the daemon, means reading the policy
// file) only when a shell command is allowed or sent to the sandbox, and
// then once.
func TestRunnerIsFoundOnlyForContainedCommands(t *testing.T) {
	bash := []byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"make"}}`)
	read := []byte(`{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/a"}}`)
	for _, c := range []struct {
		name    string
		payload []byte
		verdict string
		want    int
	}{
		{"allow", bash, "allow", 1},
		{"ask", bash, "ask", 1},
		{"deny", bash, "deny", 0},
		{"sandboxed read", read, "sandbox", 0},
		{"sandboxed command", bash, "sandbox", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			find := func() Runner { calls++; return Runner{"/opt/warden", "exec"} }
			var out, errOut bytes.Buffer
			Run(context.Background(), "claude", bytes.NewReader(c.payload), &out, &errOut, &fakeDecider{verdict: c.verdict}, find)
			if calls != c.want {
				t.Errorf("runner looked up %d times, want %d (answer %s)", calls, c.want, out.String())
			}
		})
	}
}

// BenchmarkRun measures one hook answer without the gate: read, parse, map,
// answer. The gate's own cost is in app.BenchmarkGateCheck*.
func BenchmarkRun(b *testing.B) {
	for _, host := range HostNames() {
		payloads, _ := filepath.Glob(filepath.Join("testdata", host, "*.json"))
		payload, err := os.ReadFile(payloads[0])
		if err != nil {
			b.Fatal(err)
		}
		b.Run(host, func(b *testing.B) {
			d := &fakeDecider{verdict: "allow"}
			var out, errOut bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				d.reqs = d.reqs[:0]
				out.Reset()
				errOut.Reset()
				Run(context.Background(), host, bytes.NewReader(payload), &out, &errOut, d, nil)
			}
		})
	}
}

func TestHostNames(t *testing.T) {
	want := []string{"claude", "codex", "cursor", "gemini"}
	if got := HostNames(); !slices.Equal(got, want) {
		t.Errorf("HostNames() = %v, want %v", got, want)
	}
}

func TestPatchFiles(t *testing.T) {
	patch := "*** Begin Patch\n*** Update File: src/a.go\n*** Move to: src/b.go\n@@\n-x\n+y\n*** Delete File: old.txt\r\n*** Add File: src/a.go\n*** End Patch\n"
	want := []string{"src/a.go", "src/b.go", "old.txt"}
	if got := patchFiles(patch); !slices.Equal(got, want) {
		t.Errorf("patchFiles() = %q, want %q", got, want)
	}
}

// TestSandboxCommandQuoting checks that a wrapped command reads back, word
// for word, as warden exec running exactly the agent's command under bash.
func TestSandboxCommandQuoting(t *testing.T) {
	runner := Runner{"/opt/my warden/warden", "--home", "/h", "exec"}
	for _, cmd := range []string{
		"make test", `echo 'a b' "$HOME"; ls`, "rm -rf $(pwd)/build && echo `date`", "printf '%s\\n' \\$x",
		"cat <<EOF\nhi\nEOF", "a'b\"c\\d", "--help", "-c", "$'\\x41'", "",
	} {
		wrapped, err := sandboxCommand(runner, warden.Decision{Sandbox: "guard"}, nil, cmd)
		if err != nil {
			t.Fatalf("sandboxCommand(%q): %v", cmd, err)
		}
		f, err := syntax.NewParser().Parse(strings.NewReader(wrapped), "")
		if err != nil || len(f.Stmts) != 1 {
			t.Fatalf("sandboxCommand(%q) = %q, which does not parse as one command: %v", cmd, wrapped, err)
		}
		call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
		if !ok {
			t.Fatalf("sandboxCommand(%q) = %q, not a simple command", cmd, wrapped)
		}
		var words []string
		for _, w := range call.Args {
			lit, err := expand.Literal(nil, w)
			if err != nil {
				t.Fatalf("sandboxCommand(%q) = %q: word %v does not expand statically: %v", cmd, wrapped, w, err)
			}
			words = append(words, lit)
		}
		want := append(append([]string{}, runner...), "--profile", "guard", "--", "bash", "-c", cmd)
		if argv, ok := directArgs(cmd); ok {
			want = append(append(append([]string{}, runner...), "--profile", "guard", "--"), argv...)
		}
		if !slices.Equal(words, want) {
			t.Errorf("sandboxCommand(%q) = %q, which reads back as %q", cmd, wrapped, words)
		}
	}
	req := &warden.Request{Session: "s 1", RequestedBy: "cron:job", Autonomous: true}
	wrapped, err := sandboxCommand(runner, warden.Decision{Sandbox: "guard"}, req, "make")
	if err != nil || !strings.Contains(wrapped, "--session 's 1' --requested-by cron:job --autonomous -- make") {
		t.Errorf("sandboxCommand for an autonomous session = %q, %v; want the requester passed on to warden exec", wrapped, err)
	}
	if _, err := sandboxCommand(runner, warden.Decision{}, nil, "a\x00b"); err == nil {
		t.Errorf("sandboxCommand with a NUL byte did not refuse")
	}
}

// TestDirectArgs: a command runs without its bash only where bash would
// have done nothing but run the program with these very words, and its
// command line is the same either way.
func TestDirectArgs(t *testing.T) {
	direct := map[string][]string{
		"ls -la":                         {"ls", "-la"},
		"go test ./...":                  {"go", "test", "./..."},
		"git commit -m 'fix the bug'":    {"git", "commit", "-m", "fix the bug"},
		"npm run build":                  {"npm", "run", "build"},
		"grep -rn 'a|b' src":             {"grep", "-rn", "a|b", "src"},
		"python3 -m pytest -k 'x and y'": {"python3", "-m", "pytest", "-k", "x and y"},
		"git log --format=%H -n 1":       {"git", "log", "--format=%H", "-n", "1"},
	}
	for cmd, want := range direct {
		got, ok := directArgs(cmd)
		if !ok || !slices.Equal(got, want) {
			t.Errorf("directArgs(%q) = %q, %v; want %q", cmd, got, ok, want)
		}
	}
	for _, cmd := range []string{
		"", "echo hi", "cd src", "true", "test -f x", "[ -f x ]", "exec ls", "source env.sh", "export A=1",
		"ls *.go", "ls ?", "ls [ab]", "echo {a,b}", "ls ~", "ls ~/src", "cat a=~/x", "ls $HOME", `ls "$HOME"`, "ls $(pwd)", "ls `pwd`",
		"A=1 make", "make > out", "make 2>&1", "make &", "! make", "make; ls", "make && ls", "make | tee x", "make # note",
		`ls "a b"`, `ls a\ b`, `ls 'a'`, "ls  -la", "ls -la ", "$'ls'", "./build.sh", "/bin/true", "bin/tool x",
		"if true; then ls; fi", "(ls)", "{ ls; }", "time ls", "ls <(true)", "cat <<EOF\nx\nEOF",
	} {
		if got, ok := directArgs(cmd); ok {
			t.Errorf("directArgs(%q) = %q; want it run by bash", cmd, got)
		}
	}
}

// openingDecider is a fakeDecider that also opens approvals, recording the
// channel of each CheckOpen.
type openingDecider struct {
	fakeDecider
	channels []string
}

func (o *openingDecider) CheckOpen(ctx context.Context, req *warden.Request, channel string) (warden.Decision, error) {
	o.channels = append(o.channels, channel)
	d, err := o.Check(ctx, req)
	if d.Verdict == warden.Ask {
		d.ApprovalID = fmt.Sprintf("appr-%d", len(o.channels))
	}
	return d, err
}

// TestHostsThatCannotAskOpenApprovals: Codex, Gemini CLI (whose ask ends a
// headless run silently, and which does not say whether a person is there),
// Cursor before reading a file, and Claude Code in a headless run or where it
// does not say, cannot be relied on to ask a person, so an ask opens an
// approval on the host's channel and the answer names it; hosts that ask
// themselves open none.
func TestHostsThatCannotAskOpenApprovals(t *testing.T) {
	for _, tc := range []struct {
		name, host, payload, channel string
		env                          []string // the host's environment
		approvals                    int
		decision                     string // Claude's and Gemini's answer
	}{
		{"codex", "codex", "bash", "hook:codex", nil, 1, ""},
		{"codex apply_patch", "codex", "apply_patch", "hook:codex", nil, 2, ""}, // one write per file
		{"cursor read_file", "cursor", "read_file", "hook:cursor", nil, 1, ""},
		{"cursor shell", "cursor", "shell", "", nil, 0, ""}, // Cursor asks itself
		{"claude interactive", "claude", "bash", "", []string{"CLAUDE_CODE_SESSION_ATTENDED=1"}, 0, `"permissionDecision":"ask"`},
		{"claude headless", "claude", "bash", "hook:claude", []string{"CLAUDE_CODE_SESSION_ATTENDED=0"}, 1, `"permissionDecision":"deny"`},
		{"claude unknown", "claude", "bash", "hook:claude", nil, 1, `"permissionDecision":"ask"`},
		{"gemini", "gemini", "shell", "hook:gemini", nil, 1, `"decision":"deny"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			payload, err := os.ReadFile(filepath.Join("testdata", tc.host, tc.payload+".json"))
			if err != nil {
				t.Fatal(err)
			}
			d := &openingDecider{fakeDecider: fakeDecider{verdict: "ask"}}
			var out, errOut bytes.Buffer
			ctx := context.Background()
			if tc.env != nil {
				ctx = WithHostEnv(ctx, tc.env)
			}
			status := Run(ctx, tc.host, bytes.NewReader(payload), &out, &errOut, d, func() Runner { return goldenRunner })
			stdout, stderr := out.String(), errOut.String()
			if tc.decision != "" && !strings.Contains(stdout, tc.decision) {
				t.Errorf("answer %s; want %s", stdout, tc.decision)
			}
			if len(d.channels) != tc.approvals {
				t.Fatalf("CheckOpen called %d times (%v); want %d", len(d.channels), d.channels, tc.approvals)
			}
			for _, ch := range d.channels {
				if ch != tc.channel {
					t.Errorf("approval opened on channel %q; want %q", ch, tc.channel)
				}
			}
			answer := stdout + stderr
			if tc.approvals == 0 {
				if strings.Contains(answer, "appr-") {
					t.Errorf("a host that asks itself was told of an approval: %s", answer)
				}
				return
			}
			if tc.host == "codex" && status != statusBlock {
				t.Errorf("codex status %d; want %d (block)", status, statusBlock)
			}
			if !strings.Contains(answer, "warden approvals approve ") || !strings.Contains(answer, "appr-1") || !strings.Contains(answer, "retry exactly the same call") {
				t.Errorf("the block does not say which approval to answer and to retry: %s", answer)
			}
			if tc.approvals == 2 && !strings.Contains(answer, "appr-1, appr-2") {
				t.Errorf("the block does not name every approval: %s", answer)
			}
		})
	}
}
