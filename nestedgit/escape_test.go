package nestedgit

import (
	"bytes"
	"crypto/sha1"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSweepCutsAnIndexThatLeadsOutOfItsWorkTree: an index entry whose path
// git never writes (../../.ssh/id_rsa), put there by rewriting the index
// itself, makes the user's git diff on the host read and print the file it
// names; the sweep moves such an index to the quarantine.
func TestSweepCutsAnIndexThatLeadsOutOfItsWorkTree(t *testing.T) {
	needGit(t)
	home, project := newProject(t)
	q := filepath.Join(home, ".warden", "quarantine")
	secret := filepath.Join(home, ".ssh", "id_rsa")
	if err := os.MkdirAll(filepath.Dir(secret), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("INDEX-ESCAPE-SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(project, secret)
	if err != nil || !strings.HasPrefix(rel, "..") {
		t.Fatalf("the secret's path from the project: %q, %v", rel, err)
	}
	g := NewWithNested(project, nil, q)
	placeholder := strings.Repeat("a", len(rel))
	sh(t, home, project, `blob=$(echo old | git hash-object -w --stdin) && git update-index --add --cacheinfo 100644,$blob,`+placeholder)
	index := filepath.Join(project, ".git", "index")
	data, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data[:len(data)-sha1.Size], []byte(placeholder+"\x00"), []byte(rel+"\x00"), 1)
	sum := sha1.Sum(data)
	if err := os.WriteFile(index, append(data, sum[:]...), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _ := hostGit(home, project, "diff"); !strings.Contains(out, "INDEX-ESCAPE-SECRET") {
		t.Fatalf("the attack is inert: git diff did not print the file the entry names:\n%s", out)
	}

	found := g.Sweep(time.Now())
	if len(found) != 1 || !found[0].Cut || found[0].Escape != rel || found[0].Pointer != index || found[0].Err != nil {
		t.Fatalf("Sweep = %+v, want the index cut for its entry %q", found, rel)
	}
	if _, err := os.Stat(index); err == nil {
		t.Error("the index is still there")
	}
	if _, err := os.Stat(filepath.Join(found[0].Moved, "index")); err != nil {
		t.Errorf("the index is not in the quarantine: %v", err)
	}
	if out, _ := hostGit(home, project, "diff"); strings.Contains(out, "INDEX-ESCAPE-SECRET") {
		t.Errorf("after the sweep, git diff still prints the secret:\n%s", out)
	}
	if found := g.Sweep(time.Now()); len(found) != 0 {
		t.Errorf("a second sweep = %+v, want nothing", found)
	}
}

func TestEscapingPath(t *testing.T) {
	for name, want := range map[string]bool{
		"src/main.go": false, ".github/workflows/ci.yml": false, "a/.gitignore": false, "x..y": false,
		"../x": true, "a/../../x": true, "/home/u/.ssh/id_rsa": true, "a//b": true, "a/./b": true,
		"a/": true, "": true, "sub/.git/config": true, "sub/.GIT/hooks/x": true, ".git": true,
	} {
		if got := escapingPath([]byte(name)); got != want {
			t.Errorf("escapingPath(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestSweepKeepsASparseIndex: a sparse index folds each directory outside
// the sparse cone into one entry whose path ends in a slash, which git
// writes itself: the sweep leaves it, and the user's git status works.
func TestSweepKeepsASparseIndex(t *testing.T) {
	needGit(t)
	home, project := newProject(t)
	q := filepath.Join(home, ".warden", "quarantine")
	sh(t, home, project, `mkdir -p a b/c && echo 1 > a/x && echo 2 > b/c/y && git add -A && git commit -qm dirs && git sparse-checkout set --cone --sparse-index a`)
	data, err := os.ReadFile(filepath.Join(project, ".git", "index"))
	if err != nil || !bytes.Contains(data, []byte("b/\x00")) {
		t.Skipf("this git wrote no sparse index (%v)", err)
	}
	g := NewWithNested(project, nil, q)
	if found := g.Sweep(time.Now()); len(found) != 0 {
		t.Fatalf("Sweep of a sparse index = %+v, want nothing", found)
	}
	if _, err := os.Stat(filepath.Join(project, ".git", "index")); err != nil {
		t.Errorf("the sparse index is gone: %v", err)
	}
}

// TestSweepCutsASplitIndexWhoseSharedEntriesLeadOut: the entry leading out
// of the work tree may sit in the shared index a split index names; the
// split index, which makes git read it, goes.
func TestSweepCutsASplitIndexWhoseSharedEntriesLeadOut(t *testing.T) {
	needGit(t)
	home, project := newProject(t)
	q := filepath.Join(home, ".warden", "quarantine")
	rel := "../../.ssh/id_rsa"
	placeholder := strings.Repeat("a", len(rel))
	g := NewWithNested(project, nil, q)
	sh(t, home, project, `blob=$(echo old | git hash-object -w --stdin) && git update-index --add --cacheinfo 100644,$blob,`+placeholder+` && git update-index --split-index`)
	shared, _ := filepath.Glob(filepath.Join(project, ".git", "sharedindex.*"))
	if len(shared) != 1 {
		t.Fatalf("git made shared indexes %q, want one", shared)
	}
	data, err := os.ReadFile(shared[0])
	if err != nil || !bytes.Contains(data, []byte(placeholder+"\x00")) {
		t.Fatalf("the shared index does not hold the entry (%v)", err)
	}
	if err := os.WriteFile(shared[0], bytes.Replace(data, []byte(placeholder+"\x00"), []byte(rel+"\x00"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	found := g.Sweep(time.Now())
	index := filepath.Join(project, ".git", "index")
	if len(found) != 1 || !found[0].Cut || found[0].Escape != rel || found[0].Pointer != index {
		t.Fatalf("Sweep = %+v, want the split index cut for its shared entry %q", found, rel)
	}
	if _, err := os.Stat(index); err == nil {
		t.Error("the split index is still there")
	}
}

// TestCoreWorktreeOfTheProjectIsTakenBack: a core.worktree a command sets
// in the project's own config is taken back even while it leads inside
// the project: a later command can swap a directory on the way for a
// symlink to the home, and nothing judges the project's config again.
func TestCoreWorktreeOfTheProjectIsTakenBack(t *testing.T) {
	needGit(t)
	home, project := newProject(t)
	sh(t, home, project, `mkdir wt`)
	gitDir := filepath.Join(project, ".git")
	before, _ := os.ReadFile(filepath.Join(gitDir, "config"))
	after := append(slices.Clone(before), []byte("[core]\n\tworktree = ../wt\n")...)
	bad, err := NewKeysThatRun(before, after, gitDir, project)
	if err != nil || !slices.Contains(bad, "core.worktree") {
		t.Errorf("NewKeysThatRun = %q, %v; want core.worktree taken back", bad, err)
	}
}

// TestSweepJudgesAMovedCoreWorktreeAgain: a nested repository's
// core.worktree that led inside the project is judged again when a
// directory on the way becomes a symlink out of it (its config unchanged).
func TestSweepJudgesAMovedCoreWorktreeAgain(t *testing.T) {
	needGit(t)
	home, project := newProject(t)
	q := filepath.Join(home, ".warden", "quarantine")
	g := NewWithNested(project, nil, q)
	sh(t, home, project, `mkdir -p wt && git init -q sub && git -C sub commit -q --allow-empty -m x && git add sub 2>/dev/null; git -C sub config core.worktree "$PWD/wt"`)
	g.Sweep(time.Now())
	if out := gitIn(t, home, filepath.Join(project, "sub"), "config", "core.worktree"); !strings.Contains(out, "wt") {
		t.Fatalf("a core.worktree inside the project was taken out: %q", out)
	}
	sh(t, home, project, `rmdir wt && ln -s "$HOME" wt`)
	found := g.Sweep(time.Now())
	if len(found) != 1 || !slices.Contains(found[0].Keys, "core.worktree") {
		t.Fatalf("Sweep after wt became a symlink to the home = %+v, want core.worktree taken out", found)
	}
	if out, _ := hostGit(home, filepath.Join(project, "sub"), "config", "core.worktree"); strings.TrimSpace(out) != "" {
		t.Errorf("core.worktree is still %q", out)
	}
}

// TestBranchSentToTheCommandsRemoteIsTakenBack: a branch whose remote is
// one the command added, or a URL itself, sends the user's next plain git
// push there, as a moved remote URL does (red-team-18); a remote added on
// its own, a branch on an existing remote and a local tracking branch (.)
// stay.
func TestBranchSentToTheCommandsRemoteIsTakenBack(t *testing.T) {
	before := []byte("[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://example.com/x.git\n")
	for _, c := range []struct {
		add  string
		want bool
	}{
		{"[remote \"x\"]\n\turl = http://127.0.0.1:9/x\n[branch \"main\"]\n\tremote = x\n", true},
		{"[branch \"main\"]\n\tremote = http://127.0.0.1:9/x\n", true},
		{"[remote \"x\"]\n\turl = http://127.0.0.1:9/x\n", false},
		{"[branch \"feature\"]\n\tremote = origin\n\tmerge = refs/heads/feature\n", false},
		{"[branch \"feature\"]\n\tremote = .\n\tmerge = refs/heads/main\n", false},
	} {
		after := append(slices.Clone(before), c.add...)
		bad, err := NewKeysThatRun(before, after, "/p/.git", "/p")
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.ContainsFunc(bad, func(k string) bool { return strings.HasPrefix(k, "branch.") }); got != c.want {
			t.Errorf("after adding\n%s NewKeysThatRun = %q; want a branch taken back: %v", c.add, bad, c.want)
		}
	}
}
