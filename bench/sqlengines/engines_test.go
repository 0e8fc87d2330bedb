// Package sqlengines measures the SQLite engines a Go program can embed side
// by side on warden's audit write: rows of the audit table and the
// security_events table (their columns, indexes and append-only triggers)
// committed in WAL mode with synchronous=FULL, as warden's store commits
// them, in batches of 1 (a lone decision) and 16 (a group commit under load).
// It reports wall and CPU time per row. The tables are warden's at schema 6
// (sqlite/schema.go and stages.go). The engines, all through
// database/sql:
//
//   - ncruces: github.com/ncruces/go-sqlite3 (SQLite compiled to wasm, then
//     to Go; warden's engine, static binary)
//   - modernc: modernc.org/sqlite (SQLite transpiled from C to Go, static)
//   - mattn:   github.com/mattn/go-sqlite3 (the C library through cgo; the
//     binary needs cgo and links libc)
//
// This is its own module so that warden's go.mod holds none of them. ncruces
// and mattn both register the driver name "sqlite3", so mattn is measured
// in a second run, beside modernc again:
//
//	cd bench/sqlengines && go test -bench . -benchtime 2000x && CGO_ENABLED=1 go test -tags mattn -bench . -benchtime 2000x
package sqlengines

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

const schema = `
CREATE TABLE audit (
	seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, trace_id TEXT NOT NULL, created_at INTEGER NOT NULL,
	capability TEXT NOT NULL, action TEXT NOT NULL, resource TEXT NOT NULL, tool TEXT NOT NULL, tier INTEGER NOT NULL,
	args TEXT, context TEXT NOT NULL, requested_by TEXT NOT NULL, autonomous INTEGER NOT NULL CHECK (autonomous IN (0, 1)),
	session TEXT NOT NULL, host TEXT NOT NULL, raw TEXT,
	verdict TEXT NOT NULL CHECK (verdict IN ('deny', 'allow', 'sandbox', 'ask')), blocked INTEGER NOT NULL CHECK (blocked IN (0, 1)),
	block_reason TEXT NOT NULL, reason TEXT NOT NULL, rule TEXT NOT NULL, result TEXT,
	output TEXT NOT NULL CHECK (length(CAST(output AS BLOB)) <= 1024), error TEXT NOT NULL, duration INTEGER NOT NULL,
	prev_hash TEXT NOT NULL, hash TEXT NOT NULL, stages TEXT
) STRICT;
CREATE INDEX audit_created_at ON audit (created_at);
CREATE INDEX audit_trace_id ON audit (trace_id);
CREATE TABLE security_events (
	seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, trace_id TEXT NOT NULL, created_at INTEGER NOT NULL,
	type TEXT NOT NULL, severity TEXT NOT NULL CHECK (severity IN ('info', 'warn', 'error', 'critical')),
	summary TEXT NOT NULL, metadata TEXT, prev_hash TEXT NOT NULL, hash TEXT NOT NULL
) STRICT;
CREATE INDEX security_events_created_at ON security_events (created_at);
CREATE INDEX security_events_type ON security_events (type);
CREATE INDEX security_events_trace_id ON security_events (trace_id);
`

func appendOnly(table string) string {
	return fmt.Sprintf(`
CREATE TRIGGER %[1]s_no_update BEFORE UPDATE ON %[1]s BEGIN SELECT RAISE(ABORT, 'append-only'); END;
CREATE TRIGGER %[1]s_no_delete BEFORE DELETE ON %[1]s BEGIN SELECT RAISE(ABORT, 'append-only'); END;
CREATE TRIGGER %[1]s_no_replace BEFORE INSERT ON %[1]s WHEN EXISTS (SELECT 1 FROM %[1]s WHERE seq = NEW.seq OR id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'append-only'); END;
`, table)
}

const (
	insertAudit = `INSERT INTO audit VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	insertEvent = `INSERT INTO security_events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	stages      = `[{"stage":"kill-switch","verdict":"allow","reason":"the emergency stop is off","rule":"killswitch.off"},{"stage":"network","verdict":"allow","reason":"127.0.0.1:18080 is in network.allowed_domains","rule":"network.allowed"}]`
	meta        = `{"trace_id":"0193a2b4-1111-7abc-8def-0123456789ab","agent":"agent","session":"egress-1","method":"GET","host":"127.0.0.1","port":18080,"path_hash":"5f1e2d3c4b5a69788796a5b4","status":200,"bytes_up":0,"bytes_down":16,"verdict":"allow","rule":"network.allowed","ms":0}`
)

type engine struct {
	name, driver string
	dsn          func(path string) string
}

// engines are modernc and, by build tag, ncruces (the default) or mattn
// (-tags mattn): both register the driver name "sqlite3", so one binary
// cannot hold the two.
var engines = []engine{{"modernc", "sqlite", func(p string) string { return "file:" + p }}}

func open(b *testing.B, e engine) *sql.DB {
	db, err := sql.Open(e.driver, e.dsn(filepath.Join(b.TempDir(), "bench.db")))
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	b.Cleanup(func() { db.Close() })
	for _, q := range []string{`PRAGMA journal_mode = WAL`, `PRAGMA synchronous = FULL`, `PRAGMA temp_store = MEMORY`, schema, appendOnly("audit"), appendOnly("security_events")} {
		for _, stmt := range strings.Split(q, ";\n") {
			if strings.TrimSpace(stmt) == "" {
				continue
			}
			if _, err := db.Exec(stmt); err != nil {
				b.Fatalf("%s: %v\n%s", e.name, err, stmt)
			}
		}
	}
	return db
}

// BenchmarkAuditWrite commits batches of audit rows and events, each row
// (an audit row or an event: the egress proxy writes one of each a request)
// counted once.
func BenchmarkAuditWrite(b *testing.B) {
	for _, batch := range []int{1, 16} {
		for _, e := range engines {
			b.Run(fmt.Sprintf("batch=%d/%s", batch, e.name), func(b *testing.B) {
				db := open(b, e)
				seq := 0
				var r0, r1 syscall.Rusage
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
				start := time.Now()
				for b.Loop() {
					tx, err := db.Begin()
					if err != nil {
						b.Fatal(err)
					}
					for range batch / 2 {
						seq++
						id := fmt.Sprintf("0193a2b4-%04x-7abc-8def-%012x", seq&0xffff, seq)
						if _, err := tx.Exec(insertAudit, seq, id, id, int64(1764288000000+seq), "network", "fetch", "http://127.0.0.1:18080",
							"", 1, nil, "", "agent", 0, "egress-1", "", nil, "allow", 0, "", "127.0.0.1:18080 is in network.allowed_domains",
							"network.allowed", nil, "", "", 180000, "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
							"60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752", stages); err != nil {
							b.Fatal(err)
						}
						if _, err := tx.Exec(insertEvent, seq, id, id, int64(1764288000000+seq), "egress_request", "info",
							"GET 127.0.0.1:18080 allow, status 200, 0 bytes up, 16 down", meta,
							"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
							"60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"); err != nil {
							b.Fatal(err)
						}
					}
					if batch == 1 {
						// A lone decision: one audit row a commit.
						seq++
						id := fmt.Sprintf("0193a2b4-%04x-7abc-8def-%012x", seq&0xffff, seq)
						if _, err := tx.Exec(insertAudit, seq, id, id, int64(1764288000000+seq), "tool", "call", "get_price",
							"get_price", 1, nil, "", "agent", 0, "s1", "", nil, "allow", 0, "", "tier 1", "tools.tier1", nil, "", "", 90000,
							"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
							"60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752", stages); err != nil {
							b.Fatal(err)
						}
					}
					if err := tx.Commit(); err != nil {
						b.Fatal(err)
					}
				}
				elapsed := time.Since(start)
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
				cpu := time.Duration(r1.Utime.Nano() + r1.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano())
				rows := float64(b.N * batch)
				b.ReportMetric(float64(elapsed.Microseconds())/rows, "µs/row")
				b.ReportMetric(float64(cpu.Microseconds())/rows, "cpu-µs/row")
			})
		}
	}
}
