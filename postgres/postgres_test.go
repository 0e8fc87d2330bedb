package postgres

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
	"github.com/agentwarden/warden/audit/audittest"
	"github.com/agentwarden/warden/internal/pgtest"
)

var ctx = context.Background()

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// testKey is the checkpoint key of the test stores.
var testKey = func() []byte {
	k, err := audit.NewKey()
	if err != nil {
		panic(err)
	}
	return k
}()

// writerRole is the role the test stores act as: a member of
// warden_writer, like the login role of a fleet's daemons.
const writerRole = "warden_test_writer"

// openTest opens a store, with a checkpoint key, on a fresh migrated
// database, acting as writerRole; it is closed when t ends. It returns the
// store and the database's owner DSN.
func openTest(t testing.TB) (*Store, string) {
	t.Helper()
	dsn := newDatabase(t)
	return openDSN(t, pgtest.WithRole(t, dsn, writerRole)), dsn
}

// newDatabase returns the owner DSN of a fresh database at the current
// schema (a copy of one migrated once).
func newDatabase(t testing.TB) string {
	t.Helper()
	tmpl := pgtest.Prepared(t, "migrated", func(dsn string) error {
		if _, _, err := Migrate(ctx, dsn, ""); err != nil {
			return err
		}
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		_, err = c.Exec(ctx, `DO $$ BEGIN
	IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '`+writerRole+`') THEN CREATE ROLE `+writerRole+` NOLOGIN; END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
GRANT warden_writer TO `+writerRole)
		return err
	})
	return pgtest.NewDatabaseFrom(t, tmpl)
}

func openDSN(t testing.TB, dsn string) *Store {
	t.Helper()
	s, err := Open(ctx, dsn, Options{Key: testKey})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	audittest.Run(t, func(t *testing.T) audittest.Store {
		s, _ := openTest(t)
		return s
	})
}

func TestApprovalConformance(t *testing.T) {
	audittest.RunApprovals(t, func(t *testing.T) warden.ApprovalStore {
		s, _ := openTest(t)
		return s
	})
}
