package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentwarden/warden/internal/pgtest"
	"github.com/agentwarden/warden/postgres"
)

// TestMain stops the throwaway PostgreSQL cluster this binary started, if
// any, and removes the warden binary.
func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binDir    string
	wardenBin string
	buildErr  error
)

// wardenBinary returns the warden binary, built once per test binary.
func wardenBinary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("the fleet tests build warden and run daemons; skipped with -short")
	}
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "warden-fleet-bin-")
		if buildErr != nil {
			return
		}
		gomod, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			buildErr = fmt.Errorf("go env GOMOD: %v", err)
			return
		}
		wardenBin = filepath.Join(binDir, "warden")
		build := exec.Command("go", "build", "-o", wardenBin, "./cmd/warden")
		build.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/warden: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return wardenBin
}

// result is what one warden command did.
type result struct {
	stdout, stderr string
	code           int
}

// run runs warden with args and env (KEY=VALUE) added to this process's.
func run(t testing.TB, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, wardenBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("warden %v: %v", args, err)
	}
	return r
}

// must runs warden and fails the test unless it exits 0.
func must(t testing.TB, env []string, args ...string) result {
	t.Helper()
	r := run(t, env, args...)
	if r.code != 0 {
		t.Fatalf("warden %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// newHome makes a warden home with settings applied (config set KEY VALUE).
func newHome(t testing.TB, settings ...[2]string) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	must(t, nil, "--home", home, "init")
	for _, kv := range settings {
		must(t, nil, "--home", home, "config", "set", kv[0], kv[1])
	}
	return home
}

// migrated returns the owner DSN of a fresh database that `warden migrate`
// brought to the current schema.
func migrated(t testing.TB) string {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	r := must(t, nil, "--store", dsn, "migrate")
	if !strings.Contains(r.stdout, fmt.Sprintf("from schema version 0 to %d", postgres.SchemaVersion())) {
		t.Fatalf("warden migrate said %q", r.stdout)
	}
	return dsn
}

// count returns the result of a one-number query on dsn.
func count(t testing.TB, dsn, sql string) int64 {
	t.Helper()
	c, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var n int64
	if err := c.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// decision reads a printed decision.
func decision(t testing.TB, out string) map[string]any {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("not a decision: %q", out)
	}
	return d
}
