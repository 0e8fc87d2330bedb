package fstools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const patchOriginal = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n"

// Diffs against patchOriginal in hello/x.txt.
const (
	gitDiff = `diff --git a/hello/x.txt b/hello/x.txt
index 1111111..2222222 100644
--- a/hello/x.txt
+++ b/hello/x.txt
@@ -1,4 +1,4 @@
 one
-two
+TWO
 three
 four
@@ -8,3 +8,4 @@
 eight
 nine
 ten
+eleven
`
	plainDiff = `--- a/hello/x.txt	2026-01-01 00:00:00.000000000 +0000
+++ b/hello/x.txt	2026-01-02 00:00:00.000000000 +0000
@@ -2,3 +2,3 @@
 two
-three
+THREE
 four
`
)

func TestPatch(t *testing.T) {
	cases := []struct {
		name    string
		target  string
		diff    string
		want    string // the file afterwards, when wantErr is ""
		wantErr string
		result  PatchResult
	}{
		{
			name: "git diff", target: "hello/x.txt", diff: gitDiff,
			want:   strings.Replace(patchOriginal, "two", "TWO", 1) + "eleven\n",
			result: PatchResult{Hunks: 2, Added: 2, Deleted: 1, Size: int64(len(patchOriginal)) + 7},
		},
		{
			name: "plain unified diff", target: "hello/x.txt", diff: plainDiff,
			want:   strings.Replace(patchOriginal, "three", "THREE", 1),
			result: PatchResult{Hunks: 1, Added: 1, Deleted: 1, Size: int64(len(patchOriginal))},
		},
		{
			name: "plain diff without prefixes", target: "hello/x.txt",
			diff: strings.NewReplacer("a/hello", "hello", "b/hello", "hello").Replace(plainDiff),
			want: strings.Replace(patchOriginal, "three", "THREE", 1), result: PatchResult{Hunks: 1, Added: 1, Deleted: 1, Size: int64(len(patchOriginal))},
		},
		{
			name: "absolute target name", target: "ROOT/hello/x.txt", diff: gitDiff,
			want:   strings.Replace(patchOriginal, "two", "TWO", 1) + "eleven\n",
			result: PatchResult{Hunks: 2, Added: 2, Deleted: 1, Size: int64(len(patchOriginal)) + 7},
		},
		{
			name: "diff for another file", target: "hello/y.txt",
			diff:    gitDiff,
			wantErr: `the diff is for "hello/x.txt", not "hello/y.txt"`,
		},
		{
			name: "git diff for a file in a directory named a", target: "x.txt",
			diff:    strings.ReplaceAll(gitDiff, "/hello/", "/a/"),
			wantErr: `the diff is for "a/x.txt", not "x.txt"`,
		},
		{
			name: "hunk that does not apply", target: "hello/x.txt",
			diff:    strings.Replace(gitDiff, "-two\n", "-deux\n", 1),
			wantErr: `hunk 1 of 2 (@@ -1,4 +1,4 @@) does not apply to "hello/x.txt" at line 2: conflict: fragment line does not match src line; the file is unchanged`,
		},
		{
			name: "second hunk does not apply", target: "hello/x.txt",
			diff:    strings.Replace(gitDiff, " nine\n", " neuf\n", 1),
			wantErr: `hunk 2 of 2 (@@ -8,3 +8,4 @@) does not apply to "hello/x.txt" at line 9`,
		},
		{
			name: "two files", target: "hello/x.txt",
			diff:    gitDiff + strings.ReplaceAll(gitDiff, "x.txt", "y.txt"),
			wantErr: `the diff changes 2 files (hello/x.txt, hello/y.txt); Patch changes one file`,
		},
		{
			name: "new file", target: "hello/new.txt",
			diff:    "diff --git a/hello/new.txt b/hello/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/hello/new.txt\n@@ -0,0 +1 @@\n+hi\n",
			wantErr: `the diff creates "hello/new.txt"; Patch changes an existing file`,
		},
		{
			name: "rename", target: "hello/x.txt",
			diff:    "diff --git a/hello/x.txt b/hello/z.txt\nsimilarity index 100%\nrename from hello/x.txt\nrename to hello/z.txt\n",
			wantErr: `the diff renames or copies "hello/x.txt" to "hello/z.txt"`,
		},
		{
			name: "mode change", target: "hello/x.txt",
			diff:    "diff --git a/hello/x.txt b/hello/x.txt\nold mode 100644\nnew mode 100755\n",
			wantErr: `the diff changes the mode of "hello/x.txt"`,
		},
		{
			name: "not a diff", target: "hello/x.txt",
			diff:    "just some text\n",
			wantErr: `the diff for "hello/x.txt" has no file header`,
		},
		{
			name: "missing file", target: "hello/gone.txt",
			diff:    strings.ReplaceAll(gitDiff, "x.txt", "gone.txt"),
			wantErr: `"hello/gone.txt" does not exist in the root`,
		},
		{
			name: "plain diff naming a path outside", target: "hello/x.txt",
			diff:    strings.ReplaceAll(plainDiff, "+++ b/hello/x.txt", "+++ b/../../hello/x.txt"),
			wantErr: `the diff is for "b/../../hello/x.txt", not "hello/x.txt"`,
		},
		{
			// For a plain diff gitdiff keeps one name: the +++ name, unless
			// the --- name is a prefix of it. The other name plays no part,
			// as the target is the file given to Patch.
			name: "plain diff with another --- name", target: "hello/x.txt",
			diff: strings.ReplaceAll(plainDiff, "--- a/hello/x.txt", "--- a/../elsewhere"),
			want: strings.Replace(patchOriginal, "three", "THREE", 1), result: PatchResult{Hunks: 1, Added: 1, Deleted: 1, Size: int64(len(patchOriginal))},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			r := openRoot(t, root, Limits{})
			p := filepath.Join(root, "hello", "x.txt")
			writeFile(t, p, patchOriginal)
			if err := os.Chmod(p, 0o640); err != nil {
				t.Fatal(err)
			}
			target := strings.ReplaceAll(c.target, "ROOT", root)

			res, err := r.Patch(target, []byte(c.diff))
			got := readFile(t, p)
			if c.wantErr != "" {
				if !errorMatches(err, c.wantErr) {
					t.Errorf("Patch(%q) error = %v, want %q", target, err, c.wantErr)
				}
				if got != patchOriginal {
					t.Errorf("after a failed Patch the file holds %q, want it unchanged", got)
				}
			} else {
				if err != nil {
					t.Fatalf("Patch(%q) error = %v", target, err)
				}
				if got != c.want {
					t.Errorf("Patch(%q) made the file %q, want %q", target, got, c.want)
				}
				if res != c.result {
					t.Errorf("Patch(%q) = %+v, want %+v", target, res, c.result)
				}
				if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o640 {
					t.Errorf("after Patch the mode is %v, %v; want 0640 kept", fi.Mode(), err)
				}
			}
			assertOnly(t, r, "hello", "x.txt")
		})
	}
}

func TestPatchLimits(t *testing.T) {
	root := t.TempDir()
	r := openRoot(t, root, Limits{MaxWrite: int64(len(patchOriginal)) + 3})
	writeFile(t, filepath.Join(root, "hello", "x.txt"), patchOriginal)
	_, err := r.Patch("hello/x.txt", []byte(gitDiff))
	if !errorMatches(err, `patching "hello/x.txt" would make it 56 bytes, more than the write limit of 52 bytes; nothing was changed`) {
		t.Errorf("Patch over the write limit: %v", err)
	}
	if got := readFile(t, filepath.Join(root, "hello", "x.txt")); got != patchOriginal {
		t.Errorf("after a failed Patch the file holds %q", got)
	}

	writeFile(t, filepath.Join(root, "bin"), "a\x00b\n")
	diff := "--- a/bin\n+++ b/bin\n@@ -1 +1 @@\n-a\x00b\n+c\n"
	if _, err := r.Patch("bin", []byte(diff)); !errorMatches(err, `"bin" looks like a binary file`) {
		t.Errorf("Patch of a binary file: %v", err)
	}
}
