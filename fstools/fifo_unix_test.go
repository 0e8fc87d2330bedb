//go:build unix

package fstools

import (
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
)

// TestFIFO checks that the tools fail at once on a named pipe instead of
// waiting for a writer, and that Search skips one.
func TestFIFO(t *testing.T) {
	root := t.TempDir()
	r := openRoot(t, root, Limits{})
	if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	writeFile(t, filepath.Join(root, "z.txt"), "found\n")
	if _, err := r.Read("pipe"); !errorMatches(err, `"pipe" is a named pipe; cannot read it`) {
		t.Errorf("Read(pipe) = %v", err)
	}
	for name, err := range map[string]error{
		"Write":  r.Write("pipe", []byte("x"), 0o644),
		"Append": r.Append("pipe", []byte("x")),
	} {
		if !errorMatches(err, `"pipe" is a named pipe`) {
			t.Errorf("%s(pipe) = %v", name, err)
		}
	}
	if e, err := r.Stat("pipe"); err != nil || e.Type != "other" {
		t.Errorf("Stat(pipe) = %+v, %v; want type other", e, err)
	}
	matches, _, err := r.Search(".", regexp.MustCompile("found"), nil)
	if err != nil || len(matches) != 1 || matches[0].Path != "z.txt" {
		t.Errorf("Search = %+v, %v; want the one match in z.txt", matches, err)
	}
}
