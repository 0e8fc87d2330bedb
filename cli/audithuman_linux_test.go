package cli

import (
	"strings"
	"testing"
)

// TestAuditForPeopleAtATerminal: at a terminal, audit and audit events
// print for a person (a table with coloured verdicts and severities, what
// the list holds, what to run next; one trace in full with its stages),
// never a control character from a request; --json prints JSON there too.
// Piped, they print JSON lines (audit.txtar).
func TestAuditForPeopleAtATerminal(t *testing.T) {
	home := t.TempDir()
	for _, args := range [][]string{
		{"init"},
		{"check", "tool", "call", "get_price"},
		{"check", "tool", "call", "buy_token", "--autonomous"},
		{"check", "filesystem", "read", "/tmp/notes-\x1b]2;owned\x07.txt"},
		{"kill"},
	} {
		if out, err := wardenCmd(home, args...).CombinedOutput(); err != nil && args[0] != "kill" {
			t.Fatalf("warden %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	piped, err := wardenCmd(home, "audit", "--json", "--limit", "1").Output()
	if err != nil {
		t.Fatal(err)
	}
	trace := strings.Split(strings.Split(string(piped), `"trace_id":"`)[1], `"`)[0]
	run := func(env []string, args ...string) string {
		t.Helper()
		cmd := wardenCmd(home, args...)
		cmd.Env = append(cmd.Env, env...)
		out, err := atTerminal(t, cmd).wait()
		if err != nil {
			t.Fatalf("warden %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	tests := []struct {
		name    string
		env     []string
		args    []string
		want    []string
		notWant []string
	}{
		{name: "audit coloured", env: []string{"TERM=xterm"}, args: []string{"audit"},
			want: []string{"TIME", "VERDICT", "\x1b[1;32mALLOW\x1b[0m", "\x1b[1;31mDENY\x1b[0m", "tools.tier1",
				"decisions, oldest first: ", "1 allow, 2 deny", "next: `warden audit --trace TRACE`"},
			notWant: []string{`"verdict"`, "\x1b]2;owned", "older ones match"}},
		{name: "audit NO_COLOR", env: []string{"NO_COLOR=1"}, args: []string{"audit", "--limit", "1"},
			want: []string{"1 decision: ", "older ones match too (raise --limit"}, notWant: []string{"\x1b["}},
		{name: "audit one trace", env: []string{"NO_COLOR=1"}, args: []string{"audit", "--trace", trace},
			want:    []string{"  asked   filesystem read /tmp/notes-", "  rule    ", "  stage   ", "  by      no requester named", "trace " + trace},
			notWant: []string{"\x1b]2;owned", "VERDICT"}},
		{name: "audit nothing", args: []string{"audit", "--since", "2099-01-01"}, want: []string{"no audit rows match"}},
		{name: "audit --json", args: []string{"audit", "--json"}, want: []string{`{"seq":1,`}, notWant: []string{"VERDICT"}},
		{name: "audit tail", env: []string{"TERM=xterm"}, args: []string{"audit", "tail", "--limit", "2"},
			want: []string{"VERDICT", "\x1b[1;"}, notWant: []string{`"seq"`, "\x1b]2;owned"}},
		{name: "audit events", env: []string{"TERM=xterm"}, args: []string{"audit", "events"},
			want: []string{"SEVERITY", "\x1b[1;31mcritical\x1b[0m", "kill_switch_on"}, notWant: []string{`"seq"`}},
		{name: "audit events --json", args: []string{"audit", "events", "--json"}, want: []string{`"type":"kill_switch_on"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := run(tt.env, tt.args...)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("warden %s at a terminal showed %q, want %q", strings.Join(tt.args, " "), out, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out, w) {
					t.Errorf("warden %s at a terminal showed %q, want no %q", strings.Join(tt.args, " "), out, w)
				}
			}
		})
	}
}

// TestWriteColumnsAlignsColouredCells: colour does not count toward a
// column's width, so coloured and plain rows line up.
func TestWriteColumnsAlignsColouredCells(t *testing.T) {
	var b strings.Builder
	rows := [][]string{{"VERDICT", "RULE"}, {"ALLOW", "a.b"}, {"SANDBOX", "c"}, {"DENY", "d"}}
	if err := writeColumns(&b, rows, func(row, col int, padded string) string {
		if row == 0 || col != 0 {
			return padded
		}
		return paintVerdict(padded, true)
	}); err != nil {
		t.Fatal(err)
	}
	want := "VERDICT  RULE\n\x1b[1;32mALLOW\x1b[0m    a.b\n\x1b[1;36mSANDBOX\x1b[0m  c\n\x1b[1;31mDENY\x1b[0m     d\n"
	if b.String() != want {
		t.Errorf("writeColumns = %q, want %q", b.String(), want)
	}
}
