package shellguard

import (
	"testing"

	"github.com/agentwarden/warden"
)

// TestDatabaseShellEscape: sqlite3's and duckdb's .shell and .system run a
// shell command, which is judged as that command (rm -rf . is denied
// however it is started); .load and load_extension() load native code the
// guard cannot see, which runs as an unknown program does (in the
// workspace sandbox, asked where none can run). Plain SQL stays allowed.
func TestDatabaseShellEscape(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		want warden.Verdict
	}{
		{`sqlite3 dev.db "select count(*) from users"`, warden.Allow},
		{`sqlite3 dev.db ".tables"`, warden.Allow},
		{`sqlite3 dev.db ".shell rm -rf ."`, warden.Deny},
		{`sqlite3 dev.db ".system rm -rf ."`, warden.Deny},
		{`sqlite3 -cmd ".shell rm -rf ." dev.db "select 1"`, warden.Deny},
		{`duckdb dev.db ".shell rm -rf ."`, warden.Deny},
		{"sqlite3 dev.db <<'EOF'\n.headers on\n  .system rm -rf .\nselect 1;\nEOF", warden.Deny},
		{`echo ".shell rm -rf ." | sqlite3 dev.db`, warden.Deny},
		{"sqlite3 dev.db '.sh\trm -rf .'", warden.Deny},
		{`sqlite3 dev.db ".sys rm -rf ."`, warden.Deny},
		{`sqlite3 dev.db ".shell ls"`, warden.Allow},
	} {
		if r := Classify(c.cmd, corpusEnv, defaultPolicy()); r.Verdict != c.want {
			t.Errorf("Classify(%q) = %v (%s: %s), want %v", c.cmd, r.Verdict, r.Rule, r.Reason, c.want)
		}
	}
	for _, cmd := range []string{
		`sqlite3 dev.db "select load_extension('/tmp/x.so')"`,
		`sqlite3 dev.db ".load /tmp/x.so"`,
	} {
		p := defaultPolicy()
		p.SandboxAvailable = false
		if r := Classify(cmd, corpusEnv, p); r.Verdict != warden.Ask {
			t.Errorf("Classify(%q) with no sandbox = %v (%s), want ask", cmd, r.Verdict, r.Rule)
		}
	}
}
