//go:build amd64 || arm64

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agentwarden/warden/internal/pyimport"
	"github.com/agentwarden/warden/internal/safedir"
	"github.com/agentwarden/warden/nestedgit"
)

// complement lists what to grant so that everything beneath root can be
// read except the excluded paths: full are the entries whose whole tree is
// readable, list the directories on the way to an excluded path, which may
// only be listed. A directory on the way to an excluded path that cannot
// be listed is not granted at all.
func complement(root string, excluded []string) (full, list []string) {
	root = filepath.Clean(root)
	var ex []string
	for _, e := range excluded {
		if e = filepath.Clean(e); within(e, root) {
			ex = append(ex, e)
		}
	}
	var walk func(dir string)
	walk = func(dir string) {
		if slices.Contains(ex, dir) {
			return
		}
		if !slices.ContainsFunc(ex, func(e string) bool { return within(e, dir) }) {
			full = append(full, dir)
			return
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			// It holds an excluded path, and what else it holds cannot be
			// told: grant none of it (the fail-closed side of a mask).
			return
		}
		list = append(list, dir)
		for _, e := range entries {
			walk(filepath.Join(dir, e.Name()))
		}
	}
	walk(root)
	return full, list
}

// protectedPaths splits the protected paths of s that lie in a writable
// directory: those that exist get a read-only mount of their own (out);
// those that do not are swept after the run
// (sweep): whatever the command created there is moved out of the project
// (sweepCreated). No placeholder is left in the project, which tools such
// as git stash -u would trip over. Without a mount namespace nothing can be
// mounted read-only, which the warning says; missing paths are still swept.
func protectedPaths(s *Spec, writable []string, mode Mode) (out, sweep, warn []string, err error) {
	var unprotected []string
	for _, raw := range s.Protected {
		p := filepath.Clean(raw)
		if !filepath.IsAbs(p) {
			return nil, nil, nil, fmt.Errorf("protected path %q is not absolute", raw)
		}
		if !slices.ContainsFunc(writable, func(w string) bool { return w != "" && within(p, w) && p != w }) {
			continue
		}
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			// Its parent may be missing too (a hooks directory
			// .husky/_ in a project without .husky): the command can
			// make both, so it is swept all the same.
			sweep = append(sweep, realPathOf(p))
			continue
		} else if errors.Is(err, syscall.ENOTDIR) {
			// A file on the way (a git worktree's or submodule's .git is a
			// file): the path can only appear if the command puts a
			// directory there, and then it is swept.
			sweep = append(sweep, realPathOf(p))
			continue
		} else if err != nil {
			return nil, nil, nil, fmt.Errorf("protected path %s: %w", p, err)
		}
		if !mode.Namespaces() {
			unprotected = append(unprotected, p)
			continue
		}
		out = append(out, p)
	}
	if len(unprotected) > 0 {
		warn = append(warn, "without a mount namespace these protected paths cannot be kept read-only: "+strings.Join(unprotected, ", "))
	}
	return out, sweep, warn, nil
}

// pinnedAncestors are the directories between a writable directory and
// each of protected that lies in it (the project's .git for .git/config,
// .git/modules/NAME for a submodule's config), shallowest first. Each is
// bind-mounted onto itself, writable as before: a mount point cannot be
// renamed or removed, so a command cannot move .git aside, make a new
// .git, and write a config there that no mount covers.
func pinnedAncestors(protected, writable []string) []string {
	var out []string
	for _, p := range protected {
		root := ""
		for _, w := range writable {
			if w != "" && within(p, w) && p != w && len(w) > len(root) {
				root = w
			}
		}
		if root == "" {
			continue
		}
		var chain []string
		for a := filepath.Dir(p); a != root && within(a, root) && a != filepath.Dir(a); a = filepath.Dir(a) {
			chain = append(chain, a)
		}
		slices.Reverse(chain)
		for _, a := range chain {
			st, err := os.Lstat(a)
			if err != nil || !st.IsDir() {
				break // missing, or a symlink or file: nothing beneath to pin
			}
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return strings.Count(a, "/") - strings.Count(b, "/") })
	return out
}

// realPathOf is where p really is: its nearest existing ancestor resolved,
// the rest of its names after it. The sweep walks this path, on which
// nothing was a symlink when the run started.
func realPathOf(p string) string {
	rest := ""
	for a := p; ; a = filepath.Dir(a) {
		if _, err := os.Lstat(a); err == nil || a == filepath.Dir(a) {
			if r, err := filepath.EvalSymlinks(a); err == nil {
				return filepath.Join(r, rest)
			}
			return p
		}
		rest = filepath.Join(filepath.Base(a), rest)
	}
}

// sweepCreated moves out of the way what the command created at each of
// paths (where they really were when the run started: realPathOf): into
// quarantine when it is set (under a name that says when), else it is
// removed. It returns a warning for each, naming where it went.
//
// It runs unconfined, so it never follows a symlink the command made: it
// walks each path from the root, and what it moves is the path itself or,
// where the command put a symlink on the way (a .git that leads to the
// home, or to a git directory of its own in a tool cache), that symlink:
// never what a symlink leads to. It acts through the descriptor of the
// directory that holds it (safedir), opened without following a symlink.
func sweepCreated(paths []string, quarantine string, now time.Time) []string {
	var warn []string
	for _, p := range expandModuleSweeps(paths) {
		target := createdOn(p)
		if target == "" {
			continue
		}
		if st, err := os.Lstat(target); err == nil && st.IsDir() && filepath.Base(target) == ".git" && filepath.Base(p) == ".git" {
			continue // a repository the command made: its config and hooks are judged below
		}
		if gitDir, ok := madeGitDir(target); ok && quarantine != "" {
			// A repository the command made (git init in a fresh
			// project) keeps what git init and git config write, its
			// inert keys (a remote, a branch, a user), as a nested one
			// does; what would run programs goes to the quarantine.
			f := nestedgit.Neutralize(gitDir, filepath.Dir(gitDir), quarantine, now)
			if f.Moved != "" || f.Err != nil {
				warn = append(warn, f.String())
			}
			continue
		}
		dir, err := safedir.Open(filepath.Dir(target))
		if err != nil {
			warn = append(warn, fmt.Sprintf("the command changed the way to %s, which the sandbox protects, while it was being swept: %v", p, err))
			continue
		}
		src := dir.Path() + "/" + filepath.Base(target)
		if _, err := os.Lstat(src); err != nil {
			dir.Close()
			continue
		}
		if quarantine != "" {
			dst := filepath.Join(quarantine, now.UTC().Format("20060102T150405.000000000Z")+"-"+strings.ReplaceAll(strings.TrimPrefix(target, "/"), "/", "_"))
			if err := os.MkdirAll(quarantine, 0o700); err == nil {
				if err := os.Rename(src, dst); err == nil {
					dir.Close()
					warn = append(warn, fmt.Sprintf("the command created %s, which the sandbox protects; it was moved to %s", target, dst))
					continue
				}
			}
		}
		err = os.RemoveAll(src)
		dir.Close()
		if err != nil {
			warn = append(warn, fmt.Sprintf("the command created %s, which the sandbox protects, and it could not be removed: %v", target, err))
			continue
		}
		warn = append(warn, fmt.Sprintf("the command created %s, which the sandbox protects; it was removed", target))
	}
	return warn
}

// madeGitDir reports whether target, a protected path the command made
// (createdOn: no symlink on the way), is the config or hooks of a git
// directory .git (git init makes both; a config.worktree, which no
// repository needs, is moved out whole), and returns that directory. A git directory that was there before keeps its
// protected paths as mounts; one made in this run is judged as a nested
// repository is.
func madeGitDir(target string) (string, bool) {
	gitDir, name := filepath.Dir(target), filepath.Base(target)
	if filepath.Base(gitDir) != ".git" || (name != "config" && name != "hooks") {
		return "", false
	}
	if _, err := os.Lstat(filepath.Join(gitDir, "HEAD")); err != nil {
		return "", false
	}
	return gitDir, true
}

// createdOn is what to sweep for the protected path p (a real path at the
// run's start): p itself when it exists now, or the first name on the way
// to it that is now a symlink; "" when neither (nothing was created, or a
// file on the way, a worktree's .git, keeps p from existing).
func createdOn(p string) string {
	cur := "/"
	for _, name := range strings.Split(strings.TrimPrefix(filepath.Clean(p), "/"), "/") {
		next := filepath.Join(cur, name)
		st, err := os.Lstat(next)
		if err != nil {
			return ""
		}
		if st.Mode()&os.ModeSymlink != 0 || next == p {
			return next
		}
		if !st.IsDir() {
			return ""
		}
		cur = next
	}
	return ""
}

// moduleSweepMark separates, in a Sweep entry that stands for the Python
// modules a command adds to a directory (Spec.ModuleDirs), the directory
// from the importable entries it held at the start (NUL-separated). No
// path holds a NUL, so no other entry is read as one.
const moduleSweepMark = "\x00modules\x00"

// moduleSweeps are the Sweep entries of dirs that lie in a writable
// directory, each with what it held at the start (importable).
func moduleSweeps(dirs, writable []string) []string {
	var out []string
	for _, d := range dirs {
		d = filepath.Clean(d)
		if !filepath.IsAbs(d) || !slices.ContainsFunc(writable, func(w string) bool { return w != "" && within(d, w) }) {
			continue
		}
		d = realPathOf(d)
		out = append(out, d+moduleSweepMark+strings.Join(importable(d), "\x00"))
	}
	return out
}

// expandModuleSweeps replaces each module-sweep entry of paths by the
// importable entries its directory holds now that it did not hold at the
// start; other paths are kept as they are.
func expandModuleSweeps(paths []string) []string {
	if !slices.ContainsFunc(paths, func(p string) bool { return strings.Contains(p, moduleSweepMark) }) {
		return paths
	}
	var out []string
	for _, p := range paths {
		dir, before, ok := strings.Cut(p, moduleSweepMark)
		if !ok {
			out = append(out, p)
			continue
		}
		had := map[string]bool{}
		for _, e := range strings.Split(before, "\x00") {
			had[e] = true
		}
		for _, e := range importable(dir) {
			if !had[e] {
				out = append(out, filepath.Join(dir, e))
			}
		}
	}
	return out
}

// importable lists, relative to dir, what Python would import a module
// from there (pyimport): its module files, the initialisation file of each
// package directory in it ("NAME/__init__.py"), and each symlink named as
// a module (NAME, which may lead to a package). It reads dir through its
// descriptor and follows no symlink; a directory it cannot read holds
// nothing here.
func importable(dir string) []string {
	d, err := safedir.Open(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	entries, err := os.ReadDir(d.Path())
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case pyimport.ModuleFile(name):
			out = append(out, name)
		case !pyimport.ModuleFile(name + ".py"):
			// not a module name
		case e.Type()&os.ModeSymlink != 0:
			out = append(out, name)
		case e.IsDir():
			inits, err := os.ReadDir(d.Path() + "/" + name)
			if err != nil {
				continue
			}
			for _, f := range inits {
				if pyimport.PackageInit(f.Name()) {
					out = append(out, name+"/"+f.Name())
				}
			}
		}
	}
	return out
}
