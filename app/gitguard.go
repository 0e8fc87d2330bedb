package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/safedir"
	"github.com/agentwarden/warden/nestedgit"
	"github.com/agentwarden/warden/sandbox"
)

// gitGuard is the sandbox's GitGuard: a nestedgit.Guard over the project
// (over each repository of a folder of projects), its baseline taken
// before the command runs, whose sweep takes what would run on the host
// out of every repository the command made or changed where git on the
// host enters, into warden's quarantine. Each repository it changed, or
// could not make safe, is a git_quarantined security event, and a warning
// of the run.
func (a *App) gitGuard(s *sandbox.Spec, nested bool) func() []string {
	if s.Quarantine == "" || s.Project == "" {
		return nil
	}
	roots := []string{s.Project}
	folder := false
	if _, err := os.Lstat(filepath.Join(s.Project, ".git")); err != nil {
		folder = true
		repos, _ := reposBelow(s.Project)
		roots = roots[:0]
		for _, r := range repos {
			roots = append(roots, filepath.Join(s.Project, r))
		}
	}
	// The work trees beside the project it may write (git worktree add
	// ../feature: nestedgit.Beside), and the directories this run makes for
	// them, empty until it runs, are entered by git on the host as the
	// project is.
	if st, err := os.Lstat(filepath.Join(s.Project, ".git")); err == nil && st.IsDir() {
		parent := filepath.Dir(s.Project)
		real, _ := filepath.EvalSymlinks(parent)
		for _, w := range s.ReadWrite {
			if (filepath.Dir(w) == parent || filepath.Dir(w) == real) && !strings.HasPrefix(filepath.Base(w), ".") {
				roots = append(roots, w)
			}
		}
	}
	// A linked worktree's main work tree, whose .git it may write
	// (linkedCommon): git on the host enters it as it does the project.
	// (The project's own guard follows its commondir into that .git, or
	// into a bare repository, as git does.)
	if common := nestedgit.CommonOf(s.Project); filepath.Base(common) == ".git" && slices.Contains(s.ReadWrite, common) {
		roots = append(roots, filepath.Dir(common))
	}
	if len(roots) == 0 && !nested {
		return nil
	}
	// In a folder of projects the command may write the whole folder, not
	// only the repository watched: a git directory it made beside one
	// (folder/build/gd, named by a .git file in the repository) is its
	// doing too.
	// Everything it may write counts: the workspace too (a git directory
	// made in ~/.warden/sandbox/files, named by a .git file in the
	// project, is its doing).
	writable := append(slices.Clone(s.ReadWrite), s.Project, s.Workspace)
	guards := make([]*nestedgit.Guard, 0, len(roots))
	newGuard := nestedgit.New
	if nested {
		newGuard = nestedgit.NewWithNested
	}
	for _, r := range roots {
		guards = append(guards, newGuard(r, writable, s.Quarantine))
	}
	if nested && folder {
		// A folder of projects: the repositories deeper than its
		// search of them (reposBelow) are nested in it too.
		guards = append(guards, nestedgit.NewWithNested(s.Project, writable, s.Quarantine))
	}
	if nested {
		a.notePendingGuards(guards) // a one-shot run's: its process may be killed first
	}
	return func() []string {
		var out []string
		for _, g := range guards {
			for _, f := range g.Sweep(a.Now()) {
				msg := f.String()
				out = append(out, msg)
				a.auditGitQuarantine(f, msg)
			}
		}
		return out
	}
}

// auditGitQuarantine records one finding as a git_quarantined event.
func (a *App) auditGitQuarantine(f nestedgit.Finding, msg string) {
	if a.Store == nil {
		return
	}
	sev := warden.SevWarn
	errText := ""
	if f.Err != nil {
		sev, errText = warden.SevError, f.Err.Error()
	}
	meta, _ := json.Marshal(map[string]any{"git_dir": f.GitDir, "via": f.Via, "keys": f.Keys, "hooks": f.Hooks, "whole": f.Whole, "moved_to": f.Moved, "error": errText})
	e := &warden.SecurityEvent{ID: NewID(), CreatedAt: a.Now(), Type: warden.EventGitQuarantined, Severity: sev}
	if err := appendEvent(context.Background(), a.Store, e, msg, meta); err != nil && a.Log != nil {
		a.Log.Warn("could not audit a git quarantine", "git_dir", f.GitDir, "err", warden.UserMessage(err))
	}
}

// writableGitConfig makes the project's own .git/config writable in spec,
// for git commands that write it (Decision.GitConfig), and reports whether
// it did: only in a writable project whose .git is a directory, where the
// config is one of the protected paths.
func writableGitConfig(s *sandbox.Spec) bool {
	if !s.ProjectWritable || s.Quarantine == "" {
		return false
	}
	if st, err := os.Lstat(filepath.Join(s.Project, ".git")); err != nil || !st.IsDir() {
		return false
	}
	cfg := filepath.Join(s.Project, ".git", "config")
	i := slices.Index(s.Protected, cfg)
	if i < 0 {
		return false
	}
	s.Protected = slices.Delete(slices.Clone(s.Protected), i, i+1)
	return true
}

// writableWorktrees keeps the git directories of the project's linked
// worktrees (from a linked worktree whose repository it may write, the
// other worktrees' in the common git directory), and the .git files of
// those beside it, out of spec's
// read-only paths, for a command that removes one
// (Decision.GitWorktrees), and reports whether there were any: only in a
// writable project with a GitGuard's quarantine, whose sweep after the run
// takes out what would run a program from one (config.worktree, a
// commondir moved), as from any git directory git on the host enters.
//
// With gitOnly (a line of git commands only, Decision.GitConfig), the other
// protected paths in the worktrees beside the project go too (their
// .claude/, .mcp.json…, checked out like any file): git worktree remove
// deletes them, and could not delete a read-only mount. git writes none of
// them but to check one out, which it does only in its own work tree.
func writableWorktrees(s *sandbox.Spec, gitOnly bool, removed, protected []string) bool {
	if !s.ProjectWritable || s.Quarantine == "" {
		return false
	}
	sep := string(filepath.Separator)
	worktrees := []string{filepath.Join(s.Project, ".git", "worktrees") + sep}
	own := "" // a linked worktree's own git directory keeps its protected paths
	if common := nestedgit.CommonOf(s.Project); common != "" && slices.Contains(s.ReadWrite, common) {
		// A linked worktree whose repository it may write (linkedCommon):
		// the other worktrees' git directories are in the common one.
		if gitDir, _ := nestedgit.GitDirs(s.Project); gitDir != "" {
			own = gitDir + sep
			worktrees = append(worktrees, filepath.Join(common, "worktrees")+sep)
		}
	}
	var beside []string // the worktrees beside the project it may write
	for _, wt := range nestedgit.Beside(s.Project) {
		if slices.Contains(s.ReadWrite, wt) {
			beside = append(beside, wt)
		}
	}
	// The worktrees kept inside the project (.worktrees/feature) keep the
	// project's protected paths too, and their directories, pinned on the
	// way to those, could not be removed either: in a line that removes
	// one by its name (with other commands too: echo x >> …/README.md &&
	// git worktree remove --force …), that one's own (the policy's paths
	// repeated in it, none of a git directory) are writable. A command
	// can write the registration and the .git file that make a directory
	// a worktree (red-team-23: .git itself, a package holding a file the
	// config includes): what lies there as the project's own stays.
	var within []string
	for _, wt := range nestedgit.Within(s.Project) {
		if slices.Contains(removed, wt) {
			within = append(within, wt)
		}
	}
	ownIn := func(p string) bool {
		return slices.ContainsFunc(within, func(wt string) bool {
			return slices.ContainsFunc(protected, func(pp string) bool {
				q := filepath.Join(wt, pp)
				if strings.HasSuffix(pp, "/") {
					q += "/"
				}
				return pp != ".git" && !strings.HasPrefix(pp, ".git/") && p == q
			})
		})
	}
	n := len(s.Protected)
	s.Protected = slices.DeleteFunc(slices.Clone(s.Protected), func(p string) bool {
		inWorktrees := slices.ContainsFunc(worktrees, func(w string) bool { return strings.HasPrefix(p, w) })
		return inWorktrees && (own == "" || !strings.HasPrefix(p, own)) || slices.ContainsFunc(beside, func(wt string) bool {
			return p == filepath.Join(wt, ".git") || gitOnly && strings.HasPrefix(p, wt+string(filepath.Separator))
		}) || ownIn(p)
	})
	return len(s.Protected) < n
}

// besideParents are the directories that hold the worktrees beside the
// project that spec may write: git removes a worktree's directory last,
// from there (Spec.EmptyDirsIn).
//
// made are the directories made for the worktrees the line adds
// (makeWorktrees), which git has not registered yet.
func besideParents(s *sandbox.Spec, made []string) []string {
	var out []string
	for _, wt := range append(nestedgit.Beside(s.Project), made...) {
		if dir := filepath.Dir(wt); slices.Contains(s.ReadWrite, wt) && !slices.Contains(out, dir) {
			out = append(out, dir)
		}
	}
	return out
}

// takeBackGitConfig judges the project's .git/config after git commands
// that could write it ran (writableGitConfig): a key that would run a
// program, which was not there before, puts the whole file back as it was
// (before), the command's version going to the quarantine; so does a
// config that is gone or is no file (removed, renamed away, a symlink the
// sweep took out), which the session's world would otherwise let a later
// command write anew. A config that stays is made a fresh file: the inode
// the run left there may be one a process in the world holds open for
// writing, or one with another name (freshen). It returns the run's
// warnings, and records each take-back as a git_quarantined event.
func (a *App) takeBackGitConfig(s sandbox.Spec, before []byte) []string {
	gitDir := filepath.Join(s.Project, ".git")
	// What could not be looked at or put back is recorded as an error, not
	// only printed: the config git on the host reads may now run programs.
	failed := func(msg string, keys []string, err error) []string {
		msg += ": " + err.Error() + "; look at " + gitDir + "/config before running git on the host"
		a.auditGitQuarantine(nestedgit.Finding{Repo: nestedgit.Repo{GitDir: gitDir, Via: "the project's own git directory, whose config the command's git wrote"}, Keys: keys, Whole: []string{"config"}, Err: err}, msg)
		return []string{msg}
	}
	// .git made unwritable by the command (chmod 000 .git) is its owner's
	// to write again first.
	project, err := safedir.Open(s.Project)
	if err != nil {
		return failed("warden could not look at "+gitDir+" after the command", nil, err)
	}
	dir, err := project.SubWritable(".git")
	project.Close()
	if err != nil {
		return failed("warden could not look at "+gitDir+" after the command", nil, err)
	}
	defer dir.Close()
	after, err := dir.ReadNoFollow("config", 1<<20)
	gone := errors.Is(err, fs.ErrNotExist)
	if gone && before == nil {
		return nil
	}
	var bad []string
	if err == nil {
		bad, err = nestedgit.NewKeysThatRun(before, after, gitDir, s.Project)
	}
	if err == nil && len(bad) == 0 {
		return freshen(dir, "config", after)
	}
	why := "it is not a file git reads"
	switch {
	case gone:
		why = "it is gone, and a later command could write a new one"
	case err == nil:
		why = "it sets " + strings.Join(bad, ", ") + ", which would run programs when git on the host reads it"
	}
	q := filepath.Join(s.Quarantine, a.Now().UTC().Format("20060102T150405.000000000Z")+"-"+strings.ReplaceAll(strings.TrimPrefix(gitDir, "/"), "/", "_")+"_config")
	msg := fmt.Sprintf("the command changed %s/config, and %s: ", gitDir, why)
	if !gone {
		if err := os.MkdirAll(s.Quarantine, 0o700); err != nil {
			return failed(msg+"it could not be moved out", bad, err)
		}
		if err := os.Rename(dir.Path()+"/config", q); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return failed(msg+"it could not be moved out", bad, err)
		}
		msg += "it was moved to " + q
	} else {
		q = ""
	}
	var putErr error
	if before != nil {
		if putErr = replaceWith(dir, "config", before, 0o644); putErr != nil {
			msg += "; the config as it was could not be put back: " + putErr.Error()
		} else {
			msg += ", and the config as it was before put back"
		}
	}
	a.auditGitQuarantine(nestedgit.Finding{Repo: nestedgit.Repo{GitDir: gitDir, Via: "the project's own git directory, whose config the command's git wrote"}, Keys: bad, Whole: []string{"config"}, Moved: q, Err: putErr}, msg)
	return []string{msg}
}

// replaceWith puts a new file holding data at name in d, by a rename over
// it: whatever was there (a file with other names, one a process holds
// open) is no longer name.
func replaceWith(d *safedir.Dir, name string, data []byte, perm os.FileMode) error {
	tmp := name + ".warden-" + NewID()
	if err := d.CreateNew(tmp, data, perm); err != nil {
		_ = os.Remove(d.Path() + "/" + tmp)
		return err
	}
	if err := os.Rename(d.Path()+"/"+tmp, d.Path()+"/"+name); err != nil {
		_ = os.Remove(d.Path() + "/" + tmp)
		return err
	}
	return nil
}

// maxFreshen bounds the entries freshenPaths looks at in one protected
// directory.
const maxFreshen = 4096

// freshenPaths makes each regular file at paths (absolute; a trailing
// slash marks a directory, whose tree is looked at) a fresh file with the
// same content (freshen). A one-shot run that could write a protected path
// (a git line's .git/config, the worktrees' beside the project) could
// have left there a file with another name (ln .git/config .git/x), or
// one a process in the session's world holds open for writing (moved over
// the path): the world keeps the path read-only, not the file, and that
// name or descriptor would still write it. Nothing is followed through a
// symlink. It returns what it found, as warnings.
func freshenPaths(paths []string) []string {
	var out []string
	for _, p := range paths {
		if rest, ok := strings.CutSuffix(p, "/"); ok {
			d, err := safedir.Open(rest)
			if err != nil {
				continue // missing, or not a directory: nothing to keep
			}
			seen := 0
			out = append(out, freshenBelow(d, rest, &seen, 0)...)
			d.Close()
			continue
		}
		d, err := safedir.Open(filepath.Dir(p))
		if err != nil {
			continue
		}
		if _, err := os.Lstat(d.Path() + "/" + filepath.Base(p)); err == nil {
			out = append(out, freshen(d, filepath.Base(p), nil)...)
		}
		d.Close()
	}
	return out
}

// freshenBelow is freshenPaths for the tree of the open directory d
// (named name in warnings).
func freshenBelow(d *safedir.Dir, name string, seen *int, depth int) []string {
	entries, err := d.List()
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if *seen++; *seen > maxFreshen {
			return append(out, "warden looked at no more than "+fmt.Sprint(maxFreshen)+" entries of "+name+" to make them files of their own")
		}
		switch {
		case e.Type().IsRegular():
			out = append(out, freshen(d, e.Name(), nil)...)
		case e.IsDir() && depth < 16:
			if sub, err := d.Sub(e.Name()); err == nil {
				out = append(out, freshenBelow(sub, filepath.Join(name, e.Name()), seen, depth+1)...)
				sub.Close()
			}
		}
	}
	return out
}

// freshen replaces the regular file name in d with a new file holding the
// same content (data, when the caller has read it), keeping its mode. It
// warns only where that mattered as far as can be seen: the file had
// another name (a hard link the command made); a descriptor a process
// holds cannot be seen, and is left writing a file that is no longer name.
func freshen(d *safedir.Dir, name string, data []byte) []string {
	st, err := os.Lstat(d.Path() + "/" + name)
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	linked := false
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
		linked = true
	}
	where := filepath.Join(d.Name(), name)
	if data == nil {
		if data, err = d.ReadNoFollow(name, 64<<20); err != nil {
			return []string{where + " could not be made a file of its own: " + err.Error()}
		}
	}
	if err := replaceWith(d, name, data, st.Mode().Perm()); err != nil {
		return []string{where + " could not be made a file of its own: " + err.Error()}
	}
	if linked {
		return []string{where + " had another name (a hard link) the command could write later; it is now a file of its own with the same content"}
	}
	return nil
}
