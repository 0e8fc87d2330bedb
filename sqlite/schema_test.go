package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/ncruces/go-sqlite3"
)

func TestOpenCreatesSchema(t *testing.T) {
	_, path := openTest(t)
	c := rawConn(t, path)
	want := map[string]string{
		"journal_mode": "wal",
		"user_version": fmt.Sprint(schemaVersion),
	}
	for pragma, v := range want {
		if got := queryRows(t, c, "PRAGMA "+pragma, nil)[0][0]; got != v {
			t.Errorf("PRAGMA %s = %s, want %s", pragma, got, v)
		}
	}
	rows := queryRows(t, c, `SELECT type, name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name`, nil)
	got := map[string]bool{}
	for _, r := range rows {
		got[r[0]+" "+r[1]] = true
	}
	for _, name := range []string{
		"table audit", "view stage_events", "table security_events", "table spend_ledger",
		"index audit_created_at", "index audit_trace_id", "index spend_ledger_created_at",
		"trigger audit_no_update", "trigger audit_no_delete", "trigger audit_no_replace",
		"trigger security_events_no_update", "trigger security_events_no_delete",
		"trigger spend_ledger_no_update", "trigger spend_ledger_no_delete",
		"table spend_releases", "trigger spend_releases_no_update", "trigger spend_releases_no_delete",
		"table paper_book", "table paper_fills", "table stoploss_rules", "table stoploss_marks",
	} {
		if !got[name] {
			t.Errorf("schema lacks %s", name)
		}
	}
}

// TestOpenFastPath shows that Open runs no DDL when user_version is current: a
// database that claims the current version but has no tables opens untouched.
func TestOpenFastPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warden.db")
	c, err := sqlite3.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Exec(fmt.Sprintf(`PRAGMA journal_mode = WAL; PRAGMA user_version = %d`, schemaVersion)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := len(queryRows(t, rawConn(t, path), `SELECT name FROM sqlite_schema`, nil)); n != 0 {
		t.Errorf("Open created %d schema objects in a database whose user_version is current; want none (no DDL)", n)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warden.db")
	c, err := sqlite3.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	s, err := Open(ctx, path)
	if err == nil {
		s.Close()
		t.Fatal("Open of a database from a newer warden = nil error, want one")
	}
	var we *warden.Error
	if !errors.As(err, &we) || we.Code != warden.EConflict || we.Hint == "" {
		t.Errorf("Open error = %v, want a *warden.Error with code %s and a hint", err, warden.EConflict)
	}
}

func TestOpenReopen(t *testing.T) {
	s, path := openTest(t)
	seed(t, s)
	for range 3 {
		s2, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := s2.Verify(ctx)
		if err != nil || !rep.OK() || rep.AuditRows != 5 {
			t.Errorf("reopened Verify = %+v, %v; want 5 intact rows", rep, err)
		}
		if err := s2.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOpenConcurrentCreate opens a new database from many connections at once;
// the migration must run exactly once and every Open must succeed.
func TestOpenConcurrentCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warden.db")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(ctx, path)
			if err != nil {
				errs <- err
				return
			}
			errs <- s.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent Open: %v", err)
		}
	}
}

func TestClosedStore(t *testing.T) {
	s, _ := openTest(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Record(ctx, &warden.AuditEntry{}, nil); !errors.Is(err, errClosed) {
		t.Errorf("Record on a closed store = %v, want %v", err, errClosed)
	}
	if _, err := s.Entries(ctx, warden.AuditFilter{}); !errors.Is(err, errClosed) {
		t.Errorf("Entries on a closed store = %v, want %v", err, errClosed)
	}
	if _, err := s.SpentSince(ctx, time.Time{}); !errors.Is(err, errClosed) {
		t.Errorf("SpentSince on a closed store = %v, want %v", err, errClosed)
	}
}

// TestSchemaInDatabaseFile checks that a new database's schema reaches the main
// file at creation, although later closes leave the WAL in place: a copy of
// warden.db alone still has the tables.
func TestSchemaInDatabaseFile(t *testing.T) {
	_, path := openTest(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(cp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	const schema = `SELECT count(*) FROM sqlite_schema WHERE type IN ('table', 'view')`
	want := queryRows(t, rawConn(t, path), schema, nil)[0][0]
	if got := queryRows(t, rawConn(t, cp), schema, nil)[0][0]; got != want || want == "0" {
		t.Errorf("a copy of the database file without its WAL has %s tables and views, want %s", got, want)
	}
}
