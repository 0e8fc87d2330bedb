package undo

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentwarden/warden"
)

// Find returns the snapshot of repo named id (or by a prefix of its id
// that names one only), or the newest one when id is "". No snapshot at
// all, and none by that id, are ENotFound errors saying what to do.
func Find(ctx context.Context, r Runner, repo Repo, id string) (Snapshot, error) {
	list, err := List(ctx, r, repo)
	if err != nil {
		return Snapshot{}, err
	}
	if len(list) == 0 {
		return Snapshot{}, warden.Errorf(warden.ENotFound, "there is no warden snapshot in %s", repo.Top).
			WithHint("warden saves one before an agent's command discards uncommitted work here; none has")
	}
	if id == "" {
		return list[0], nil
	}
	var found []Snapshot
	for _, s := range list {
		if s.ID == id {
			return s, nil
		}
		if strings.HasPrefix(s.ID, id) {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return Snapshot{}, warden.Errorf(warden.ENotFound, "there is no snapshot %q in %s", id, repo.Top).
			WithHint("`warden undo --list` lists the snapshots there")
	}
	return Snapshot{}, warden.Errorf(warden.EInvalid, "%q names %d snapshots in %s", id, len(found), repo.Top).
		WithHint("give more of the id; `warden undo --list` lists them")
}

// Restored is what Restore did.
type Restored struct {
	From Snapshot // the snapshot brought back
	// Branches are the snapshot's branches that no longer existed, made
	// again at the commit they had.
	Branches []Branch
	// Saved is the snapshot of what was there before, which an undo of
	// this undo brings back; its ID is "" when nothing had to change.
	Saved Snapshot
	// Changed are the paths whose content the restore wrote or removed.
	Changed []string
	// Index says the index was restored too.
	Index bool
	// Head is HEAD's commit now when it differs from the snapshot's (a
	// reset moved it): the restore leaves HEAD where it is.
	Head string
	// Stashes are the snapshot's stash entries that were no longer in the
	// stash list (dropped or cleared since), stored there again.
	Stashes []Stash
}

// Restore brings the work tree (and the index, when the snapshot holds it)
// of repo back to snapshot from, without losing what is there now: that is
// saved first as snapshot id, which restoring in turn brings back. Files
// the snapshot lacks that are there now (and not ignored) are removed;
// ignored files are left alone, and one that is where the snapshot has a
// file stops the restore before anything changed. HEAD is left where it
// is. The snapshot's stash entries that are no longer in the stash list
// (a stash drop or clear ran since) are stored there again, last. A
// snapshot whose commit is gone is an ENotFound error. A restore
// that would change a protected path (relative to the work tree's top; a
// directory written with a trailing /) stops before anything changed: a
// snapshot is a commit that anyone who can write the repository's refs may
// have made, an agent in warden's sandbox too, which keeps those paths (an
// agent host's settings, warden's own) read-only.
func Restore(ctx context.Context, r Runner, repo Repo, from Snapshot, id string, at time.Time, protected []string) (Restored, error) {
	out := Restored{From: from}
	if _, err := git(ctx, r, repo.Top, nil, "cat-file", "-e", from.Commit+"^{commit}"); err != nil {
		return out, warden.Errorf(warden.ENotFound, "snapshot %s no longer exists in %s: its commit %s is gone", from.ID, repo.Top, short(from.Commit)).Wrap(err).
			WithHint("the repository's objects were pruned or rewritten; `warden undo --list` lists the snapshots there")
	}
	now, tmp, err := Take(ctx, r, repo, id, at, Meta{Undoes: from.ID}, true)
	if err != nil {
		return out, err
	}
	defer func() { _ = r.Remove(context.WithoutCancel(ctx), tmp) }()
	if now.Head != from.Head {
		out.Head = now.Head
	}
	restoreIndex := from.Index != "" && from.Index != now.Index
	if now.Tree == from.Tree && !restoreIndex {
		// Nothing differs: the snapshot just taken is not needed.
		_, _ = git(ctx, r, repo.Top, nil, "update-ref", "-d", now.Ref(), now.Commit)
		if out.Stashes, err = restoreStashes(ctx, r, repo, from, now, at); err != nil {
			return out, err
		}
		out.Branches, err = restoreBranches(ctx, r, repo, from, at)
		return out, err
	}
	out.Saved = now
	diff, err := git(ctx, r, repo.Top, nil, "diff-tree", "-r", "--no-renames", "--name-only", "-z", now.Tree, from.Tree)
	if err != nil {
		return out, warden.Errorf(warden.EUnavailable, "could not compare snapshot %s with the work tree of %s", from.ID, repo.Top).Wrap(err)
	}
	for _, p := range strings.Split(diff, "\x00") {
		if p != "" {
			out.Changed = append(out.Changed, p)
		}
	}
	if p := firstProtected(out.Changed, protected); p != "" {
		return out, warden.Errorf(warden.EConflict, "snapshot %s would change %s in %s, a path warden keeps read-only for agents (sandbox.protected_paths), and a snapshot is a commit an agent can write", from.ID, p, repo.Top).
			WithHint(fmt.Sprintf("look at what it holds (`git diff %s %s -- %s`); if you took it or trust it, run warden undo --allow-protected %s", short(now.Commit), short(from.Commit), p, from.ID))
	}
	if now.Tree != from.Tree {
		// git read-tree overwrites ignored files: a path the snapshot
		// adds must be free (what is not ignored is in now.Tree).
		added, err := git(ctx, r, repo.Top, nil, "diff-tree", "-r", "--no-renames", "--name-only", "--diff-filter=A", "-z", now.Tree, from.Tree)
		if err != nil {
			return out, warden.Errorf(warden.EUnavailable, "could not compare snapshot %s with the work tree of %s", from.ID, repo.Top).Wrap(err)
		}
		for _, p := range strings.Split(added, "\x00") {
			if p == "" {
				continue
			}
			taken, err := r.Exists(ctx, repo.Top+"/"+p)
			if err != nil {
				return out, warden.Errorf(warden.EUnavailable, "could not look at %s in %s", p, repo.Top).Wrap(err)
			}
			if taken {
				return out, warden.Errorf(warden.EConflict, "could not restore snapshot %s in %s: %s is there now, an ignored file that the restore would overwrite", from.ID, repo.Top, p).
					WithHint(fmt.Sprintf("move %s out of the way and run warden undo %s again (what is there now is saved as snapshot %s)", p, from.ID, now.ID))
			}
		}
		// A two-tree merge from the work tree as it is (the temporary index
		// holds it, stat data and all) to the snapshot: git writes what
		// differs, removes what the snapshot lacks, and refuses, before
		// changing anything, to overwrite a file it does not track.
		env := append(ident(at), "GIT_INDEX_FILE="+tmp)
		if _, err := git(ctx, r, repo.Top, env, "read-tree", "-m", "-u", now.Tree, from.Tree); err != nil {
			return out, warden.Errorf(warden.EConflict, "could not restore snapshot %s in %s", from.ID, repo.Top).Wrap(err).
				WithHint(fmt.Sprintf("what was there is saved as snapshot %s; move the file git names out of the way and run warden undo %s again", now.ID, from.ID))
		}
	}
	if restoreIndex {
		if _, err := git(ctx, r, repo.Top, nil, "read-tree", from.Index); err != nil {
			return out, warden.Errorf(warden.EUnavailable, "restored the files of snapshot %s in %s, but not its index", from.ID, repo.Top).Wrap(err).
				WithHint(fmt.Sprintf("`git reset` makes the index match HEAD; the index before is in snapshot %s", now.ID))
		}
		// The index read from a tree has no stat data: refresh it, so the
		// next git status need not read every file. Files that differ are
		// left as they are (status 1 says some do).
		_, _ = git(ctx, r, repo.Top, nil, "update-index", "-q", "--refresh")
		out.Index = true
	}
	if out.Stashes, err = restoreStashes(ctx, r, repo, from, now, at); err != nil {
		return out, err
	}
	out.Branches, err = restoreBranches(ctx, r, repo, from, at)
	return out, err
}

// restoreBranches makes again each branch of snapshot from that does not
// exist now (git branch -D deleted it), at the commit it had; a branch
// that exists, wherever it points, is left as it is. Their commits are
// kept by the snapshot (its further parents).
func restoreBranches(ctx context.Context, r Runner, repo Repo, from Snapshot, at time.Time) ([]Branch, error) {
	var back []Branch
	for _, b := range from.Branches {
		if _, err := git(ctx, r, repo.Top, nil, "rev-parse", "-q", "--verify", b.Ref); err == nil {
			continue
		}
		if _, err := git(ctx, r, repo.Top, ident(at), "update-ref", "-m", "warden undo: branch restored", b.Ref, b.Commit, ""); err != nil {
			return back, warden.Errorf(warden.EUnavailable, "could not make the branch %s of snapshot %s again in %s", strings.TrimPrefix(b.Ref, "refs/heads/"), from.ID, repo.Top).Wrap(err).
				WithHint(fmt.Sprintf("`git branch %s %s` makes it by hand", strings.TrimPrefix(b.Ref, "refs/heads/"), b.Commit))
		}
		back = append(back, b)
	}
	return back, nil
}

// restoreStashes stores again the stash entries of snapshot from that are
// not in the stash list now (a stash drop or clear ran since), oldest
// first, so that they come back on top in their order, above the entries
// made since. Their commits are kept by the snapshot (its further
// parents).
func restoreStashes(ctx context.Context, r Runner, repo Repo, from, now Snapshot, at time.Time) ([]Stash, error) {
	have := map[string]bool{}
	for _, st := range now.Stashes {
		have[st.Commit] = true
	}
	var back []Stash
	for i := len(from.Stashes) - 1; i >= 0; i-- {
		st := from.Stashes[i]
		if have[st.Commit] {
			continue
		}
		if _, err := git(ctx, r, repo.Top, ident(at), "cat-file", "-e", st.Commit+"^{commit}"); err != nil {
			return back, warden.Errorf(warden.ENotFound, "the stash entry %q of snapshot %s is gone from %s: its commit %s no longer exists", st.Message, from.ID, repo.Top, short(st.Commit)).Wrap(err).
				WithHint("the repository's objects were pruned or rewritten")
		}
		msg := st.Message
		if msg == "" {
			msg = "restored by warden undo"
		}
		if _, err := git(ctx, r, repo.Top, ident(at), "stash", "store", "-q", "-m", msg, st.Commit); err != nil {
			return back, warden.Errorf(warden.EUnavailable, "could not store the stash entry %q of snapshot %s again in %s", st.Message, from.ID, repo.Top).Wrap(err).
				WithHint(fmt.Sprintf("`git stash store -m %q %s` stores it by hand", msg, st.Commit))
		}
		back = append(back, st)
	}
	return back, nil
}

// firstProtected is the first of paths that is, or lies under, one of
// protected (directories written with or without a trailing /), or "".
func firstProtected(paths, protected []string) string {
	for _, p := range paths {
		for _, q := range protected {
			q = strings.TrimSuffix(q, "/")
			if q != "" && (p == q || strings.HasPrefix(p, q+"/")) {
				return p
			}
		}
	}
	return ""
}

// short is a commit id's first twelve characters.
func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// CheckConfig refuses a repository whose own configuration (its
// .git/config, which an agent can write in a repository it made, such as
// one nested in the project) sets what would make a restore on the host
// run a program or write outside the work tree: a filter driver (run on
// every file git reads or writes), core.worktree, an include of another
// file, or per-worktree configuration. The project's own .git/config is
// read-only in warden's sandbox; a nested repository's is not. Settings
// in the user's global or system configuration are the user's and pass.
func CheckConfig(ctx context.Context, r Runner, repo Repo) error {
	names, err := git(ctx, r, repo.Top, nil, "config", "--local", "--list", "--name-only")
	if err != nil && exitOf(err) != 1 { // 1: no local config at all
		return warden.Errorf(warden.EUnavailable, "could not read the configuration of %s", repo.Top).Wrap(err)
	}
	for _, n := range strings.Split(names, "\n") {
		k := strings.ToLower(n)
		if k == "core.worktree" || k == "extensions.worktreeconfig" || strings.HasPrefix(k, "filter.") || strings.HasPrefix(k, "include.") || strings.HasPrefix(k, "includeif.") {
			return warden.Errorf(warden.EConflict, "the repository's own configuration (%s/config) sets %s, which an agent may have written, and which would make git run a program or write elsewhere during the restore", repo.GitDir, n).
				WithHint("look at it (`git config --local --list`); if you set it yourself, run warden undo --trust-repo-config")
		}
	}
	return nil
}
