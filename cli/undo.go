package cli

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/undo"
)

// maxListedFiles bounds the files warden undo names after a restore.
const maxListedFiles = 20

func undoCmd(e *env) *cobra.Command {
	var list, trust, allowProtected bool
	c := &cobra.Command{
		Use:   "undo [ID]",
		Short: "Bring back uncommitted work an agent's command discarded",
		Long: `Before a command an agent runs through warden exec discards uncommitted work
(git reset --hard, git checkout -- FILE, git restore, git clean -f, git
switch --discard-changes), warden saves the work tree as a snapshot in the
repository (refs/warden/undo/ID). warden undo restores the newest snapshot of
the repository in the current directory, or snapshot ID (a unique prefix
will do), and says what it restored.

Nothing there now is lost: warden undo saves the work tree as it is as a
snapshot of its own first, so running warden undo again undoes the undo.
The files are made to match the snapshot (what it lacks is removed, ignored
files are left alone), the index is restored with them, and HEAD stays
where it is (warden undo says where it was). With --list it lists the
repository's snapshots, newest first, and changes nothing.

warden undo runs git in the repository, as you would, with core.fsmonitor
and hooks off. It refuses a repository whose own .git/config sets a filter
driver, core.worktree or an include (an agent can write the config of a
repository it made) unless --trust-repo-config says you set them, and a
snapshot that would change a protected path (sandbox.protected_paths: an
agent host's settings, .warden.yaml; an agent can write a snapshot of its
own) unless --allow-protected says you trust it. It needs
no warden home, and records what it restored in the audit log when there
is one.`,
		Example: `  warden undo --list
  warden undo
  warden undo 20261128-031200`,
		Args: rangeArgs(0, 1, "at most one snapshot ID"),
		RunE: func(c *cobra.Command, args []string) error {
			dir := e.dir
			if dir == "" {
				var err error
				if dir, err = os.Getwd(); err != nil {
					return warden.Errorf(warden.EInvalid, "find the current directory").Wrap(err)
				}
			}
			ctx := c.Context()
			git := undo.Host{}
			repo, err := undo.Open(ctx, git, dir)
			if err != nil {
				return err
			}
			if list {
				if len(args) > 0 {
					return usageError(c, "--list takes no snapshot ID")
				}
				return listSnapshots(e, git, repo, c)
			}
			id := ""
			if len(args) > 0 {
				id = args[0]
			}
			from, err := undo.Find(ctx, git, repo, id)
			if err != nil {
				return err
			}
			if !trust {
				if err := undo.CheckConfig(ctx, git, repo); err != nil {
					return err
				}
			}
			var rnd [4]byte
			_, _ = rand.Read(rnd[:])
			now := time.Now()
			var protected []string
			if !allowProtected {
				protected = config.DefaultProtectedPaths
				if _, p, err := e.policy(); err == nil {
					protected = p.Sandbox.ProtectedPaths
				}
			}
			res, err := undo.Restore(ctx, git, repo, from, undo.NewID(now, rnd), now, protected)
			if err != nil {
				return err
			}
			reportRestored(e, repo, res)
			if len(res.Changed) > 0 || res.Index || len(res.Stashes) > 0 || len(res.Branches) > 0 {
				meta, _ := json.Marshal(map[string]any{"repository": repo.Top, "snapshot": from.ID, "commit": from.Commit,
					"saved": res.Saved.ID, "files": len(res.Changed), "index": res.Index, "stashes": len(res.Stashes), "branches": len(res.Branches)})
				summary := fmt.Sprintf("warden undo restored snapshot %s in %s (%d files, %d stash entries, %d branches); what was there is snapshot %s", from.ID, repo.Top, len(res.Changed), len(res.Stashes), len(res.Branches), res.Saved.ID)
				if err := e.event(ctx, warden.EventWorkRestored, warden.SevInfo, summary, meta); err != nil {
					fmt.Fprintf(e.stderr, "warden: the restore is done, but it could not be recorded in the audit log: %s\n", warden.UserMessage(err))
				}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&list, "list", false, "list the snapshots of this repository, newest first, and change nothing")
	c.Flags().BoolVar(&allowProtected, "allow-protected", false, "restore even the protected paths (sandbox.protected_paths: .claude/, .warden.yaml…) the snapshot changes (you took it, or looked at it)")
	c.Flags().BoolVar(&trust, "trust-repo-config", false, "restore even though the repository's own config sets a filter, core.worktree or an include (set them yourself)")
	return c
}

// listSnapshots prints repo's snapshots, newest first.
func listSnapshots(e *env, git undo.Runner, repo undo.Repo, c *cobra.Command) error {
	snaps, err := undo.List(c.Context(), git, repo)
	if err != nil {
		return err
	}
	if len(snaps) == 0 {
		fmt.Fprintf(e.stdout, "no warden snapshot in %s\n", repo.Top)
		return nil
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tTAKEN (UTC)\tSAVED")
	for _, s := range snaps {
		taken, what := "?", s.Subject()
		if s.Time.IsZero() {
			what = "(its commit is gone: it can no longer be restored)"
		} else {
			taken = s.Time.UTC().Format("2006-01-02 15:04:05")
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", oneLine(s.ID), taken, oneLine(what))
	}
	return w.Flush()
}

// reportRestored says what a restore did. A snapshot's facts (its
// commit message) and the file names are an agent's to choose: they are
// printed through oneLine, which shows terminal controls instead of
// sending them.
func reportRestored(e *env, repo undo.Repo, r undo.Restored) {
	from := r.From
	for _, st := range r.Stashes {
		fmt.Fprintf(e.stdout, "stored the stash entry %s (%s) of snapshot %s again: `git stash list` shows it\n", short(st.Commit), oneLine(st.Message), oneLine(from.ID))
	}
	for _, b := range r.Branches {
		fmt.Fprintf(e.stdout, "made the branch %s of snapshot %s again, at %s\n", oneLine(strings.TrimPrefix(b.Ref, "refs/heads/")), oneLine(from.ID), short(b.Commit))
	}
	if len(r.Changed) == 0 && !r.Index {
		fmt.Fprintf(e.stdout, "the work tree of %s already matches snapshot %s: nothing to restore\n", repo.Top, oneLine(from.ID))
		return
	}
	fmt.Fprintf(e.stdout, "restored snapshot %s (taken %s UTC, %s) in %s: %d files\n",
		oneLine(from.ID), from.Time.UTC().Format("2006-01-02 15:04:05"), oneLine(from.Subject()), repo.Top, len(r.Changed))
	for i, p := range r.Changed {
		if i == maxListedFiles {
			fmt.Fprintf(e.stdout, "  … and %d more\n", len(r.Changed)-i)
			break
		}
		fmt.Fprintf(e.stdout, "  %s\n", oneLine(p))
	}
	if r.Index {
		fmt.Fprintln(e.stdout, "the index (what was staged) is restored too")
	}
	if r.Saved.ID != "" {
		fmt.Fprintf(e.stdout, "what was there before is saved as snapshot %s: `warden undo %s` brings it back\n", r.Saved.ID, r.Saved.ID)
	}
	if r.Head != "" && from.Head != "" {
		where := from.Head
		if from.Branch != "" {
			where += " (" + oneLine(from.Branch) + ")"
		}
		fmt.Fprintf(e.stdout, "note: HEAD is at %s now and was at %s when the snapshot was taken; warden undo leaves HEAD alone (`git reset --soft %s` moves it back)\n",
			short(r.Head), where, short(from.Head))
	}
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
