package undo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// newRepo makes a repository in a temporary directory with one commit of
// files, and returns its top directory.
func newRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	run(t, dir, "init", "-q", "-b", "main")
	for p, c := range files {
		write(t, dir, p, c)
	}
	run(t, dir, "add", "-A")
	run(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first")
	return dir
}

func run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(CleanEnv(os.Environ()), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t testing.TB, dir, p, content string) {
	t.Helper()
	full := filepath.Join(dir, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tree reads every file under dir but .git, path → content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func equalTrees(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for p, w := range want {
		if g, ok := got[p]; !ok {
			t.Errorf("%s: %s is missing", what, p)
		} else if g != w {
			t.Errorf("%s: %s = %q, want %q", what, p, g, w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %s is there, want it gone", what, p)
		}
	}
}

var at = time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)

// TestTakeAndRestore: a snapshot changes nothing; after the work is
// discarded, restoring brings back every file byte for byte (changed,
// deleted, untracked, in new directories, binary) and the staged index,
// leaves ignored files alone, removes what the discard's aftermath added,
// and saves what was there, which a second restore brings back.
func TestTakeAndRestore(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a.txt": "one\n", "b.txt": "two\n", "gone.txt": "bye\n", ".gitignore": "*.log\n"})
	write(t, dir, "a.txt", "one, edited\n")
	write(t, dir, "b.txt", "two, staged\n")
	run(t, dir, "add", "b.txt")
	write(t, dir, "b.txt", "two, staged, then edited\n")
	if err := os.Remove(filepath.Join(dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "new/deep/c.txt", "untracked\n")
	write(t, dir, "bin.dat", "\x00\x01\xff binary\r\n")
	write(t, dir, "build.log", "ignored\n")
	before := tree(t, dir)
	staged := run(t, dir, "diff", "--cached", "--name-only")
	status := run(t, dir, "status", "--porcelain")
	headBefore := run(t, dir, "rev-parse", "HEAD")

	repo, err := Open(ctx, Host{}, filepath.Join(dir, "new"))
	if err != nil {
		t.Fatal(err)
	}
	s, tmp, err := Take(ctx, Host{}, repo, "s1", at, Meta{Command: "git reset --hard", Session: "sess", Trace: "tr"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if tmp != "" {
		t.Errorf("Take without keep returned the index %s", tmp)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".git", "warden-undo-*")); len(m) > 0 {
		t.Errorf("Take left %v behind", m)
	}
	equalTrees(t, "after the snapshot", tree(t, dir), before)
	if got := run(t, dir, "status", "--porcelain"); got != status {
		t.Errorf("the snapshot changed git status:\n%s\nwant\n%s", got, status)
	}
	if s.Head != headBefore || s.Branch != "refs/heads/main" || s.Index == "" {
		t.Errorf("snapshot head %q branch %q index %q", s.Head, s.Branch, s.Index)
	}

	// The agent's discard, and what it did afterwards.
	run(t, dir, "reset", "-q", "--hard")
	run(t, dir, "clean", "-q", "-fd")
	write(t, dir, "after.txt", "made after the discard\n")
	afterDiscard := tree(t, dir)

	list, err := List(ctx, Host{}, repo)
	if err != nil || len(list) != 1 {
		t.Fatalf("List = %v, %v; want the one snapshot", list, err)
	}
	if l := list[0]; l.ID != "s1" || l.Commit != s.Commit || l.Meta != s.Meta || l.Head != s.Head || l.Index != s.Index || !l.Time.Equal(at) {
		t.Errorf("List()[0] = %+v, want %+v", l, s)
	}
	from, err := Find(ctx, Host{}, repo, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Restore(ctx, Host{}, repo, from, "s2", at.Add(time.Minute), nil)
	if err != nil {
		t.Fatal(err)
	}
	equalTrees(t, "after the undo", tree(t, dir), before)
	if got := run(t, dir, "diff", "--cached", "--name-only"); got != staged {
		t.Errorf("staged after the undo: %q, want %q", got, staged)
	}
	if got := run(t, dir, "status", "--porcelain"); got != status {
		t.Errorf("git status after the undo:\n%s\nwant\n%s", got, status)
	}
	if res.Saved.ID != "s2" || !res.Index || res.Head != "" {
		t.Errorf("Restore = saved %q index %v head %q", res.Saved.ID, res.Index, res.Head)
	}
	for _, p := range []string{"a.txt", "after.txt", "new/deep/c.txt", "gone.txt"} {
		if !slices.Contains(res.Changed, p) {
			t.Errorf("Changed = %q, lacks %s", res.Changed, p)
		}
	}

	// Undoing the undo brings back what was there before it.
	from, err = Find(ctx, Host{}, repo, "")
	if err != nil || from.ID != "s2" || from.Meta.Undoes != "s1" {
		t.Fatalf("newest snapshot = %+v, %v; want s2, undoing s1", from, err)
	}
	if _, err := Restore(ctx, Host{}, repo, from, "s3", at.Add(2*time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	equalTrees(t, "after undoing the undo", tree(t, dir), afterDiscard)

	// Restoring a state that is already there changes nothing and keeps no
	// snapshot of it.
	from, _ = Find(ctx, Host{}, repo, "s2")
	res, err = Restore(ctx, Host{}, repo, from, "s4", at.Add(3*time.Minute), nil)
	if err != nil || res.Saved.ID != "" || len(res.Changed) != 0 {
		t.Errorf("restoring what is there = %+v, %v; want nothing done", res, err)
	}
	if _, err := Find(ctx, Host{}, repo, "s4"); warden.ErrorCodeOf(err) != warden.ENotFound {
		t.Errorf("a snapshot of an unchanged state was kept: %v", err)
	}
}

// TestRestoreRefusesToOverwriteIgnored: an ignored file where the snapshot
// has a file stops the restore before anything changed.
func TestRestoreRefusesToOverwriteIgnored(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a.txt": "one\n"})
	write(t, dir, "out.txt", "the agent's\n")
	repo, _ := Open(ctx, Host{}, dir)
	s, _, err := Take(ctx, Host{}, repo, "s1", at, Meta{}, false)
	if err != nil {
		t.Fatal(err)
	}
	run(t, dir, "clean", "-q", "-f")
	write(t, dir, ".git/info/exclude", "out.txt\n")
	write(t, dir, "out.txt", "ignored, the user's\n")
	write(t, dir, "a.txt", "edited since\n")
	_, err = Restore(ctx, Host{}, repo, s, "s2", at, nil)
	if warden.ErrorCodeOf(err) != warden.EConflict {
		t.Fatalf("Restore over an ignored file: %v, want a conflict", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "out.txt")); string(b) != "ignored, the user's\n" {
		t.Errorf("the ignored file was overwritten: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "edited since\n" {
		t.Errorf("a.txt changed although the restore stopped: %q", b)
	}
	if _, err := Find(ctx, Host{}, repo, "s2"); err != nil {
		t.Errorf("what was there is not saved: %v", err)
	}
}

// TestUnbornBranch: a repository with no commit yet is saved and restored.
func TestUnbornBranch(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ctx := context.Background()
	dir := t.TempDir()
	run(t, dir, "init", "-q")
	write(t, dir, "a.txt", "first work\n")
	repo, _ := Open(ctx, Host{}, dir)
	s, _, err := Take(ctx, Host{}, repo, "s1", at, Meta{Command: "git clean -fd"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if s.Head != "" {
		t.Errorf("head %q on an unborn branch", s.Head)
	}
	run(t, dir, "clean", "-q", "-fd")
	if _, err := Restore(ctx, Host{}, repo, s, "s2", at, nil); err != nil {
		t.Fatal(err)
	}
	equalTrees(t, "restored", tree(t, dir), map[string]string{"a.txt": "first work\n"})
}

// TestErrors: not a repository, no snapshot, an id that names none or
// several, a snapshot whose commit is gone, and a bad id.
func TestErrors(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a.txt": "one\n"})
	if _, err := Open(ctx, Host{}, t.TempDir()); warden.ErrorCodeOf(err) != warden.EInvalid || !strings.Contains(warden.UserMessage(err), "not in a git work tree") {
		t.Errorf("Open outside a repository: %v", err)
	}
	repo, _ := Open(ctx, Host{}, dir)
	if _, err := Find(ctx, Host{}, repo, ""); warden.ErrorCodeOf(err) != warden.ENotFound || !strings.Contains(warden.UserMessage(err), "no warden snapshot") {
		t.Errorf("Find with none: %v", err)
	}
	for _, id := range []string{"20261128-030000-aa", "20261128-030000-bb"} {
		if _, _, err := Take(ctx, Host{}, repo, id, at, Meta{}, false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Find(ctx, Host{}, repo, "nope"); warden.ErrorCodeOf(err) != warden.ENotFound || !strings.Contains(warden.UserMessage(err), "--list") {
		t.Errorf("Find of an unknown id: %v", err)
	}
	if _, err := Find(ctx, Host{}, repo, "20261128"); warden.ErrorCodeOf(err) != warden.EInvalid {
		t.Errorf("Find of an ambiguous prefix: %v", err)
	}
	if s, err := Find(ctx, Host{}, repo, "20261128-030000-b"); err != nil || s.ID != "20261128-030000-bb" {
		t.Errorf("Find of a unique prefix = %v, %v", s.ID, err)
	}
	// A ref whose commit is gone (pruned, or the ref written by hand).
	write(t, dir, ".git/refs/warden/undo/lost", strings.Repeat("ab", 20)+"\n")
	s, err := Find(ctx, Host{}, repo, "lost")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(ctx, Host{}, repo, s, "x", at, nil); warden.ErrorCodeOf(err) != warden.ENotFound || !strings.Contains(warden.UserMessage(err), "no longer exists") {
		t.Errorf("Restore of a snapshot whose commit is gone: %v", err)
	}
	if _, _, err := Take(ctx, Host{}, repo, "../x", at, Meta{}, false); warden.ErrorCodeOf(err) != warden.EInvalid {
		t.Errorf("Take with a bad id: %v", err)
	}
}

// TestSnapshotRunsNoRepositoryCode: a snapshot and a restore run no
// fsmonitor and no hook the repository configures.
func TestSnapshotRunsNoRepositoryCode(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a.txt": "one\n"})
	marker := filepath.Join(t.TempDir(), "ran")
	hook := "#!/bin/sh\necho ran >> " + marker + "\n"
	write(t, dir, ".git/hooks/post-checkout", hook)
	write(t, dir, ".git/hooks/reference-transaction", hook)
	write(t, dir, ".git/fsmon", hook)
	for _, f := range []string{".git/hooks/post-checkout", ".git/hooks/reference-transaction", ".git/fsmon"} {
		if err := os.Chmod(filepath.Join(dir, f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run(t, dir, "config", "core.fsmonitor", filepath.Join(dir, ".git/fsmon"))
	write(t, dir, "a.txt", "edited\n")
	repo, _ := Open(ctx, Host{}, dir)
	s, _, err := Take(ctx, Host{}, repo, "s1", at, Meta{}, false)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.txt", "one\n")
	if _, err := Restore(ctx, Host{}, repo, s, "s2", at, nil); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("repository code ran: %q", b)
	}
}

func TestOneLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a\nb", "a⏎b"},
		{"héllo wörld", "héllo w…"},
		{"abc", "abc"},
	} {
		if got := oneLine(c.in, 9); got != c.want {
			t.Errorf("oneLine(%q, 9) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestNewIDSortsByTime: ids made within one second sort by time.
func TestNewIDSortsByTime(t *testing.T) {
	a := NewID(at.Add(10*time.Microsecond), [4]byte{0xff, 0xff, 0xff, 0xff})
	b := NewID(at.Add(20*time.Microsecond), [4]byte{})
	if !(a < b) || !ValidID(a) || !ValidID(b) {
		t.Errorf("NewID: %q then %q, want them valid and in order", a, b)
	}
}

// TestCheckConfig: a repository's own config that sets a filter driver,
// core.worktree or an include is refused before a restore on the host.
func TestCheckConfig(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		key, value string
		ok         bool
	}{
		{"user.name", "someone", true},
		{"filter.x.smudge", "cat ~/.ssh/id_rsa", false},
		{"core.worktree", "/", false},
		{"include.path", "../evil", false},
		{"includeIf.gitdir:/.path", "../evil", false},
	} {
		t.Run(c.key, func(t *testing.T) {
			dir := newRepo(t, map[string]string{"a.txt": "one\n"})
			repo, _ := Open(ctx, Host{}, dir)
			run(t, dir, "config", "--local", c.key, c.value)
			err := CheckConfig(ctx, Host{}, repo)
			if c.ok && err != nil || !c.ok && warden.ErrorCodeOf(err) != warden.EConflict {
				t.Errorf("CheckConfig with %s set: %v, want ok=%v", c.key, err, c.ok)
			}
		})
	}
}

// TestRestoreLeavesSubmodulesAlone: a user whose git config sets
// submodule.recurse would have git read-tree check out a submodule's
// commit in the submodule's own repository, whose configuration (its
// core.worktree, its filters, under .git/modules, which an agent can
// write) CheckConfig does not read: a restore writes the work tree's
// gitlinks only, never into a submodule.
func TestRestoreLeavesSubmodulesAlone(t *testing.T) {
	ctx := context.Background()
	sub := newRepo(t, map[string]string{"f": "1\n"})
	write(t, sub, "f", "2\n")
	run(t, sub, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "second")
	global := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(global, []byte("[submodule]\n\trecurse = true\n[protocol \"file\"]\n\tallow = always\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	top := newRepo(t, map[string]string{"a.txt": "one\n"})
	run(t, top, "submodule", "add", "-q", sub, "sub")
	run(t, top, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "sub")
	repo, err := Open(ctx, Host{}, top)
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := Take(ctx, Host{}, repo, "s1", at, Meta{}, false)
	if err != nil {
		t.Fatal(err)
	}
	subDir := filepath.Join(top, "sub")
	run(t, subDir, "checkout", "-q", "HEAD~1")
	moved := run(t, subDir, "rev-parse", "HEAD")
	if _, err := Restore(ctx, Host{}, repo, s, "s2", at, nil); err != nil {
		t.Fatal(err)
	}
	if got := run(t, subDir, "rev-parse", "HEAD"); got != moved {
		t.Errorf("the restore checked out %s in the submodule (it was at %s): git recursed into it", got, moved)
	}
}

// TestForgedSnapshotCannotNameAnOption: an agent can write a snapshot of
// its own (refs and objects under .git are writable in the sandbox), whose
// trailers List reads back. A Warden-Index or Warden-Head that is not an
// object id is dropped: given to git read-tree as it was, a value such as
// --index-output=FILE wrote the index over a file outside the work tree.
func TestForgedSnapshotCannotNameAnOption(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a.txt": "one\n"})
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tree := run(t, dir, "rev-parse", "HEAD^{tree}")
	msg := "warden undo: forged\n\nWarden-Index: --index-output=" + victim + "\nWarden-Head: -x\n"
	commit := run(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit-tree", "-m", msg, tree)
	run(t, dir, "update-ref", RefPrefix+"99999999-forged", commit)
	repo, err := Open(ctx, Host{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Find(ctx, Host{}, repo, "")
	if err != nil {
		t.Fatal(err)
	}
	if s.Index != "" || s.Head != "" {
		t.Errorf("the forged snapshot's index %q and head %q were read back; want neither", s.Index, s.Head)
	}
	write(t, dir, "a.txt", "edited\n")
	_, _ = Restore(ctx, Host{}, repo, s, "s2", at, nil)
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("a file outside the work tree was overwritten by the restore: %q", b)
	}
}

// TestRestoreRefusesProtectedPaths: a snapshot an agent wrote that would
// change a protected path (an agent host's settings, where a hook is a
// command run outside any sandbox) stops the restore before anything
// changed; with no protected paths it restores.
func TestRestoreRefusesProtectedPaths(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a.txt": "one\n"})
	write(t, dir, ".claude/settings.json", `{"hooks":"evil"}`)
	write(t, dir, "a.txt", "two\n")
	repo, _ := Open(ctx, Host{}, dir)
	s, _, err := Take(ctx, Host{}, repo, "s1", at, Meta{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, ".claude")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.txt", "one\n")
	protected := []string{".git/config", ".claude/", ".warden.yaml"}
	_, err = Restore(ctx, Host{}, repo, s, "s2", at, protected)
	if warden.ErrorCodeOf(err) != warden.EConflict || !strings.Contains(warden.UserMessage(err), ".claude/settings.json") {
		t.Fatalf("restoring a snapshot that adds .claude/settings.json: %v, want a conflict naming it", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".claude")); !os.IsNotExist(err) {
		t.Errorf("the refused restore wrote .claude: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "one\n" {
		t.Errorf("the refused restore changed a.txt: %q", b)
	}
	if _, err := Restore(ctx, Host{}, repo, s, "s3", at, nil); err != nil {
		t.Fatalf("restore with no protected paths: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".claude/settings.json")); string(b) != `{"hooks":"evil"}` {
		t.Errorf("restore with no protected paths: .claude/settings.json is %q", b)
	}
}

// TestStashDropIsSaved: a snapshot keeps the stash entries of its time (as
// further parents, so git's garbage collection keeps them too); after a
// stash drop and a stash clear, restoring it stores them again in their
// order, on top, even when the work tree has not changed, and keeps a
// stash made since below them.
func TestStashDropIsSaved(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a.txt": "one\n"})
	id := []string{"-c", "user.name=t", "-c", "user.email=t@t"}
	write(t, dir, "a.txt", "first stash\n")
	run(t, dir, append(id, "stash", "push", "-q", "-m", "older")...)
	write(t, dir, "a.txt", "second stash\n")
	write(t, dir, "u.txt", "untracked in the stash\n")
	run(t, dir, append(id, "stash", "push", "-q", "-u", "-m", "newer")...)
	list := run(t, dir, "stash", "list", "--format=%H %gs")

	repo, err := Open(ctx, Host{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := Take(ctx, Host{}, repo, "s1", at, Meta{Command: "git stash drop"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Stashes) != 2 || !strings.HasSuffix(s.Stashes[0].Message, "newer") || !strings.HasSuffix(s.Stashes[1].Message, "older") {
		t.Fatalf("snapshot stashes = %+v, want newer then older", s.Stashes)
	}
	got, err := List(ctx, Host{}, repo)
	if err != nil || len(got) != 1 || !slices.Equal(got[0].Stashes, s.Stashes) {
		t.Fatalf("List = %+v, %v; want the snapshot with its stashes %+v", got, err, s.Stashes)
	}

	// The agent's discards, then a stash of its own; git's garbage
	// collection runs.
	run(t, dir, "stash", "drop", "-q")
	run(t, dir, "stash", "clear")
	write(t, dir, "a.txt", "made after\n")
	run(t, dir, append(id, "stash", "push", "-q", "-m", "since")...)
	run(t, dir, "-c", "gc.reflogExpireUnreachable=now", "reflog", "expire", "--all")
	run(t, dir, "gc", "-q", "--prune=now")

	res, err := Restore(ctx, Host{}, repo, got[0], "s2", at.Add(time.Minute), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stashes) != 2 {
		t.Errorf("Restore stored %+v again, want both stashes", res.Stashes)
	}
	after := run(t, dir, "stash", "list", "--format=%H %gs")
	if !strings.HasPrefix(after, list+"\n") || !strings.HasSuffix(after, "On main: since") {
		t.Errorf("stash list after the undo:\n%s\nwant\n%s\nabove the entry made since", after, list)
	}
	run(t, dir, append(id, "stash", "pop", "-q")...)
	if b, _ := os.ReadFile(filepath.Join(dir, "u.txt")); string(b) != "untracked in the stash\n" {
		t.Errorf("the restored stash lost its untracked file: u.txt = %q", b)
	}

	// A second restore finds them in the list and stores nothing twice.
	res, err = Restore(ctx, Host{}, repo, got[0], "s3", at.Add(2*time.Minute), nil)
	if err != nil || len(res.Stashes) != 1 {
		t.Errorf("restoring again stored %+v (%v), want only the popped stash back", res.Stashes, err)
	}
}

// TestDeletedBranchIsSaved: git branch -D after a snapshot, then git's
// garbage collection: the branch's commits stay (the snapshot keeps them),
// and the restore makes the branch again where it was; a branch that
// exists is left alone.
func TestDeletedBranchIsSaved(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a.txt": "one\n"})
	id := []string{"-c", "user.name=t", "-c", "user.email=t@t"}
	run(t, dir, "switch", "-q", "-c", "feat/x")
	write(t, dir, "a.txt", "only on the branch\n")
	run(t, dir, append(id, "commit", "-qam", "feature work")...)
	tip := strings.TrimSpace(run(t, dir, "rev-parse", "HEAD"))
	run(t, dir, "switch", "-q", "main")
	run(t, dir, "branch", "keep")

	repo, err := Open(ctx, Host{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := Take(ctx, Host{}, repo, "b1", at, Meta{Command: "git branch -D feat/x"}, false)
	if err != nil {
		t.Fatal(err)
	}
	got, err := List(ctx, Host{}, repo)
	if err != nil || len(got) != 1 || !slices.Equal(got[0].Branches, s.Branches) || !slices.Contains(s.Branches, Branch{Ref: "refs/heads/feat/x", Commit: tip}) {
		t.Fatalf("List = %+v, %v; want the snapshot with feat/x at %s among %+v", got, err, tip, s.Branches)
	}
	run(t, dir, "branch", "-D", "feat/x")
	run(t, dir, "branch", "-f", "keep", "HEAD")
	run(t, dir, "-c", "gc.reflogExpireUnreachable=now", "reflog", "expire", "--all")
	run(t, dir, "gc", "-q", "--prune=now")

	res, err := Restore(ctx, Host{}, repo, got[0], "b2", at.Add(time.Minute), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Branches) != 1 || res.Branches[0].Ref != "refs/heads/feat/x" {
		t.Errorf("Restore made %+v again, want feat/x only", res.Branches)
	}
	if now := strings.TrimSpace(run(t, dir, "rev-parse", "feat/x")); now != tip {
		t.Errorf("feat/x is at %s after the undo, want %s", now, tip)
	}
	if msg := run(t, dir, "log", "-1", "--format=%s", "feat/x"); !strings.Contains(msg, "feature work") {
		t.Errorf("feat/x's commit: %q", msg)
	}
}
