package sqlite

import (
	"testing"

	"github.com/ncruces/go-sqlite3"
)

// rawConn opens a plain connection to path, as a person with the sqlite3 shell
// would, closed when t ends.
func rawConn(t *testing.T, path string) *sqlite3.Conn {
	t.Helper()
	c, err := sqlite3.OpenFlags(path, sqlite3.OPEN_READWRITE)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.BusyTimeout(BusyTimeout); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// queryRows runs sql on c with the named parameters and returns every row with
// each column rendered as text (NULL as "NULL").
func queryRows(t *testing.T, c *sqlite3.Conn, sql string, params map[string]string) [][]string {
	t.Helper()
	var rows [][]string
	for sql != "" {
		st, tail, err := c.Prepare(sql)
		if err != nil {
			t.Fatalf("prepare %q: %v", sql, err)
		}
		sql = tail
		if st == nil {
			continue
		}
		for i := 1; i <= st.BindCount(); i++ {
			name := st.BindName(i)
			v, ok := params[name]
			if !ok {
				t.Fatalf("query uses parameter %s, which the test does not set", name)
			}
			st.BindText(i, v)
		}
		for st.Step() {
			row := make([]string, st.ColumnCount())
			for i := range row {
				if st.ColumnType(i) == sqlite3.NULL {
					row[i] = "NULL"
				} else {
					row[i] = st.ColumnText(i)
				}
			}
			rows = append(rows, row)
		}
		if err := st.Err(); err != nil {
			t.Fatalf("run %q: %v", st.SQL(), err)
		}
		st.Close()
	}
	return rows
}
