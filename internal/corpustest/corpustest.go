// Package corpustest loads the shared test corpora (../shared/corpus beside
// the repository) for tests: one JSON value per line, each decoded into the
// type the test reads.
package corpustest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Path is the file name of the shared corpus, found from this source file's
// place in the repository, so it works from any package's test.
func Path(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "corpus", name)
}

// Load decodes every non-blank line of the corpus name into a T. A missing
// corpus or a line that does not decode fails the test: the corpora are
// beside the repository on every machine the tests run on.
func Load[T any](t testing.TB, name string) []T {
	t.Helper()
	data, err := os.ReadFile(Path(name))
	if err != nil {
		t.Fatalf("the shared corpus must be beside the repository: %v", err)
	}
	var out []T
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s:%d: %v", name, line, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}
