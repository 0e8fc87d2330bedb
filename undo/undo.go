// Package undo saves the uncommitted work of a git work tree before a
// command discards it, and brings it back: the work behind `warden undo`.
//
// A snapshot is a commit that git itself keeps, under
// refs/warden/undo/ID in the repository: its tree is the work tree as it
// was (tracked files as they were on disk, and untracked files that are not
// ignored), its first parent the HEAD of the time (none on an unborn
// branch), and its second parent, when the index could be written as a
// tree, a commit of the index; every stash entry of the time follows as a
// further parent, so that a stash dropped or cleared after the snapshot
// stays reachable, and Restore stores it again. It is built with a
// temporary index, so the
// repository's own index, HEAD and work tree are left as they were. Ignored
// files are not saved (the shell guard asks about `git clean -x`, which
// deletes them).
//
// Every git command runs through a Runner, which says where: warden exec
// runs them inside the command's own sandbox (git in a repository an agent
// controls can run code, through core.fsmonitor, hooks and filters), and
// `warden undo` on the host, as the user would. Either way git runs with
// core.fsmonitor, core.hooksPath and submodule recursion switched off, and
// with no pager, editor or prompt.
package undo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentwarden/warden"
)

// RefPrefix is where snapshots live in a repository.
const RefPrefix = "refs/warden/undo/"

// Runner runs git for this package.
type Runner interface {
	// Git runs git with args in dir, with env (NAME=VALUE) added to its
	// environment, and returns its standard output. A git that ran and
	// exited non-zero is a *GitError; any other error means git could not
	// be run at all.
	Git(ctx context.Context, dir string, env []string, args ...string) ([]byte, error)
	// Remove removes the file at path (a temporary index this package made
	// in the repository's git directory); one that is not there is no
	// error.
	Remove(ctx context.Context, path string) error
	// Exists reports whether anything (a file, a directory, a link, even a
	// dangling one) is at path.
	Exists(ctx context.Context, path string) (bool, error)
}

// GitError is a git command that exited non-zero.
type GitError struct {
	Args   []string
	Exit   int
	Stderr string
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", e.Exit)
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

// exitOf is the exit status of a *GitError in err, or -1.
func exitOf(err error) int {
	var ge *GitError
	if errors.As(err, &ge) {
		return ge.Exit
	}
	return -1
}

// safety are the settings every git command of this package runs with:
// no fsmonitor daemon or hook of the repository runs, no pager, and no
// command recurses into a submodule (a user's submodule.recurse would have
// read-tree check one out, in a repository whose configuration, under
// .git/modules, an agent can write: its core.worktree, its filters).
var safety = []string{"-c", "core.fsmonitor=", "-c", "core.hooksPath=/dev/null", "-c", "core.pager=cat", "-c", "submodule.recurse=false", "--no-pager"}

// ident makes snapshot commits independent of the user's git identity
// (which may be unset) and dates them at the snapshot's time.
func ident(at time.Time) []string {
	date := fmt.Sprintf("%d +0000", at.Unix())
	return []string{
		"GIT_AUTHOR_NAME=warden", "GIT_AUTHOR_EMAIL=warden@localhost", "GIT_AUTHOR_DATE=" + date,
		"GIT_COMMITTER_NAME=warden", "GIT_COMMITTER_EMAIL=warden@localhost", "GIT_COMMITTER_DATE=" + date,
		"GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true",
	}
}

// git runs one git command with the safety settings.
func git(ctx context.Context, r Runner, dir string, env []string, args ...string) (string, error) {
	out, err := r.Git(ctx, dir, env, append(append([]string{}, safety...), args...)...)
	var ge *GitError
	if errors.As(err, &ge) {
		ge.Args = args // say what failed, not the settings every call has
	}
	return string(bytes.TrimRight(out, "\n")), err
}

// Repo is a git work tree.
type Repo struct {
	Top    string // the work tree's top directory
	GitDir string // its git directory, absolute
}

// Open finds the work tree dir is in. Not being in one is an EInvalid
// error saying so.
func Open(ctx context.Context, r Runner, dir string) (Repo, error) {
	out, err := git(ctx, r, dir, nil, "rev-parse", "--show-toplevel", "--absolute-git-dir")
	if err != nil {
		if exitOf(err) < 0 {
			return Repo{}, warden.Errorf(warden.EUnavailable, "could not run git in %s", dir).Wrap(err)
		}
		return Repo{}, warden.Errorf(warden.EInvalid, "%s is not in a git work tree", dir).Wrap(err).
			WithHint("run warden undo in the project whose work you want back")
	}
	lines := strings.Split(out, "\n")
	if len(lines) != 2 || lines[0] == "" || lines[1] == "" {
		return Repo{}, warden.Errorf(warden.EInvalid, "%s is not in a git work tree (git found no top directory)", dir)
	}
	return Repo{Top: lines[0], GitDir: lines[1]}, nil
}

// RecursesSubmodules reports whether git commands in repo recurse into
// its submodules by the configuration they run with (submodule.recurse,
// from any file or the environment) and it has any (.gitmodules): a
// discard there also loses the uncommitted work of the submodules,
// repositories of their own that a snapshot holds only as commits.
func RecursesSubmodules(ctx context.Context, r Runner, repo Repo) (bool, error) {
	// Not through git(): its safety settings switch submodule.recurse off.
	out, err := r.Git(ctx, repo.Top, nil, "-c", "core.fsmonitor=", "--no-pager", "config", "--type=bool", "--get", "submodule.recurse")
	switch {
	case exitOf(err) == 1: // not set
		return false, nil
	case err != nil:
		return false, warden.Errorf(warden.EUnavailable, "could not read submodule.recurse in %s", repo.Top).Wrap(err)
	case strings.TrimSpace(string(out)) != "true":
		return false, nil
	}
	return r.Exists(ctx, repo.Top+"/.gitmodules")
}

// Meta says why a snapshot was taken; it goes into the snapshot's commit
// message. Command must already be redacted.
type Meta struct {
	Command string // the command about to run ("" for an undo's own)
	Session string
	Trace   string
	// Undoes is the snapshot an undo restores; a snapshot taken by an undo
	// of the state it replaces names it.
	Undoes string
}

// Snapshot is one saved state of a work tree.
type Snapshot struct {
	ID     string
	Commit string
	Time   time.Time
	Meta   Meta
	Tree   string // the work tree's tree
	Head   string // HEAD's commit then; "" on an unborn branch
	Branch string // HEAD's branch then (refs/heads/…); "" when detached
	// Index is the tree of the index then; "" when it could not be written
	// as a tree (an unfinished merge).
	Index string
	// Stashes are the stash entries then, newest (stash@{0}) first.
	Stashes []Stash
	// Branches are the local branches then (git branch -D deletes one
	// with its reflog, and the commits only it held become unreachable).
	Branches []Branch
}

// Branch is one local branch: its ref (refs/heads/…) and its commit.
type Branch struct {
	Ref    string
	Commit string
}

// maxBranches bounds the branches a snapshot keeps: each is a parent of
// its commit.
const maxBranches = 512

// Stash is one stash entry: its commit and its message.
type Stash struct {
	Commit  string
	Message string
}

// Ref is the snapshot's ref.
func (s Snapshot) Ref() string { return RefPrefix + s.ID }

// Subject is what the snapshot was taken before.
func (s Snapshot) Subject() string {
	switch {
	case s.Meta.Undoes != "":
		return "before undoing " + s.Meta.Undoes
	case s.Meta.Command != "":
		return "before `" + oneLine(s.Meta.Command, 120) + "`"
	}
	return "saved by warden"
}

// NewID makes a snapshot id from the time, to the microsecond, and four
// random bytes, so that ids sort by time (List's newest first is by id).
func NewID(at time.Time, random [4]byte) string {
	return fmt.Sprintf("%s-%x", at.UTC().Format("20060102-150405.000000"), random[:])
}

// ValidID reports whether id can name a snapshot (a ref name component
// NewID makes, or any other made of letters, digits, '-', '_' and '.').
func ValidID(id string) bool {
	if id == "" || len(id) > 64 || strings.HasPrefix(id, ".") || strings.HasPrefix(id, "-") || strings.Contains(id, "..") || strings.HasSuffix(id, ".lock") {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// Take saves the work tree of repo as snapshot id, taken at, and returns
// it. Nothing in the work tree, the index or HEAD changes. With keep, the
// temporary index it built (the work tree as staged in the snapshot, with
// the files' stat data) is left in place and its path returned, for the
// caller to use and then Remove; otherwise it is removed.
func Take(ctx context.Context, r Runner, repo Repo, id string, at time.Time, m Meta, keep bool) (s Snapshot, tmpIndex string, err error) {
	if !ValidID(id) {
		return Snapshot{}, "", warden.Errorf(warden.EInvalid, "%q is not a snapshot id", id)
	}
	s = Snapshot{ID: id, Time: at.UTC().Truncate(time.Second), Meta: m}
	env := ident(at)
	fail := func(what string, err error) (Snapshot, string, error) {
		return Snapshot{}, "", warden.Errorf(warden.EUnavailable, "could not save the work tree of %s: %s", repo.Top, what).Wrap(err)
	}
	head, err := git(ctx, r, repo.Top, env, "rev-parse", "-q", "--verify", "HEAD^{commit}")
	switch {
	case err == nil:
		s.Head = head
	case exitOf(err) != 1: // 1: an unborn branch
		return fail("HEAD cannot be read", err)
	}
	if b, err := git(ctx, r, repo.Top, env, "symbolic-ref", "-q", "HEAD"); err == nil {
		s.Branch = b
	}
	// The index as a tree; an unfinished merge has none.
	if t, err := git(ctx, r, repo.Top, env, "write-tree"); err == nil {
		s.Index = t
	}
	if s.Stashes, err = stashes(ctx, r, repo, env); err != nil {
		return fail("its stash entries cannot be read", err)
	}
	if s.Branches, err = branches(ctx, r, repo, env); err != nil {
		return fail("its branches cannot be read", err)
	}
	tmp := repo.GitDir + "/warden-undo-" + id + ".index"
	defer func() {
		if err != nil || !keep {
			_ = r.Remove(context.WithoutCancel(ctx), tmp)
			tmpIndex = ""
		}
	}()
	withTmp := append(append([]string{}, env...), "GIT_INDEX_FILE="+tmp)
	if s.Head != "" {
		// HEAD's tree with the stat data of the index's matching entries,
		// so that adding the work tree hashes only what changed.
		if _, err := git(ctx, r, repo.Top, env, "read-tree", "--index-output="+tmp, "-m", s.Head); err != nil {
			if _, err := git(ctx, r, repo.Top, withTmp, "read-tree", s.Head); err != nil {
				return fail("a temporary index cannot be made", err)
			}
		}
	}
	if _, err := git(ctx, r, repo.Top, withTmp, "add", "-A", "--", ":/"); err != nil {
		return fail("its files cannot be read", err)
	}
	if s.Tree, err = git(ctx, r, repo.Top, withTmp, "write-tree"); err != nil {
		return fail("its tree cannot be written", err)
	}
	parents := []string{}
	if s.Head != "" {
		parents = append(parents, "-p", s.Head)
	}
	if s.Index != "" {
		args := append(append([]string{"commit-tree", "--no-gpg-sign"}, parents...), "-m", "warden undo: the index "+s.Subject(), s.Index)
		ic, err := git(ctx, r, repo.Top, env, args...)
		if err != nil {
			return fail("the index cannot be committed", err)
		}
		parents = append(parents, "-p", ic)
	}
	for _, st := range s.Stashes {
		parents = append(parents, "-p", st.Commit)
	}
	// Each branch tip too, once (git refuses a parent twice).
	seen := map[string]bool{s.Head: true}
	for _, st := range s.Stashes {
		seen[st.Commit] = true
	}
	for _, b := range s.Branches {
		if !seen[b.Commit] {
			seen[b.Commit] = true
			parents = append(parents, "-p", b.Commit)
		}
	}
	args := append(append([]string{"commit-tree", "--no-gpg-sign"}, parents...), "-m", "warden undo: "+s.Subject(), "-m", trailers(s), s.Tree)
	if s.Commit, err = git(ctx, r, repo.Top, env, args...); err != nil {
		return fail("the snapshot cannot be committed", err)
	}
	if _, err := git(ctx, r, repo.Top, env, "update-ref", "-m", "warden undo: snapshot", s.Ref(), s.Commit, ""); err != nil {
		return fail("its ref "+s.Ref()+" cannot be made", err)
	}
	return s, tmp, nil
}

// stashes reads the stash entries of repo, newest first; none is no error.
func stashes(ctx context.Context, r Runner, repo Repo, env []string) ([]Stash, error) {
	if _, err := git(ctx, r, repo.Top, env, "rev-parse", "-q", "--verify", "refs/stash"); err != nil {
		if exitOf(err) == 1 {
			return nil, nil // no stash
		}
		return nil, err
	}
	out, err := git(ctx, r, repo.Top, env, "log", "-g", "--no-decorate", "--format=%H%x00%gs", "refs/stash", "--")
	if err != nil {
		return nil, err
	}
	var list []Stash
	for line := range strings.Lines(out) {
		oid, msg, _ := strings.Cut(strings.TrimRight(line, "\n"), "\x00")
		if isOID(oid) {
			list = append(list, Stash{Commit: oid, Message: oneLine(msg, 400)})
		}
	}
	return list, nil
}

// branches reads the local branches of repo (at most maxBranches: a
// repository with more keeps the first, by name).
func branches(ctx context.Context, r Runner, repo Repo, env []string) ([]Branch, error) {
	out, err := git(ctx, r, repo.Top, env, "for-each-ref", "--count="+fmt.Sprint(maxBranches), "--format=%(refname)%00%(objectname)", "refs/heads/")
	if err != nil {
		return nil, err
	}
	var list []Branch
	for line := range strings.Lines(out) {
		ref, oid, _ := strings.Cut(strings.TrimRight(line, "\n"), "\x00")
		if isOID(oid) && strings.HasPrefix(ref, "refs/heads/") {
			list = append(list, Branch{Ref: ref, Commit: oid})
		}
	}
	return list, nil
}

// trailers is the snapshot's facts as commit message trailers, which List
// reads back.
func trailers(s Snapshot) string {
	var b strings.Builder
	add := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%s: %s\n", k, oneLine(v, 4000))
		}
	}
	add("Warden-Command", s.Meta.Command)
	add("Warden-Undoes", s.Meta.Undoes)
	add("Warden-Session", s.Meta.Session)
	add("Warden-Trace", s.Meta.Trace)
	add("Warden-Branch", s.Branch)
	add("Warden-Head", s.Head)
	add("Warden-Index", s.Index)
	for _, st := range s.Stashes {
		add("Warden-Stash", st.Commit+" "+st.Message)
	}
	for _, br := range s.Branches {
		add("Warden-Branch-Tip", br.Commit+" "+br.Ref)
	}
	return strings.TrimRight(b.String(), "\n")
}

// oneLine is s on one line (line breaks shown as ⏎), cut to n bytes at a
// character boundary.
func oneLine(s string, n int) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r", ""), "\n", "⏎")
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// listFormat is what List reads of each snapshot ref.
const listFormat = "--format=%(refname)%00%(objectname)%00%(committerdate:unix)%00%(tree)%00%(contents)%00%00"

// List returns the snapshots of repo, newest first. A snapshot whose
// commit is gone is listed with its ID and Commit only.
func List(ctx context.Context, r Runner, repo Repo) ([]Snapshot, error) {
	out, err := git(ctx, r, repo.Top, nil, "for-each-ref", "--sort=-refname", listFormat, RefPrefix)
	if err != nil {
		// A ref whose commit is gone fails the whole listing: list the
		// refs alone, then each one's commit where it is there.
		names, err2 := git(ctx, r, repo.Top, nil, "for-each-ref", "--sort=-refname", "--format=%(refname)%00%(objectname)", RefPrefix)
		if err2 != nil {
			return nil, warden.Errorf(warden.EUnavailable, "could not list the snapshots of %s", repo.Top).Wrap(err)
		}
		var list []Snapshot
		for line := range strings.Lines(names) {
			ref, oid, _ := strings.Cut(strings.TrimRight(line, "\n"), "\x00")
			one, err := git(ctx, r, repo.Top, nil, "for-each-ref", listFormat, ref)
			if got := parseList(one); err == nil && len(got) == 1 {
				list = append(list, got[0])
			} else {
				list = append(list, Snapshot{ID: strings.TrimPrefix(ref, RefPrefix), Commit: oid})
			}
		}
		return list, nil
	}
	return parseList(out), nil
}

// isOID reports whether s is a full object id (SHA-1 or SHA-256, in
// lower-case hex). A snapshot's trailers are text anyone who can write the
// repository's refs may have written: Restore gives Warden-Index to git,
// where a value such as --index-output=FILE would be an option.
func isOID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// parseList reads for-each-ref's output in listFormat.
func parseList(out string) []Snapshot {
	var list []Snapshot
	for _, rec := range strings.Split(out, "\x00\x00") {
		rec = strings.TrimLeft(rec, "\n")
		f := strings.SplitN(rec, "\x00", 5)
		if len(f) < 5 || !strings.HasPrefix(f[0], RefPrefix) {
			continue
		}
		s := Snapshot{ID: strings.TrimPrefix(f[0], RefPrefix), Commit: f[1], Tree: f[3]}
		var unix int64
		if _, err := fmt.Sscan(f[2], &unix); err == nil {
			s.Time = time.Unix(unix, 0).UTC()
		}
		for line := range strings.Lines(f[4]) {
			k, v, ok := strings.Cut(strings.TrimRight(line, "\n"), ": ")
			if !ok {
				continue
			}
			switch k {
			case "Warden-Command":
				s.Meta.Command = v
			case "Warden-Undoes":
				s.Meta.Undoes = v
			case "Warden-Session":
				s.Meta.Session = v
			case "Warden-Trace":
				s.Meta.Trace = v
			case "Warden-Branch":
				s.Branch = v
			case "Warden-Head":
				if isOID(v) {
					s.Head = v
				}
			case "Warden-Index":
				if isOID(v) {
					s.Index = v
				}
			case "Warden-Stash":
				oid, msg, _ := strings.Cut(v, " ")
				if isOID(oid) {
					s.Stashes = append(s.Stashes, Stash{Commit: oid, Message: msg})
				}
			case "Warden-Branch-Tip":
				// A ref given to git update-ref: a full name under
				// refs/heads/, checked by git itself too.
				oid, ref, _ := strings.Cut(v, " ")
				if isOID(oid) && strings.HasPrefix(ref, "refs/heads/") && !strings.HasPrefix(ref, "refs/heads/-") && !strings.ContainsAny(ref, " \x00") {
					s.Branches = append(s.Branches, Branch{Ref: ref, Commit: oid})
				}
			}
		}
		list = append(list, s)
	}
	return list
}
