package audittest

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// DocQuery is one fenced sql block of a markdown document (such as
// docs/audit-queries.md) and the heading it sits under.
type DocQuery struct {
	Heading, SQL string
}

// DocQueries returns every ```sql block of the markdown file at path, in
// order, failing t when the file cannot be read or a block is left open.
func DocQueries(t testing.TB, path string) []DocQuery {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		out     []DocQuery
		heading string
		block   []string
		inSQL   bool
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case inSQL && strings.TrimSpace(line) == "```":
			out = append(out, DocQuery{heading, strings.Join(block, "\n")})
			inSQL, block = false, nil
		case inSQL:
			block = append(block, line)
		case strings.TrimSpace(line) == "```sql":
			inSQL = true
		case strings.HasPrefix(line, "#"):
			heading = strings.TrimSpace(strings.TrimLeft(line, "#"))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if inSQL {
		t.Fatalf("%s: unterminated sql block under %q", path, heading)
	}
	return out
}
