package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/ncruces/go-sqlite3"

	"github.com/agentwarden/warden/audit"
)

// BusyTimeout is how long a statement waits for another connection's lock
// (another warden process writing) before it fails with SQLITE_BUSY.
const BusyTimeout = 10 * time.Second

// conn is one SQLite connection and the statements prepared on it. It is not
// safe for concurrent use; Store guards each conn with a mutex.
type conn struct {
	c     *sqlite3.Conn
	stmts map[string]*sqlite3.Stmt
	ck    *audit.Checkpoint // the checkpoint the open transaction stored
}

// openConn opens a connection to path configured for warden: a busy timeout,
// synchronous=FULL (every commit fsyncs the WAL before it returns), statement
// journals in memory rather than in temporary files, no checkpoint when the
// connection closes (see checkpoint.go), and a commit's WAL frames written in
// one call (walvfs.go).
// With create, a missing database is created.
func openConn(ctx context.Context, path string, create bool) (*conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	flags := sqlite3.OPEN_READWRITE
	if create {
		flags |= sqlite3.OPEN_CREATE
	}
	// A URI only to name the VFS: connURI escapes the path, which SQLite
	// then takes literally.
	c, err := sqlite3.OpenFlags(connURI(path), flags|sqlite3.OPEN_URI)
	if err != nil {
		return nil, err
	}
	if err := configure(c); err != nil {
		c.Close()
		return nil, err
	}
	return &conn{c: c, stmts: make(map[string]*sqlite3.Stmt)}, nil
}

func configure(c *sqlite3.Conn) error {
	if err := c.BusyTimeout(BusyTimeout); err != nil {
		return fmt.Errorf("set busy timeout: %w", err)
	}
	if _, err := c.Config(sqlite3.DBCONFIG_NO_CKPT_ON_CLOSE, true); err != nil {
		return fmt.Errorf("disable checkpoint on close: %w", err)
	}
	if err := c.Exec(`PRAGMA synchronous = FULL; PRAGMA temp_store = MEMORY`); err != nil {
		return fmt.Errorf("set synchronous=FULL and temp_store=MEMORY: %w", err)
	}
	return nil
}

// prepare returns the cached statement for sql, preparing it on first use. The
// caller must Reset it when done so it holds no lock.
func (c *conn) prepare(sql string) (*sqlite3.Stmt, error) {
	if st, ok := c.stmts[sql]; ok {
		return st, nil
	}
	st, tail, err := c.c.Prepare(sql)
	if err != nil {
		return nil, err
	}
	if st == nil || tail != "" {
		st.Close()
		return nil, fmt.Errorf("prepare %q: want exactly one statement", sql)
	}
	c.stmts[sql] = st
	return st, nil
}

// withContext makes ctx interrupt the statements run on c until the returned
// func restores the previous context.
func (c *conn) withContext(ctx context.Context) (restore func()) {
	old := c.c.SetInterrupt(ctx)
	return func() { c.c.SetInterrupt(old) }
}

// rollback ends a failed transaction, if one is open. It runs even when the
// interrupt context is done (Exec would refuse), so no lock is left held.
func (c *conn) rollback() {
	if c.c.GetAutocommit() {
		return
	}
	restore := c.withContext(context.Background())
	_ = c.c.Exec(`ROLLBACK`)
	restore()
}

// close finalises the cached statements and closes the connection.
func (c *conn) close() error {
	for _, st := range c.stmts {
		st.Close()
	}
	c.stmts = nil
	return c.c.Close()
}

// bind binds args (int64, int, string, bool, []byte as TEXT, nil as NULL) to st,
// starting at parameter 1.
func bind(st *sqlite3.Stmt, args []any) error {
	for i, a := range args {
		var err error
		switch v := a.(type) {
		case nil:
			err = st.BindNull(i + 1)
		case int64:
			err = st.BindInt64(i+1, v)
		case int:
			err = st.BindInt64(i+1, int64(v))
		case string:
			err = st.BindText(i+1, v)
		case bool:
			err = st.BindBool(i+1, v)
		case []byte:
			if v == nil {
				err = st.BindNull(i + 1)
			} else {
				err = st.BindRawText(i+1, v)
			}
		default:
			err = fmt.Errorf("bind parameter %d: unsupported type %T", i+1, a)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
