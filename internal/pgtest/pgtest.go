// Package pgtest gives tests a real PostgreSQL server: the one
// WARDEN_TEST_POSTGRES_DSN names (`make test` starts a throwaway cluster and
// sets it, see scripts/postgres.sh), or else a throwaway cluster this test
// binary starts itself with scripts/postgres.sh, stopped by Main. Each test
// gets a fresh database of its own. When neither a DSN nor an installed
// PostgreSQL is there, tests skip saying what to do.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvDSN names the server tests use instead of starting their own. The
// role it names must be allowed to create databases and roles.
const EnvDSN = "WARDEN_TEST_POSTGRES_DSN"

var (
	once    sync.Once
	admin   string // the server's DSN
	why     string // why there is none
	ownDir  string // the cluster this binary started, stopped by Main
	scriptP string
)

// script is scripts/postgres.sh of this source tree.
func script() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "scripts", "postgres.sh")
}

func setup() {
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		admin = dsn
		return
	}
	scriptP = script()
	if _, err := os.Stat(scriptP); err != nil {
		why = fmt.Sprintf("no PostgreSQL server: %s is unset and %s is missing", EnvDSN, scriptP)
		return
	}
	// Under /tmp, not $TMPDIR: the server runs as the postgres user, which
	// must reach the directory.
	dir, err := os.MkdirTemp("/tmp", "warden-pg.")
	if err != nil {
		why = "no PostgreSQL server: " + err.Error()
		return
	}
	out, err := exec.Command(scriptP, "start", dir).Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg = strings.TrimSpace(string(ee.Stderr))
		}
		why = fmt.Sprintf("no PostgreSQL server: %s is unset and no throwaway cluster could start (%s); run `scripts/postgres.sh install` (Debian's postgresql) or set %s", EnvDSN, msg, EnvDSN)
		os.RemoveAll(dir)
		return
	}
	ownDir = dir
	admin = strings.TrimSpace(string(out))
}

// Main runs the tests, drops the databases Prepared made and stops the
// cluster this binary started, if any: call it from TestMain as
// os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	pmu.Lock()
	for _, name := range prepared {
		if name != "" {
			_ = dropDatabase(admin, name)
		}
	}
	pmu.Unlock()
	if ownDir != "" {
		_ = exec.Command(scriptP, "stop", ownDir).Run()
	}
	return code
}

// AdminDSN returns the server's DSN, skipping t when there is no server.
func AdminDSN(t testing.TB) string {
	t.Helper()
	once.Do(setup)
	if admin == "" {
		t.Skip(why)
	}
	return admin
}

// NewDatabase creates an empty database for t and returns its DSN; the
// database is dropped when t ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	return NewDatabaseFrom(t, "")
}

// NewDatabaseFrom creates a database for t as a copy of template (a
// database name from Prepared; "" is an empty database) and returns its
// DSN; the database is dropped when t ends.
func NewDatabaseFrom(t testing.TB, template string) string {
	t.Helper()
	base := AdminDSN(t)
	name := randomName("warden_test_")
	sql := "CREATE DATABASE " + name
	if template != "" {
		sql += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	if err := adminExec(base, sql); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		if err := dropDatabase(base, name); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	return WithDatabase(t, base, name)
}

var (
	pmu      sync.Mutex
	prepared = map[string]string{} // key → database name ("" after a failure)
)

// Prepared returns the name of a database that prepare (given its DSN) set
// up once for this test binary under key, to copy with NewDatabaseFrom; Main
// drops it. A failed prepare fails every test that asks for it.
func Prepared(t testing.TB, key string, prepare func(dsn string) error) string {
	t.Helper()
	base := AdminDSN(t)
	pmu.Lock()
	defer pmu.Unlock()
	if name, ok := prepared[key]; ok {
		if name == "" {
			t.Fatalf("preparing the %s database failed earlier", key)
		}
		return name
	}
	name := randomName("warden_tmpl_")
	prepared[key] = ""
	if err := adminExec(base, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create the %s database: %v", key, err)
	}
	if err := prepare(WithDatabase(t, base, name)); err != nil {
		_ = dropDatabase(base, name)
		t.Fatalf("prepare the %s database: %v", key, err)
	}
	prepared[key] = name
	return name
}

// Exec runs sql on the server's own database, as the DSN's role.
func Exec(t testing.TB, sql string) {
	t.Helper()
	if err := adminExec(AdminDSN(t), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func randomName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func adminExec(dsn, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("connect to the test server: %w", err)
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, sql)
	return err
}

func dropDatabase(dsn, name string) error {
	return adminExec(dsn, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
}

// WithDatabase returns dsn naming database name instead.
func WithDatabase(t testing.TB, dsn, name string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("%s must be a postgres:// URL", EnvDSN)
	}
	u.Path = "/" + name
	return u.String()
}

// WithRole returns dsn with its sessions acting as role (SET ROLE at
// connection start): privileges are role's, whoever logs in.
func WithRole(t testing.TB, dsn, role string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("options", "-c role="+role)
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20") // pgx reads + as itself
	return u.String()
}

// Cluster is a PostgreSQL server of one test's own, which the test may stop
// and start again (a database outage). Its data stays until the test ends.
type Cluster struct {
	// DSN names the cluster's postgres database as its superuser.
	DSN string
	dir string
}

// NewCluster starts a cluster for t alone with scripts/postgres.sh, stopped
// and removed when t ends; t is skipped, saying why, when none can start
// here (a server given by WARDEN_TEST_POSTGRES_DSN cannot be stopped by a
// test, so this always needs a local PostgreSQL).
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	sp := script()
	dir, err := os.MkdirTemp("/tmp", "warden-pg.")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(sp, "start", dir).Output()
	if err != nil {
		os.RemoveAll(dir)
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg = strings.TrimSpace(string(ee.Stderr))
		}
		t.Skipf("this test stops and starts a PostgreSQL server of its own, and none could start here (%s); run `scripts/postgres.sh install` (Debian's postgresql)", msg)
	}
	c := &Cluster{DSN: strings.TrimSpace(string(out)), dir: dir}
	t.Cleanup(func() { _ = exec.Command(sp, "stop", dir).Run() })
	return c
}

// Halt stops the server, keeping its data.
func (c *Cluster) Halt(t testing.TB) {
	t.Helper()
	if out, err := exec.Command(script(), "halt", c.dir).CombinedOutput(); err != nil {
		t.Fatalf("stop the test's PostgreSQL server: %v\n%s", err, out)
	}
}

// Resume starts the halted server again.
func (c *Cluster) Resume(t testing.TB) {
	t.Helper()
	if out, err := exec.Command(script(), "resume", c.dir).CombinedOutput(); err != nil {
		t.Fatalf("start the test's PostgreSQL server again: %v\n%s", err, out)
	}
}

// Database creates an empty database name in the cluster and returns its
// DSN.
func (c *Cluster) Database(t testing.TB, name string) string {
	t.Helper()
	if err := adminExec(c.DSN, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	return WithDatabase(t, c.DSN, name)
}
