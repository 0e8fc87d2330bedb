package fleet

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwarden/warden/internal/pgtest"
	"github.com/agentwarden/warden/postgres"
)

// TestStoreSwitchesEveryStore: store.dsn in the policy sends a home's
// decisions, events and verification to the fleet's database, and nothing
// to the home's own SQLite log; --store does the same for one command.
func TestStoreSwitchesEveryStore(t *testing.T) {
	dsn := migrated(t)
	home := newHome(t, [2]string{"store.dsn", dsn})
	h := []string{"--home", home}
	d := decision(t, must(t, nil, append(h, "check", "filesystem", "read", filepath.Join(home, "..", "notes.txt"))...).stdout)
	if d["trace_id"] == "" {
		t.Fatalf("decision without a trace: %v", d)
	}
	if n := count(t, dsn, `SELECT count(*) FROM audit`); n != 1 {
		t.Errorf("the fleet database holds %d audit rows after one check, want 1", n)
	}
	if n := count(t, dsn, fmt.Sprintf(`SELECT count(*) FROM audit WHERE trace_id = '%s'`, d["trace_id"])); n != 1 {
		t.Errorf("the decision's trace %v is not in the fleet database", d["trace_id"])
	}
	// The home's own database got none of it.
	if r := must(t, nil, append(h, "audit", "--json")...); strings.Count(r.stdout, `"trace_id"`) != 1 {
		t.Errorf("warden audit (which reads the fleet) listed:\n%s\nwant the one decision", r.stdout)
	}
	r := must(t, nil, append(h, "audit", "verify")...)
	if !strings.Contains(r.stdout, "OK") && !strings.Contains(strings.ToLower(r.stdout), "verif") {
		t.Errorf("audit verify said %q", r.stdout)
	}
	// --store sends another home to the same database for one command.
	other := newHome(t)
	must(t, nil, "--home", other, "--store", dsn, "check", "filesystem", "read", "/tmp/x")
	if n := count(t, dsn, `SELECT count(*) FROM audit`); n != 2 {
		t.Errorf("after a --store check the fleet database holds %d audit rows, want 2", n)
	}
	must(t, nil, append(h, "kill", "--reason", "drill")...)
	if n := count(t, dsn, `SELECT count(*) FROM security_events WHERE type = 'kill_switch_on'`); n != 1 {
		t.Errorf("the fleet database holds %d kill_switch_on events after warden kill, want 1", n)
	}
}

// TestKillWithStoreStopsThatFleet: warden kill --store turns on the stop
// of the fleet --store names, not only the home's own. (unkill --store,
// which goes the same way, needs a person at a terminal.)
func TestKillWithStoreStopsThatFleet(t *testing.T) {
	dsn := migrated(t)
	engaged := func() int64 {
		return count(t, dsn, `SELECT count(*) FROM (SELECT engaged FROM kill_switch ORDER BY seq DESC LIMIT 1) k WHERE k.engaged`)
	}
	other := newHome(t)
	must(t, nil, "--home", other, "--store", dsn, "kill", "--reason", "drill")
	if engaged() != 1 {
		t.Fatalf("after warden kill --store the fleet's stop is not on")
	}
	// A home of that fleet sees it.
	member := newHome(t, [2]string{"store.dsn", dsn})
	if r := run(t, nil, "--home", member, "check", "tool", "call", "analyze_market"); !strings.Contains(r.stdout+r.stderr, "kill") {
		t.Errorf("a fleet home's decision with the fleet's stop on: %s %s; want the stop named", r.stdout, r.stderr)
	}
}

// TestStoreSecretsStayOut: a password is refused in --store and in
// store.dsn without being repeated; given through store.passwordEnv it
// reaches the server but never the audit log, the events or the home.
func TestStoreSecretsStayOut(t *testing.T) {
	const secret = "pw-Zq7-never-logged"
	dsn := migrated(t)
	withPW := strings.Replace(dsn, "postgres@", "postgres:"+secret+"@", 1)
	home := newHome(t)
	for _, args := range [][]string{
		{"--home", home, "--store", withPW, "check", "filesystem", "read", "/tmp/x"},
		{"--home", home, "config", "set", "store.dsn", withPW},
		{"--store", withPW, "migrate"},
	} {
		r := run(t, nil, args...)
		if r.code == 0 {
			t.Errorf("warden %s succeeded; want a DSN holding a password refused", strings.Join(args[2:], " "))
		}
		if strings.Contains(r.stdout+r.stderr, secret) {
			t.Errorf("warden %s repeated the password:\n%s%s", strings.Join(args[2:], " "), r.stdout, r.stderr)
		}
	}
	must(t, nil, "--home", home, "config", "set", "store.dsn", dsn)
	env := []string{"WARDEN_TEST_PG_PASSWORD=" + secret}
	must(t, env, "--home", home, "config", "set", "store.passwordEnv", "WARDEN_TEST_PG_PASSWORD")
	if r := run(t, nil, "--home", home, "check", "filesystem", "read", "/tmp/x"); r.code == 0 || !strings.Contains(r.stderr, "WARDEN_TEST_PG_PASSWORD") {
		t.Errorf("a check with the password variable unset: exit %d, %q; want a refusal naming the variable", r.code, r.stderr)
	}
	must(t, env, "--home", home, "check", "filesystem", "read", "/tmp/x")
	must(t, env, "--home", home, "config", "set", "safety.dailySpendCap", "100")
	for _, sql := range []string{
		`SELECT count(*) FROM audit WHERE position('` + secret + `'::bytea in enc) > 0`,
		`SELECT count(*) FROM security_events WHERE position('` + secret + `'::bytea in enc) > 0`,
	} {
		if n := count(t, dsn, sql); n != 0 {
			t.Errorf("%d stored rows hold the password (%s)", n, sql)
		}
	}
	filepath.WalkDir(home, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(path); strings.Contains(string(b), secret) {
				t.Errorf("%s holds the password", path)
			}
		}
		return nil
	})
}

// TestUnknownSchemaIsRefused: a home refuses a database whose schema is
// newer than its warden knows, and one not migrated yet, naming what to do;
// nothing is decided.
func TestUnknownSchemaIsRefused(t *testing.T) {
	fresh := pgtest.NewDatabase(t)
	home := newHome(t)
	r := run(t, nil, "--home", home, "--store", fresh, "check", "filesystem", "read", "/tmp/x")
	if r.code == 0 || !strings.Contains(r.stderr, "warden migrate") {
		t.Errorf("check on an unmigrated database: exit %d, %q; want a refusal naming warden migrate", r.code, r.stderr)
	}
	dsn := migrated(t)
	if n := count(t, dsn, fmt.Sprintf(`WITH i AS (INSERT INTO warden_schema (version, name) VALUES (%d, 'future') RETURNING 1) SELECT count(*) FROM i`, postgres.SchemaVersion()+1)); n != 1 {
		t.Fatal("could not mark the schema newer")
	}
	for _, args := range [][]string{{"check", "filesystem", "read", "/tmp/x"}, {"serve", "--no-proxy"}} {
		r := run(t, nil, append([]string{"--home", home, "--store", dsn}, args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, "knows only up to") {
			t.Errorf("warden %s on a newer schema: exit %d, %q; want it refused", args[0], r.code, r.stderr)
		}
	}
	if n := count(t, dsn, `SELECT count(*) FROM audit`); n != 0 {
		t.Errorf("%d decisions recorded against an unknown schema", n)
	}
}
