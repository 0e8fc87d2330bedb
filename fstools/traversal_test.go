package fstools

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
)

// traversalTree builds the tree every traversal case runs in, and returns the
// root directory and the outside directory. Below the root:
//
//	in.txt                 "inside-content\n"
//	sub/file.txt           "sub-content\n"
//	sub/link3           -> file.txt                      (relative, inside)
//	sub/linkout2        -> ../<outside>/secret.txt       (relative, leaves)
//	empty/
//	link-out-file       -> <outside>/secret.txt          (absolute, outside)
//	link-out-dir        -> <outside>                     (absolute, outside)
//	rel-out-dir         -> ../<outside>                  (relative, leaves)
//	abs-in              -> <root>/in.txt                 (absolute, inside)
//	proclink            -> /proc/self/root<outside>      (absolute)
//	chain1 -> chain2 -> sub/link3 -> file.txt            (relative chain, inside)
//	chainout1 -> sub/linkout2                            (relative chain, leaves)
//	loop1 -> loop2 -> loop1
//	linkdir             -> sub                           (relative, inside)
//
// Outside the root, secret.txt holds outsideSecret and hard.txt
// "OUTSIDE-HARDLINKED\n".
func traversalTree(t *testing.T) (root, outside string) {
	t.Helper()
	root, outside = newDirs(t)
	writeFile(t, filepath.Join(outside, "hard.txt"), "OUTSIDE-HARDLINKED\n")
	relOut, err := filepath.Rel(root, outside)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "in.txt"), "inside-content\n")
	writeFile(t, filepath.Join(root, "sub", "file.txt"), "sub-content\n")
	if err := os.Mkdir(filepath.Join(root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range []struct{ target, link string }{
		{"file.txt", "sub/link3"},
		{filepath.Join("..", relOut, "secret.txt"), "sub/linkout2"},
		{filepath.Join(outside, "secret.txt"), "link-out-file"},
		{outside, "link-out-dir"},
		{relOut, "rel-out-dir"},
		{filepath.Join(root, "in.txt"), "abs-in"},
		{"/proc/self/root" + outside, "proclink"},
		{"chain2", "chain1"},
		{"sub/link3", "chain2"},
		{"sub/linkout2", "chainout1"},
		{"loop2", "loop1"},
		{"loop1", "loop2"},
		{"sub", "linkdir"},
	} {
		symlink(t, l.target, filepath.Join(root, l.link))
	}
	return root, outside
}

// A traversal tool runs one tool on a path and returns a short description of
// what it returned.
type traversalTool struct {
	name string
	run  func(r *Root, p string) (string, error)
}

var searchPattern = regexp.MustCompile(`SECRET|content|OUTSIDE`)

var traversalTools = []traversalTool{
	{"Read", func(r *Root, p string) (string, error) {
		b, err := r.Read(p)
		return string(b), err
	}},
	{"Stat", func(r *Root, p string) (string, error) {
		e, err := r.Stat(p)
		return e.Type, err
	}},
	{"List", func(r *Root, p string) (string, error) {
		entries, err := r.List(p)
		return names(entries), err
	}},
	{"Search", func(r *Root, p string) (string, error) {
		matches, _, err := r.Search(p, searchPattern, nil)
		s := make([]string, len(matches))
		for i, m := range matches {
			s[i] = fmt.Sprintf("%s:%d:%s", m.Path, m.Line, m.Text)
		}
		return strings.Join(s, ";"), err
	}},
	{"Patch", func(r *Root, p string) (string, error) {
		// A diff that would turn the outside secret into "pwned".
		old, new := "a/"+p, "b/"+p
		if filepath.IsAbs(p) {
			old, new = p, p
		}
		diff := "--- " + old + "\n+++ " + new + "\n@@ -1 +1 @@\n-" + outsideSecret + "\n+pwned\n"
		_, err := r.Patch(p, []byte(diff))
		return "ok", err
	}},
	{"Append", func(r *Root, p string) (string, error) { return "ok", r.Append(p, []byte("appended\n")) }},
	{"Write", func(r *Root, p string) (string, error) { return "ok", r.Write(p, []byte("written\n"), 0o644) }},
	{"Mkdir", func(r *Root, p string) (string, error) { return "ok", r.Mkdir(p) }},
	{"Delete", func(r *Root, p string) (string, error) { return "ok", r.Delete(p) }},
}

// want maps a tool name to its expected outcome: "=" and what it returns, or
// "!" and a part of its error message. The key "*" is for every other tool.
type want map[string]string

// refusedBy is the outcome of every tool refusing with an error containing msg.
func refusedBy(msg string) want { return want{"*": "!" + msg} }

const (
	leaves     = "leaves the root"
	outsideAbs = "is outside the root"
	leadsOut   = "leads outside the root"
	loop       = "too many symlinks"
	symlinkErr = "is a symlink"
	dirName    = "names a directory"
	notDir     = "not a directory"
	inTheWay   = "is in the way"
	noHunk     = "does not apply"
)

// asFile is the outcome for a path naming a regular file inside the root with
// content, found by Search under the name found.
func asFile(content, found string) want {
	return want{
		"Read":   "=" + content,
		"Stat":   "=file",
		"List":   "!" + notDir,
		"Search": "=" + found + ":1:" + strings.TrimSuffix(content, "\n"),
		"Patch":  "!" + noHunk,
		"Append": "=ok",
		"Write":  "=ok",
		"Mkdir":  "!" + inTheWay,
		"Delete": "=ok",
	}
}

// asSymlink is the outcome for a path naming a symlink inside the root that
// does not lead to a usable file: Read, List and Search fail with err, the
// write tools refuse the symlink, Stat and Delete see the link itself.
func asSymlink(err string) want {
	return want{
		"Read":   "!" + err,
		"Stat":   "=symlink",
		"List":   "!" + err,
		"Search": "!" + err,
		"Patch":  "!" + symlinkErr,
		"Append": "!" + symlinkErr,
		"Write":  "!" + symlinkErr,
		"Mkdir":  "!" + err,
		"Delete": "=ok",
	}
}

// rootListing is what List returns for the root of traversalTree.
const rootListing = "=abs-in,chain1,chain2,chainout1,empty,in.txt,link-out-dir,link-out-file,linkdir,loop1,loop2,proclink,rel-out-dir,sub"

// rootSearch is what Search finds in the whole of traversalTree.
const rootSearch = "=in.txt:1:inside-content;sub/file.txt:1:sub-content"

// TestSymlinkChainLimit documents a limit of os.Root: it follows at most 8
// symlinks in one path (Linux allows 40), so a longer chain inside the root is
// refused like a loop.
func TestSymlinkChainLimit(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "target"), "end\n")
	prev := "target"
	for i := 1; i <= 9; i++ {
		link := fmt.Sprintf("l%d", i)
		symlink(t, prev, filepath.Join(root, link))
		prev = link
	}
	r := openRoot(t, root, Limits{})
	if b, err := r.Read("l8"); err != nil || string(b) != "end\n" {
		t.Errorf("Read through 8 symlinks = %q, %v; want %q", b, err, "end\n")
	}
	if _, err := r.Read("l9"); !errorMatches(err, loop) {
		t.Errorf("Read through 9 symlinks = %v, want an error containing %q", err, loop)
	}
}

// TestTraversal runs every tool on paths that try to leave the root, and on
// paths that look odd but stay inside. Each tool runs on a fresh tree. Besides
// the expected outcome, it checks that nothing a tool returns holds the outside
// secret and that nothing outside the root changed.
func TestTraversal(t *testing.T) {
	cases := []struct {
		name  string
		path  string // ROOT and OUTSIDE stand for the two directories
		setup func(t *testing.T, root, outside string)
		want  want
	}{
		{name: "parent", path: "../secret.txt", want: refusedBy(leaves)},
		{name: "parent chain", path: "sub/../../OUTSIDE-BASE/secret.txt", want: refusedBy(leaves)},
		{name: "deep parent chain", path: "../../../../../../../../../etc/passwd", want: refusedBy(leaves)},
		{name: "parent after a file", path: "in.txt/../../x", want: refusedBy(leaves)},
		{name: "absolute outside", path: "OUTSIDE/secret.txt", want: refusedBy(outsideAbs)},
		{name: "absolute system file", path: "/etc/passwd", want: refusedBy(outsideAbs)},
		{name: "absolute inside", path: "ROOT/in.txt", want: asFile("inside-content\n", "in.txt")},
		{name: "absolute inside with dot-dot", path: "ROOT/sub/../in.txt", want: asFile("inside-content\n", "in.txt")},
		{name: "absolute dot-dot out and back", path: "ROOT/../OUTSIDE-BASE/secret.txt", want: refusedBy(outsideAbs)},
		{name: "proc self root outside", path: "/proc/self/rootOUTSIDE/secret.txt", want: refusedBy(outsideAbs)},
		{name: "proc self root to inside", path: "/proc/self/rootROOT/in.txt", want: refusedBy(outsideAbs)},
		{name: "proc self cwd", path: "/proc/self/cwd/in.txt", want: refusedBy(outsideAbs)},
		{name: "symlink to outside file", path: "link-out-file", want: asSymlink(leadsOut)},
		{name: "symlink to outside dir", path: "link-out-dir", want: asSymlink(leadsOut)},
		{name: "file below symlink to outside dir", path: "link-out-dir/secret.txt", want: refusedBy(leadsOut)},
		{name: "file below relative symlink out", path: "rel-out-dir/secret.txt", want: refusedBy(leadsOut)},
		{name: "file below symlink to proc self root", path: "proclink/secret.txt", want: refusedBy(leadsOut)},
		{name: "absolute symlink inside", path: "abs-in", want: asSymlink(leadsOut)},
		{name: "relative chain inside", path: "chain1", want: want{
			"Read": "=sub-content\n", "Stat": "=symlink", "List": "!" + notDir, "Search": "=chain1:1:sub-content",
			"Patch": "!" + symlinkErr, "Append": "!" + symlinkErr, "Write": "!" + symlinkErr, "Mkdir": "!" + inTheWay, "Delete": "=ok",
		}},
		{name: "relative chain outside", path: "chainout1", want: asSymlink(leadsOut)},
		{name: "symlink loop", path: "loop1", want: asSymlink(loop)},
		{name: "below a symlink loop", path: "loop1/x", want: refusedBy(loop)},
		{name: "file below symlink to inside dir", path: "linkdir/file.txt", want: asFile("sub-content\n", "linkdir/file.txt")},
		{name: "dot-dot through a symlink is lexical", path: "linkdir/../in.txt", want: asFile("inside-content\n", "in.txt")},
		{
			// A hard link is the outside file itself: path confinement cannot
			// see it, and Read returns the outside content. The path policy
			// (package fsguard) asks before touching a file with more than one
			// link. Append refuses it (appending in place would change the
			// outside file); Write and Delete replace or remove only the name.
			name: "hard link to outside file", path: "hardlink",
			setup: func(t *testing.T, root, outside string) {
				if err := os.Link(filepath.Join(outside, "hard.txt"), filepath.Join(root, "hardlink")); err != nil {
					t.Fatalf("hard link across two temporary directories: %v", err)
				}
			},
			want: want{
				"Read": "=OUTSIDE-HARDLINKED\n", "Stat": "=file", "List": "!" + notDir, "Search": "=hardlink:1:OUTSIDE-HARDLINKED",
				"Patch": "!" + noHunk, "Append": "!hard links", "Write": "=ok", "Mkdir": "!" + inTheWay, "Delete": "=ok",
			},
		},
		{name: "root by absolute name", path: "ROOT", want: want{
			"Read": "!is a directory", "Stat": "=dir", "List": rootListing, "Search": rootSearch,
			"Patch": "!is the root", "Append": "!is the root", "Write": "!is the root", "Mkdir": "=ok", "Delete": "!cannot be deleted",
		}},
		{name: "dot", path: ".", want: want{
			"Read": "!" + dirName, "Stat": "=dir", "List": rootListing, "Search": rootSearch,
			"Patch": "!" + dirName, "Append": "!" + dirName, "Write": "!" + dirName, "Mkdir": "=ok", "Delete": "!cannot be deleted",
		}},
		{name: "dot slash file", path: "./in.txt", want: asFile("inside-content\n", "in.txt")},
		{name: "dot inside", path: "sub/./file.txt", want: asFile("sub-content\n", "sub/file.txt")},
		{name: "double slash", path: "sub//file.txt", want: asFile("sub-content\n", "sub/file.txt")},
		{name: "trailing slash on dir", path: "sub/", want: want{
			"Read": "!" + dirName, "Stat": "=dir", "List": "=file.txt,link3,linkout2", "Search": "=sub/file.txt:1:sub-content",
			"Patch": "!" + dirName, "Append": "!" + dirName, "Write": "!" + dirName, "Mkdir": "=ok", "Delete": "!not empty",
		}},
		{name: "trailing slash on empty dir", path: "empty/", want: want{
			"Read": "!" + dirName, "Stat": "=dir", "List": "=", "Search": "=",
			"Patch": "!" + dirName, "Append": "!" + dirName, "Write": "!" + dirName, "Mkdir": "=ok", "Delete": "=ok",
		}},
		{name: "trailing slash on file", path: "in.txt/", want: want{
			"Read": "!" + dirName, "Stat": "!" + notDir, "List": "!" + notDir, "Search": "!" + notDir,
			"Patch": "!" + dirName, "Append": "!" + dirName, "Write": "!" + dirName, "Mkdir": "!" + inTheWay, "Delete": "!" + notDir,
		}},
		{name: "trailing slash on symlink to inside dir", path: "linkdir/", want: want{
			"Read": "!" + dirName, "Stat": "=dir", "List": "=file.txt,link3,linkout2", "Search": "=linkdir/file.txt:1:sub-content",
			"Patch": "!" + dirName, "Append": "!" + dirName, "Write": "!" + dirName, "Mkdir": "=ok", "Delete": "!" + notDir,
		}},
		{name: "trailing slash on symlink to outside dir", path: "link-out-dir/", want: want{
			"Read": "!" + dirName, "Stat": "!" + leadsOut, "List": "!" + leadsOut, "Search": "!" + leadsOut,
			"Patch": "!" + dirName, "Append": "!" + dirName, "Write": "!" + dirName, "Mkdir": "!" + leadsOut, "Delete": "!" + notDir,
		}},
		{name: "missing file", path: "nope.txt", want: want{
			"Read": "!does not exist", "Stat": "!does not exist", "List": "!does not exist", "Search": "!does not exist",
			"Patch": "!does not exist", "Append": "=ok", "Write": "=ok", "Mkdir": "=ok", "Delete": "!does not exist",
		}},
		{name: "file below a file", path: "in.txt/x", want: want{
			"Read": "!" + notDir, "Stat": "!" + notDir, "List": "!" + notDir, "Search": "!" + notDir,
			"Patch": "!" + notDir, "Append": "!" + notDir, "Write": "!" + notDir, "Mkdir": "!" + inTheWay, "Delete": "!" + notDir,
		}},
		{name: "NUL byte", path: "in.txt\x00../../etc/passwd", want: refusedBy("NUL byte")},
		{name: "invalid UTF-8", path: "in\xff.txt", want: refusedBy("not valid UTF-8")},
		{name: "64 KB name", path: strings.Repeat("a/", 32<<10), want: refusedBy("bytes long")},
		{name: "empty name", path: "", want: refusedBy("empty file name")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, tool := range traversalTools {
				t.Run(tool.name, func(t *testing.T) {
					root, outside := traversalTree(t)
					if c.setup != nil {
						c.setup(t, root, outside)
					}
					p := strings.ReplaceAll(c.path, "OUTSIDE-BASE", filepath.Base(outside))
					p = strings.NewReplacer("ROOT", root, "OUTSIDE", outside).Replace(p)
					before := snapshot(t, outside)
					r := openRoot(t, root, Limits{})

					got, err := tool.run(r, p)
					want, ok := c.want[tool.name]
					if !ok {
						want = c.want["*"]
					}
					switch {
					case strings.HasPrefix(want, "!"):
						if err == nil {
							t.Errorf("%s(%q) = %q, want an error containing %q", tool.name, p, got, want[1:])
						} else if !errorMatches(err, want[1:]) {
							t.Errorf("%s(%q) error = %v, want one containing %q", tool.name, p, err, want[1:])
						} else if code := warden.ErrorCodeOf(err); code == warden.EInternal {
							t.Errorf("%s(%q) error %v has code %s, want a user error", tool.name, p, err, code)
						}
					case err != nil:
						t.Errorf("%s(%q) error = %v, want %q", tool.name, p, err, want[1:])
					case got != want[1:]:
						t.Errorf("%s(%q) = %q, want %q", tool.name, p, got, want[1:])
					}
					if strings.Contains(got, outsideSecret) || err != nil && strings.Contains(err.Error(), outsideSecret) {
						t.Errorf("%s(%q) returned the outside secret: %q, %v", tool.name, p, got, err)
					}
					after := snapshot(t, outside)
					for f, content := range before {
						if after[f] != content {
							t.Errorf("%s(%q) changed %s outside the root: %q, was %q", tool.name, p, f, after[f], content)
						}
					}
					if len(after) != len(before) {
						t.Errorf("%s(%q) changed the outside directory: %d files, was %d", tool.name, p, len(after), len(before))
					}
				})
			}
		})
	}
}
