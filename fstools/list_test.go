package fstools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentwarden/warden"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "file"), "x")
	cases := []struct {
		name    string
		dir     string
		lim     Limits
		wantErr string
		code    warden.ErrorCode
	}{
		{name: "directory", dir: dir},
		{name: "relative", dir: "."},
		{name: "empty", dir: "", wantErr: "no root directory given", code: warden.EInvalid},
		{name: "missing", dir: filepath.Join(dir, "nope"), wantErr: "does not exist", code: warden.ENotFound},
		{name: "file", dir: filepath.Join(dir, "file"), wantErr: "cannot be opened as a directory", code: warden.EInvalid},
		{name: "negative limit", dir: dir, lim: Limits{MaxRead: -1}, wantErr: "must not be negative", code: warden.EInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Open(c.dir, c.lim)
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("Open(%q) = %v", c.dir, err)
				}
				defer r.Close()
				if !filepath.IsAbs(r.Dir()) {
					t.Errorf("Dir() = %q, want an absolute path", r.Dir())
				}
				want := Limits{DefaultMaxRead, DefaultMaxWrite, DefaultMaxEntries, DefaultMaxResults, DefaultMaxSearchFileBytes}
				if r.Limits() != want {
					t.Errorf("Limits() = %+v, want the defaults %+v", r.Limits(), want)
				}
				return
			}
			if !errorMatches(err, c.wantErr) || warden.ErrorCodeOf(err) != c.code {
				t.Errorf("Open(%q) error = %v (%s), want %q (%s)", c.dir, err, warden.ErrorCodeOf(err), c.wantErr, c.code)
			}
		})
	}
}

func TestListAndStat(t *testing.T) {
	root, outside := newDirs(t)
	r := openRoot(t, root, Limits{})
	writeFile(t, filepath.Join(root, "b.txt"), "12345")
	writeFile(t, filepath.Join(root, "a", "x"), "")
	symlink(t, outside, filepath.Join(root, "out"))

	entries, err := r.List(".")
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, e := range entries {
		got += fmt.Sprintf("%s %s %d %v;", e.Name, e.Type, e.Size, e.Mode.Type())
	}
	want := fmt.Sprintf("a dir %d d---------;b.txt file 5 ----------;out symlink %d L---------;", entries[0].Size, len(outside))
	if got != want {
		t.Errorf("List(.) = %s\nwant %s", got, want)
	}

	for _, c := range []struct{ name, typ string }{
		{"b.txt", "file"}, {"a", "dir"}, {"out", "symlink"}, {".", "dir"}, {"a/x", "file"},
	} {
		e, err := r.Stat(c.name)
		if err != nil || e.Type != c.typ {
			t.Errorf("Stat(%q) = %+v, %v; want type %s", c.name, e, err, c.typ)
		}
	}
	if e, _ := r.Stat("a/x"); e.Name != "x" {
		t.Errorf("Stat(a/x).Name = %q, want %q", e.Name, "x")
	}
	if _, err := r.Stat("nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat(nope) = %v, want fs.ErrNotExist", err)
	}
}

func TestListLimit(t *testing.T) {
	root := t.TempDir()
	for i := range 5 {
		writeFile(t, filepath.Join(root, fmt.Sprint(i)), "")
	}
	if entries, err := openRoot(t, root, Limits{MaxEntries: 5}).List("."); err != nil || len(entries) != 5 {
		t.Errorf("List at the limit = %d entries, %v; want 5", len(entries), err)
	}
	_, err := openRoot(t, root, Limits{MaxEntries: 4}).List(".")
	if want := `"." has more than 4 entries, the entry limit`; !errorMatches(err, want) {
		t.Errorf("List over the limit = %v, want %q", err, want)
	}
}

func TestDeleteAndMkdir(t *testing.T) {
	root, outside := newDirs(t)
	r := openRoot(t, root, Limits{})
	writeFile(t, filepath.Join(root, "full", "f"), "x")
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "link"))

	if err := r.Mkdir("a/b/c"); err != nil {
		t.Fatalf("Mkdir(a/b/c) = %v", err)
	}
	if err := r.Mkdir("a/b"); err != nil {
		t.Errorf("Mkdir of an existing directory = %v", err)
	}
	if err := r.Mkdir("full/f/g"); !errorMatches(err, "is in the way") {
		t.Errorf("Mkdir below a file = %v", err)
	}
	if err := r.Delete("a"); !errorMatches(err, `directory "a" is not empty`) || warden.ErrorCodeOf(err) != warden.EConflict {
		t.Errorf("Delete of a non-empty directory = %v", err)
	}
	for _, name := range []string{"a/b/c", "a/b", "a", "full/f", "link"} {
		if err := r.Delete(name); err != nil {
			t.Errorf("Delete(%q) = %v", name, err)
		}
	}
	if got := readFile(t, filepath.Join(outside, "secret.txt")); got != outsideSecret+"\n" {
		t.Errorf("deleting the symlink changed its target: %q", got)
	}
	if err := r.Delete("."); !errorMatches(err, "cannot be deleted") {
		t.Errorf("Delete(.) = %v", err)
	}
	if err := r.Delete(root); !errorMatches(err, "cannot be deleted") {
		t.Errorf("Delete(root) = %v", err)
	}
	if _, err := os.Stat(root); err != nil {
		t.Errorf("the root is gone: %v", err)
	}
	assertOnly(t, r, ".", "full")
}
