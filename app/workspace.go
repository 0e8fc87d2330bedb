package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/fsguard"
	"github.com/agentwarden/warden/internal/pyimport"
	"github.com/agentwarden/warden/internal/regfile"
	"github.com/agentwarden/warden/nestedgit"
	"github.com/agentwarden/warden/sandbox"
)

// QuarantineDir is the directory in warden's home where what a sandboxed
// command created in a protected path of the project is moved.
const QuarantineDir = "quarantine"

// workspaceSpec fills in what a profile with read_all asks for: the whole
// filesystem readable but the masks, the project writable (but its
// protected paths), the tool caches writable, Unix sockets of its own, and
// the session's /tmp. A project that is the user's home, an ancestor of it,
// or a system directory stays read-only: a writable home would let a
// command rewrite the user's shell startup files.
func (a *App) workspaceSpec(s *sandbox.Spec, prof config.SandboxProfile, userHome string, who *warden.Request) error {
	sp := a.Policy.Sandbox
	if prof.ReadAll {
		s.ReadAll, s.UserHome = true, userHome
	}
	// The tool caches are writable where the project is: what builds it
	// (the guard profile reads everything but writes no cache).
	programs := programDirs(userHome, os.Getenv("PATH"))
	if prof.ReadAll && s.ProjectWritable {
		for _, c := range homePaths(sp.CachePaths, userHome) {
			makeCache(c, userHome)
			if st, err := os.Stat(c); err == nil && st.IsDir() && !holdsProgramDir(c, programs) {
				s.ReadWrite = append(s.ReadWrite, c)
			}
		}
	}
	// The project, not the command's working directory: run from a
	// subdirectory, the work tree's .git/config is still the one protected.
	if s.ProjectWritable && (!projectMayBeWritten(s.Project, userHome, a.Home.Abs()) || inProgramDir(s.Project, programs)) {
		s.ProjectWritable = false
	}
	var paths []string
	var named []configNamed // what git's configuration names, wherever it lies
	if s.ProjectWritable {
		s.Quarantine = filepath.Join(a.Home.Abs(), QuarantineDir)
		var complete bool
		named, complete = gitConfigNamed(context.Background(), s.Project, userHome)
		if why := exposedBy(named, complete, s.Project); why != "" {
			// What such a program loads cannot be listed (runsWorkTreeCode):
			// the work tree stays read-only as a whole.
			s.ProjectWritable = false
			s.Notes = append(s.Notes, "the project is read-only here: git on your machine runs code of this work tree by itself ("+why+"), so a change the command made could run there at your next git status or git diff; point that setting at a program installed outside the project to let commands write it (warden status says so too)")
			// The tool caches stay writable: what it names there stays
			// read-only all the same.
			s.Protected = append(s.Protected, namedWritable(s.Project, named, s.ReadWrite)...)
		}
	}
	if s.ProjectWritable {
		paths = repoProtectedNamed(s.Project, sp.ProtectedPaths, named)
		// Each repository in the project keeps its protected paths, as it
		// would as the project: in a folder of projects (a working
		// directory above several repositories), and in a project that is
		// a repository itself (a folder an agent ran git init in, an
		// umbrella repository with others cloned inside: red-team-20). A
		// folder of projects too large to search stays read-only; a
		// repository's own paths are kept whatever its size.
		repos, ok := reposBelow(s.Project)
		_, gerr := os.Lstat(filepath.Join(s.Project, ".git"))
		if gerr != nil && !ok {
			s.ProjectWritable = false
		}
		// What the configuration of a work tree above the project names
		// inside it (the project a repository nested in another, by git
		// init in a package or a clone inside: git on the host run from
		// the outer one obeys and runs those files too; red-team-21).
		paths = append(paths, namedFromAbove(s.Project, userHome)...)
		for _, repo := range repos {
			abs := filepath.Join(s.Project, repo)
			// What its configuration names (an included file, in its git
			// directory or not, a script core.fsmonitor runs) stays
			// read-only wherever it lies: git on the host obeys and runs
			// it when the user enters the repository (red-team-22).
			// Relative to the project: what it names may lie outside
			// the repository (an include of ../../conf/lib.cfg).
			inRepo, _ := gitConfigNamed(context.Background(), abs, userHome)
			paths = namedInside(s.Project, inRepo, paths)
			named = append(named, inRepo...)
			own := protectedInGitDirs(abs, sp.ProtectedPaths)
			if gerr == nil && gitDirIsOthers(s.Project, abs) {
				// In a project that is a repository, one inside it whose
				// git directory is its own .git directory keeps only the
				// paths outside it: that directory's config and hooks
				// are the nested repositories' guard's (NestedGit, the
				// sweep), and a test fixture's git commands in it must
				// still work. A linked worktree of the project's own
				// repository has its git directory protected as the
				// project's (and git worktree remove must still remove
				// it). A .git file leading elsewhere keeps everything.
				own = slices.DeleteFunc(slices.Clone(sp.ProtectedPaths), func(p string) bool { return p == ".git" || strings.HasPrefix(p, ".git/") })
			} else {
				own = append(own, gitDirElsewhere(s.Project, abs, sp.ProtectedPaths)...)
			}
			for _, p := range own {
				q := filepath.Join(repo, p)
				if strings.HasSuffix(p, "/") {
					q += "/"
				}
				paths = append(paths, q)
			}
		}
	}
	if s.ProjectWritable {
		// The same paths of a git directory stay read-only in every
		// repository nested in the project (the sandbox finds them as it
		// starts): git on the host runs a clone's config there too, when
		// an editor or a shell prompt enters it.
		for _, p := range sp.ProtectedPaths {
			if name, ok := strings.CutPrefix(p, ".git/"); ok && name != "" {
				s.NestedGit = append(s.NestedGit, name)
			}
		}
		for _, p := range paths {
			abs := filepath.Join(s.Project, p)
			if strings.HasSuffix(p, "/") {
				abs += "/"
			}
			s.Protected = append(s.Protected, abs)
		}
		// The repository's linked worktrees beside the project (git
		// worktree add ../feature) are its work too: each is writable,
		// with the same paths protected as in the project.
		var beside []string
		if topProject(*s) {
			beside = nestedgit.Beside(s.Project)
		}
		for _, wt := range beside {
			if !besideMayBeWritten(wt, userHome, a.Home.Abs(), programs) {
				continue
			}
			s.ReadWrite = append(s.ReadWrite, wt)
			for _, p := range repoProtected(wt, sp.ProtectedPaths, userHome) {
				abs := filepath.Join(wt, p)
				if strings.HasSuffix(p, "/") {
					abs += "/"
				}
				s.Protected = append(s.Protected, abs)
			}
		}
		// A linked worktree (Claude Code's --worktree, or git worktree
		// add) commits into its repository's common git directory (the
		// main work tree's .git, or a bare repository): that is writable,
		// with the paths protected there as in the main work tree; the
		// main work tree's files stay read-only.
		if common := linkedCommon(*s, userHome, a.Home.Abs(), programs); common != "" {
			s.ReadWrite = append(s.ReadWrite, common)
			s.Protected = append(s.Protected, commonProtected(s.Project, common, sp.ProtectedPaths, userHome)...)
		}
		// What git's configuration names in a writable directory outside
		// the project (a script in a tool cache: a pre-commit or Poetry
		// environment in ~/.cache, a tool in ~/go/pkg/mod whose files are
		// read-only by mode only; a file it includes there) stays
		// read-only too: git on the host runs and obeys it at the user's
		// next git status (red-team-27).
		s.Protected = append(s.Protected, namedWritable(s.Project, named, s.ReadWrite)...)
		// Where a Python program git runs imports from first, and that
		// directory is not kept whole (the top, the git directory), a
		// module the command adds there is swept (red-team-27: a new
		// selectors.py at the top ran in place of the standard
		// library's when the monitor imported subprocess).
		for _, n := range named {
			if n.modules && !slices.Contains(s.ModuleDirs, n.path) {
				s.ModuleDirs = append(s.ModuleDirs, n.path)
			}
		}
		// A folder of the home the host runs programs from, inside the
		// project (~/go/bin in a project at ~/go), stays read-only: a
		// program planted there is run by the user's shell, unconfined.
		for _, p := range programs {
			if p != s.Project && inside(p, s.Project) {
				s.Protected = append(s.Protected, p+"/")
			}
		}
	}
	s.UnixSockets = prof.UnixSockets
	if prof.SessionTmp && who != nil && who.Session != "" {
		tmp, err := sessionTmp(a.Home, who.Session, a.Now())
		if err != nil {
			return warden.Errorf(warden.EUnavailable, "prepare the session's /tmp").Wrap(err)
		}
		s.Tmp = tmp
	}
	return nil
}

// repoProtected are the paths of the work tree root that stay read-only
// in a workspace sandbox, relative to it: the policy's protected paths,
// repeated in each git directory the repository keeps inside its own, what
// its git configuration names inside it, and its .git where that is a file
// or missing.
func repoProtected(root string, protected []string, userHome string) []string {
	named, _ := gitConfigNamed(context.Background(), root, userHome)
	return repoProtectedNamed(root, protected, named)
}

// repoProtectedNamed is repoProtected with what root's git configuration
// names already read (gitConfigNamed).
func repoProtectedNamed(root string, protected []string, named []configNamed) []string {
	paths := append(protectedInGitDirs(root, protected), namedInside(root, named, nil)...)
	if st, err := os.Lstat(filepath.Join(root, ".git")); err == nil && st.Mode().IsRegular() || errors.Is(err, fs.ErrNotExist) {
		// A linked worktree's or submodule's .git file names the git
		// directory git on the host uses there: rewritten, it would
		// lead host git to one the command made elsewhere. In a
		// project with no .git yet, a .git file the command makes
		// (git init --separate-git-dir ~/.cache/gd) is swept; a
		// .git directory it makes is a repository like a nested one.
		paths = append(paths, ".git")
	}
	return paths
}

// linkedCommon is the common git directory of s's project when the
// project is a linked worktree git links both ways (nestedgit.CommonOf),
// and that directory may be written as a project may (judged by the
// directory that holds it: the main work tree, or a bare repository's
// parent): not the home or above it, not in a hidden directory of the
// home, warden's home or a system directory, not in a folder the host runs
// programs from; and not already within what the command may write.
func linkedCommon(s sandbox.Spec, userHome, wardenHome string, programs []string) string {
	common := nestedgit.CommonOf(s.Project)
	if common == "" || !projectMayBeWritten(filepath.Dir(common), userHome, wardenHome) || inProgramDir(common, programs) {
		return ""
	}
	for _, w := range append([]string{s.Project, s.Workspace, s.Tmp}, s.ReadWrite...) {
		if w != "" && inside(common, w) {
			return ""
		}
	}
	return common
}

// commonProtected are the paths of a linked worktree's common git
// directory that stay read-only when it is writable, as absolute paths
// (directories with a trailing slash): the policy's protected paths under
// .git/ (config, config.worktree, commondir, hooks/), in it and in every
// git directory it keeps (each linked worktree's and submodule's), and
// what the repository's configuration names inside it (a file it
// includes, a hooks directory).
func commonProtected(project, common string, protected []string, userHome string) []string {
	var inGit []string
	for _, p := range protected {
		if rest, ok := strings.CutPrefix(p, ".git/"); ok && rest != "" {
			inGit = append(inGit, rest)
		}
	}
	var out []string
	for _, dir := range append([]string{common}, nestedgit.InsideGitDir(common)...) {
		for _, rest := range inGit {
			abs := filepath.Join(dir, rest)
			if strings.HasSuffix(rest, "/") {
				abs += "/"
			}
			out = append(out, abs)
		}
	}
	named, _ := gitConfigNamed(context.Background(), project, userHome)
	for _, n := range named {
		if !n.modules && n.path != common && inside(n.path, common) {
			if n.dir {
				out = append(out, n.path+"/")
			} else {
				out = append(out, n.path)
			}
		}
	}
	return out
}

// besideMayBeWritten reports whether a work tree beside the project (or a
// directory git worktree add makes there) may be writable: as a project
// may (not the home or above it, not a hidden directory of it, not
// warden's home, not a system directory), not a folder the host runs
// programs from or one holding one (~/bin, ~/go), and not a node_modules,
// which Node searches for packages from every project below it.
func besideMayBeWritten(dir, userHome, wardenHome string, programs []string) bool {
	base := filepath.Base(dir)
	return !strings.HasPrefix(base, ".") && base != "node_modules" &&
		projectMayBeWritten(dir, userHome, wardenHome) && !inProgramDir(dir, programs) && !holdsProgramDir(dir, programs)
}

// protectedInGitDirs is paths (relative to project) with each path under
// .git/ repeated for every other git directory the repository keeps inside
// its own: a submodule's (.git/modules/NAME, nested for submodules of
// submodules) and a linked worktree's (.git/worktrees/NAME). Git on the
// host reads each one's config and runs its hooks when it works in that
// submodule or worktree (git status in the superproject runs git in every
// submodule), so they are the same thing to protect as .git/config.
func protectedInGitDirs(project string, paths []string) []string {
	var inGit []string
	for _, p := range paths {
		if rest, ok := strings.CutPrefix(p, ".git/"); ok && rest != "" {
			inGit = append(inGit, rest)
		}
	}
	if len(inGit) == 0 {
		return paths
	}
	out := slices.Clone(paths)
	for _, dir := range nestedgit.InsideGitDir(filepath.Join(project, ".git")) {
		rel, err := filepath.Rel(project, dir)
		if err != nil {
			continue
		}
		for _, rest := range inGit {
			out = append(out, filepath.ToSlash(rel)+"/"+rest)
		}
	}
	return out
}

// namedFromAbove is what the git configuration of each work tree above
// project (a directory with a .git entry, up to the user's home or the
// root) names inside project, relative to it (gitConfigNamed).
func namedFromAbove(project, userHome string) []string {
	var out []string
	home := filepath.Clean(userHome)
	for d := filepath.Dir(filepath.Clean(project)); d != "/" && d != home && d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err != nil {
			continue
		}
		named, _ := gitConfigNamed(context.Background(), d, userHome)
		out = namedInside(project, named, out)
	}
	return out
}

// gitDirIsOthers reports whether the repository at repo, inside project
// (a repository), has its git directory kept by another guard than the
// project's protected paths: its own .git directory (NestedGit's), or the
// project's repository's, of which it is a linked worktree.
func gitDirIsOthers(project, repo string) bool {
	st, err := os.Lstat(filepath.Join(repo, ".git"))
	if err != nil {
		return false
	}
	if st.IsDir() {
		return true
	}
	_, common := nestedgit.GitDirs(repo)
	own, err := filepath.EvalSymlinks(filepath.Join(project, ".git"))
	return common != "" && err == nil && common == own
}

// gitDirElsewhere is, for a repository at repo whose .git is a file
// leading to a git directory elsewhere in project (gitdir: ../../.sdk-git),
// the protected paths of a git directory (.git/config, .git/hooks/…) in
// that one, relative to repo: git run there reads its config from it.
func gitDirElsewhere(project, repo string, protected []string) []string {
	if st, err := os.Lstat(filepath.Join(repo, ".git")); err != nil || st.IsDir() {
		return nil
	}
	gitDir, _ := nestedgit.GitDirs(repo)
	real, err := filepath.EvalSymlinks(project)
	if gitDir == "" || err != nil {
		return nil
	}
	rel, err := filepath.Rel(real, gitDir)
	if err != nil || rel == "." || rel == ".git" || rel == ".." || strings.HasPrefix(rel, "../") || strings.HasPrefix(rel, ".git/") {
		return nil
	}
	var out []string
	for _, p := range protected {
		if rest, ok := strings.CutPrefix(p, ".git/"); ok && rest != "" {
			if r, err := filepath.Rel(repo, filepath.Join(project, rel, rest)); err == nil {
				if strings.HasSuffix(rest, "/") {
					r += "/"
				}
				out = append(out, r)
			}
		}
	}
	return out
}

// gitConfigProtected is what the git configuration of the project and of
// the user names inside the project, relative to it (gitConfigNamed).
func gitConfigProtected(ctx context.Context, project, home string) []string {
	named, _ := gitConfigNamed(ctx, project, home)
	return namedInside(project, named, nil)
}

// namedInside adds to out each of named that lies inside project, relative
// to it (a directory with a trailing slash), once; a file in a directory
// named too is left to the directory.
func namedInside(project string, named []configNamed, out []string) []string {
	var dirs []string
	named = slices.DeleteFunc(slices.Clone(named), func(n configNamed) bool { return n.modules })
	for _, n := range named {
		if rel, err := filepath.Rel(project, n.path); n.dir && err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../") {
			dirs = append(dirs, n.path+"/")
		}
	}
	for _, n := range named {
		if !n.dir && slices.ContainsFunc(dirs, func(d string) bool { return strings.HasPrefix(n.path, d) }) {
			continue
		}
		rel, err := filepath.Rel(project, n.path)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		if n.dir {
			rel += "/"
		}
		if !slices.Contains(out, rel) {
			out = append(out, rel)
		}
	}
	return out
}

// namedWritable is each of named that lies strictly inside one of
// writable and outside project (which namedInside covers), as an absolute
// path (a directory with a trailing slash). A named directory that is a
// writable directory itself or holds one (a program directly in ~/.cache)
// is left out: its files named are kept one by one.
func namedWritable(project string, named []configNamed, writable []string) []string {
	var out []string
	for _, n := range named {
		if n.modules || inside(n.path, project) {
			continue
		}
		if !slices.ContainsFunc(writable, func(w string) bool { return n.path != w && inside(n.path, w) }) {
			continue
		}
		p := n.path
		if n.dir {
			p += "/"
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// gitNamedPath reports whether one of paths (absolute and clean: a path as
// named and where it really leads) lies where the git configuration of a
// work tree holding cwd or the path names (gitConfigNamed: its
// core.hooksPath directory, a file it includes), as named or where that
// really leads: the file tools' write there asks, as the sandbox keeps it
// read-only for the agent's commands. Every directory above them with a
// .git entry counts, not only the nearest: git passes over a .git that is
// not a repository (an empty directory a command made) to the one above.
// Where git could not read a configuration that names one, every write
// there asks.
func gitNamedPath(ctx context.Context, cwd string, paths []string) bool {
	var roots []string
	for _, start := range append([]string{cwd}, paths...) {
		for d := filepath.Clean(start); filepath.IsAbs(d); d = filepath.Dir(d) {
			if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil && !slices.Contains(roots, d) {
				roots = append(roots, d)
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	home, _ := os.UserHomeDir()
	for _, root := range roots {
		named, complete := gitConfigNamed(ctx, root, home)
		if !complete {
			return true // what it names is not known: the write asks
		}
		for _, n := range named {
			where := []string{n.path}
			if real, err := fsguard.RealPath(n.path); err == nil && real != n.path {
				where = append(where, real)
			}
			for _, w := range where {
				for _, p := range paths {
					if n.modules && addsModule(p, w) || !n.modules && (p == w || n.dir && strings.HasPrefix(p, w+string(filepath.Separator))) {
						return true
					}
				}
			}
		}
	}
	return false
}

// addsModule reports whether writing p may add a module Python imports
// from dir (a module file in it, a package's initialisation file, or an
// entry named as a module, which may become a package or a link to one).
func addsModule(p, dir string) bool {
	rel, ok := strings.CutPrefix(p, dir+string(filepath.Separator))
	if !ok {
		return false
	}
	first, rest, nested := strings.Cut(rel, string(filepath.Separator))
	if !nested {
		return pyimport.ModuleFile(first) || pyimport.ModuleFile(first+".py")
	}
	return pyimport.ModuleFile(first+".py") && pyimport.PackageInit(rest)
}

// configNamed is a path a git configuration names: a directory of hooks,
// or a file it includes.
type configNamed struct {
	path string
	dir  bool
	// exposes says how a program git runs by itself runs code of the
	// work tree at path (runsWorkTreeCode): the whole tree stays read-only.
	exposes string
	// modules marks a directory a Python program git runs imports from
	// first (sandbox.Spec.ModuleDirs): not kept read-only, but the
	// modules added to it are swept.
	modules bool
}

// gitConfigNamed is what the git configuration git reads in the work tree
// project names, as absolute paths: the directory core.hooksPath points
// at (husky's .husky/_, a tracked .githooks/), the files the
// configuration includes (include.path, includeIf.*.path, every condition
// taken as met), and what those files name in turn, and the files the
// programs it starts by itself are named by (core.fsmonitor = sh
// tools/fsmonitor.sh: commandPaths of gitNamingKeys). Git on the host runs
// those hooks at the user's next commit and obeys those files as it obeys
// .git/config, so a sandboxed command must not write them either. The
// configuration is the repository's (its common directory's config and
// the worktree's config.worktree: a linked worktree's git directory, or
// the main one's, wherever its .git leads; none where project is not in a
// repository), the user's and the system's. Git itself reads each configuration file (git config --file, which runs
// nothing), and only a file that mentions hookspath or an include is read.
//
// complete is false when a file that mentions one could not be read by
// git, or includes deeper than git goes: what it names is then not known.
func gitConfigNamed(ctx context.Context, project, home string) (out []configNamed, complete bool) {
	gitDir, common := nestedgit.GitDirs(project)
	complete = true
	// Each file is followed into the files it includes, as git does (to
	// git's depth of 10), the included ones' core.hooksPath and includes
	// too: a command could write the second file of a chain as well as
	// the first.
	type configFile struct {
		path  string
		depth int
	}
	var files []configFile
	if gitDir != "" {
		files = append(files, configFile{filepath.Join(common, "config"), 0}, configFile{filepath.Join(gitDir, "config.worktree"), 0})
	}
	// Outside a repository, the user's and the system's: git reads them in
	// every repository the user enters (a program they name in a tool
	// cache runs at the user's git status anywhere).
	if home != "" {
		xdg := os.Getenv("XDG_CONFIG_HOME")
		if xdg == "" {
			xdg = filepath.Join(home, ".config")
		}
		files = append(files, configFile{filepath.Join(home, ".gitconfig"), 0}, configFile{filepath.Join(xdg, "git", "config"), 0})
	}
	files = append(files, configFile{"/etc/gitconfig", 0})
	expand := func(v, base string) string {
		switch {
		case v == "~" || strings.HasPrefix(v, "~/"):
			if home == "" {
				return ""
			}
			return filepath.Join(home, v[1:])
		case filepath.IsAbs(v):
			return v
		}
		return filepath.Join(base, v)
	}
	seen := map[string]bool{}
	for len(files) > 0 {
		f := files[0]
		files = files[1:]
		if seen[f.path] {
			continue
		}
		seen[f.path] = true
		// Never waiting on a FIFO a command left there.
		data, err := regfile.ReadFile(f.path, maxConfigFile)
		if err != nil {
			continue
		}
		low := bytes.ToLower(data)
		if !slices.ContainsFunc(gitNamingWords, func(w string) bool { return bytes.Contains(low, []byte(w)) }) {
			continue
		}
		kvs, read := gitConfigEntries(ctx, data)
		if !read {
			complete = false
		}
		for _, kv := range kvs {
			switch {
			case kv[0] == "core.hookspath" && kv[1] != "":
				// Relative to where hooks run: the top of the work tree.
				if p := expand(kv[1], project); p != "" {
					out = append(out, configNamed{path: filepath.Clean(p), dir: true})
				}
			case kv[0] == "include.path" || strings.HasPrefix(kv[0], "includeif.") && strings.HasSuffix(kv[0], ".path"):
				// Relative to the file that includes it.
				p := expand(kv[1], filepath.Dir(f.path))
				if p == "" {
					continue
				}
				p = filepath.Clean(p)
				out = append(out, configNamed{path: p, dir: false})
				if f.depth+1 < maxIncludeDepth {
					files = append(files, configFile{p, f.depth + 1})
				} else {
					complete = false // deeper than git goes: git refuses it, warden asks
				}
			default:
				// A program git runs by itself (core.fsmonitor at git
				// status, a textconv at git diff…), from the top of the
				// work tree: a file the command names there runs on the
				// host as a hook does.
				if why := runsWorkTreeCode(kv[0], kv[1], project); why != "" {
					out = append(out, configNamed{path: filepath.Clean(project), dir: true, exposes: kv[0] + " = " + kv[1] + ": " + why})
				}
				named, ok := commandPaths(kv[1])
				if !ok {
					complete = false // not shell: what it runs is not known
				}
				for _, w := range named {
					if p := expand(w, project); p != "" {
						if strings.HasSuffix(w, "/") { // PYTHONPATH=lib
							out = append(out, configNamed{path: filepath.Clean(p), dir: true})
							continue
						}
						module := slices.Contains(strings.Fields(kv[1]), "-m") // python -m tools.fsmon
						matches := []string{filepath.Clean(p)}
						if strings.ContainsAny(p, "*?[") {
							// A glob the shell expands when git runs it
							// (red-team-28: a Poetry environment's
							// app-*-py3.11): what it matches now, and
							// the pattern itself, swept if made.
							found, _ := filepath.Glob(p)
							matches = append(matches, found...)
						}
						for _, m := range matches {
							out = append(out, programFiles(m, project, home, module)...)
						}
					}
				}
			}
		}
	}
	return out, complete
}

// programFiles are what a program file p that git runs by itself (from
// top, the work tree's top) consists of: p and what it loads (loadedBy),
// each as its directory where that is not the top (a program's directory
// is its code: its modules and their compiled caches, plugins it loads by
// name, files it reads and runs, all of which a static reading misses:
// red-team-26), and the packages of node_modules its JavaScript requires
// by name. A module run with python -m (module) looks its imports up from
// the top first. At the top, where a directory would be the whole
// project, the files alone. Outside the work tree, its directory too (a
// script in a tool cache: namedWritable keeps it where the sandbox could
// write it).
func programFiles(p, top, home string, module bool) []configNamed {
	top = filepath.Clean(top)
	gitDir := top + "/.git"
	var out []configNamed
	add := func(f string) {
		if dir := filepath.Dir(f); !inside(dir, top) || dir != top && dir != gitDir && !strings.HasPrefix(dir, gitDir+"/") {
			out = append(out, configNamed{path: dir, dir: true})
		}
		// The file too: where the project is that directory (a
		// repository in a package of the one whose config names it),
		// the file alone is the project's to keep (namedInside).
		out = append(out, configNamed{path: f, dir: false})
	}
	add(p)
	if venv := venvOf(p); venv != "" {
		// A virtual environment's interpreter loads the environment's
		// site-packages, whose .pth files run code at every start:
		// the environment is the program as much as its interpreter.
		out = append(out, configNamed{path: venv, dir: true})
	}
	if dir := pythonPathDir(p, top, module); dir != "" {
		// Not kept whole, as that would be the project or its git
		// directory: the modules added to it are swept, and its
		// compiled modules are kept (a .pyc of a module it imports
		// from there runs in its place when its header matches).
		out = append(out, configNamed{path: dir, modules: true}, configNamed{path: filepath.Join(dir, "__pycache__"), dir: true})
	}
	files, named, packages := loadedBy(p, top, home, module)
	for _, f := range files {
		add(f)
	}
	// A file it names is kept alone: its directory may be the tree the
	// program watches, the agent's work.
	for _, f := range named {
		out = append(out, configNamed{path: f, dir: false})
	}
	for _, pkg := range packages {
		out = append(out, configNamed{path: pkg, dir: true})
	}
	return out
}

// venvOf is the Python virtual environment whose interpreter p is (a
// program in its bin directory, beside which pyvenv.cfg lies), or "".
func venvOf(p string) string {
	bin := filepath.Dir(p)
	if b := filepath.Base(bin); b != "bin" && b != "Scripts" {
		return ""
	}
	venv := filepath.Dir(bin)
	if st, err := os.Lstat(filepath.Join(venv, "pyvenv.cfg")); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return venv
}

// pythonPathDir is the directory a Python program p that git runs from
// top imports its modules from first (top for a module python -m runs,
// the script's own directory for a script), where programFiles keeps no
// directory whole: the top itself, or the git directory and those below
// it. "" for any other program, or directory.
func pythonPathDir(p, top string, module bool) string {
	dir := top
	if !module {
		data, err := regfile.ReadFile(p, maxSourcedScript)
		if err != nil || scriptKind(p, data) != "python" {
			return ""
		}
		dir = filepath.Dir(p)
	}
	if gitDir := filepath.Join(top, ".git"); dir == top || dir == gitDir || strings.HasPrefix(dir, gitDir+"/") {
		return dir
	}
	return ""
}

// gitNamingKeys are the configuration keys whose values name a path git
// on the host runs or obeys by itself: the hooks directory, the included
// files, and the programs it starts (the file monitor at git status, diff
// and merge drivers, filters at checkout and add, pagers and editors, the
// credential helper, signing). An alias runs only when the user names it,
// as make runs the Makefile: not counted.
const gitNamingKeys = `^(core\.(hookspath|fsmonitor|pager|editor|sshcommand|askpass)|include\.path|includeif\..*\.path|` +
	`sequence\.editor|diff\.external|diff\..*\.(textconv|command)|difftool\..*\.cmd|mergetool\..*\.cmd|merge\..*\.driver|` +
	`filter\..*\.(clean|smudge|process)|credential\.(.*\.)?helper|gpg\.(.*\.)?program|pager\..*|interactive\.difffilter)$`

// gitNamingWords are what a configuration file mentions when it has one
// of gitNamingKeys (in lower case): a file mentioning none is not read by
// git.
var gitNamingWords = []string{"hookspath", "include", "fsmonitor", "pager", "editor", "sshcommand", "askpass", "external",
	"textconv", "command", "cmd", "driver", "clean", "smudge", "process", "helper", "program", "difffilter"}

// maxConfigFile bounds a git configuration file read for what it names.
const maxConfigFile = 16 << 20

// maxIncludeDepth is how deep git follows include.path (its
// MAX_INCLUDE_DEPTH).
const maxIncludeDepth = 10

// gitConfigEntries has git read the configuration data (a file's
// content, given on its stdin) and returns the entries whose keys name a
// program or a file (gitNamingKeys), lowercased keys with their values; read
// is false when git could not. A long-lived process (a supervisor runs a
// command's spec for every command) asks git once per content: what git
// makes of a configuration depends on nothing else (includes are not
// followed here).
func gitConfigEntries(ctx context.Context, data []byte) (kvs [][2]string, read bool) {
	key := sha256.Sum256(data)
	gitConfigSeen.Lock()
	got, ok := gitConfigSeen.m[key]
	gitConfigSeen.Unlock()
	if ok {
		return got, true
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "config", "--file", "-", "--no-includes", "--null", "--get-regexp", gitNamingKeys)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=/nonexistent"}
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		// git config --get-regexp exits 1 when no key matches.
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || ctx.Err() != nil {
			return nil, false
		}
	}
	for _, entry := range bytes.Split(out, []byte{0}) {
		k, v, ok := bytes.Cut(entry, []byte{'\n'})
		if ok {
			kvs = append(kvs, [2]string{string(bytes.ToLower(k)), string(v)})
		}
	}
	gitConfigSeen.Lock()
	if len(gitConfigSeen.m) >= maxGitConfigsSeen {
		clear(gitConfigSeen.m)
	}
	gitConfigSeen.m[key] = kvs
	gitConfigSeen.Unlock()
	return kvs, true
}

// gitConfigSeen holds what git read in the configurations seen, by the
// SHA-256 of their content (gitConfigEntries); at most maxGitConfigsSeen.
var gitConfigSeen = struct {
	sync.Mutex
	m map[[32]byte][][2]string
}{m: map[[32]byte][][2]string{}}

const maxGitConfigsSeen = 256

// Bounds of reposBelow: how deep below a folder of projects it looks for
// repositories, and how many directories it reads at most.
const (
	maxFolderDepth = 3
	maxFolderDirs  = 4096
)

// reposBelow lists the git work trees (directories holding .git, a
// directory or a file) below dir, relative to it, at most maxFolderDepth
// down; it does not look inside a repository it found, nor into
// node_modules (thousands of packages, none a repository the user works in)
// or symlinks. ok is false when dir holds more
// than maxFolderDirs directories to read within that depth: the caller
// cannot know what it left unsearched.
func reposBelow(dir string) (repos []string, ok bool) {
	level := []string{""}
	read := 0
	for depth := 1; depth <= maxFolderDepth && len(level) > 0; depth++ {
		var next []string
		for _, rel := range level {
			if read++; read > maxFolderDirs {
				return repos, false
			}
			entries, err := os.ReadDir(filepath.Join(dir, rel))
			if err != nil {
				continue
			}
			for _, e := range entries {
				name := e.Name()
				if !e.IsDir() || name == "node_modules" {
					continue
				}
				child := filepath.Join(rel, name)
				if _, err := os.Lstat(filepath.Join(dir, child, ".git")); err == nil {
					repos = append(repos, child)
					continue
				}
				next = append(next, child)
			}
		}
		level = next
	}
	return repos, true
}

// createdCaches are the cache directories made when missing, so that the
// commonest toolchains (Go, npm, pnpm, everything under ~/.cache) can fill
// them. pnpm's store must be there: pnpm falls back to a .pnpm-store in
// the project when it cannot make its own, which git add -A then commits.
var createdCaches = []string{".cache", "go/pkg", ".npm", ".local/share/pnpm/store"}

// makeCache makes the cache directory c when it is missing: one of
// createdCaches always, any other when its parent is there and is not the
// home itself (~/.cargo/registry once cargo made ~/.cargo): a toolchain
// that finds its cache missing and unwritable fails.
func makeCache(c, userHome string) {
	rel := strings.TrimPrefix(c, userHome+"/")
	parent := filepath.Dir(c)
	switch {
	case slices.Contains(createdCaches, rel):
	case parent == userHome || !inside(parent, userHome):
		return
	default:
		if st, err := os.Stat(parent); err != nil || !st.IsDir() {
			return
		}
	}
	_ = os.MkdirAll(c, 0o755)
}

// holdsProgramDir reports whether the cache c is one of programs (the
// directories the user's shell runs programs from) or holds one: a
// command that could write there could plant a program the user's shell
// runs, outside any sandbox (PNPM_HOME, ~/.yarn/bin).
func holdsProgramDir(c string, programs []string) bool {
	for _, n := range physicalNames(c) {
		for _, p := range programs {
			if p == n || inside(p, n) {
				return true
			}
		}
	}
	return false
}

// projectRoot is the project a command run in dir works on: the nearest
// directory at or above dir holding .git (a repository's work tree, so
// that a command run in a subdirectory can still commit), below the user's
// home; dir itself when there is none.
func projectRoot(dir, userHome string) string {
	if root := nestedgit.WorkTreeOf(dir, userHome); root != "" {
		return root
	}
	return filepath.Clean(dir)
}

// projectMayBeWritten reports whether a workspace sandbox may make dir
// writable: not the root, not the user's home or anything above it, not a
// hidden directory of the home or anything in one (~/.config, ~/.local,
// ~/.claude: the settings, state and credentials of the user's tools, which
// the host runs from), not warden's home, anything in it or anything above
// it (a project holding WARDEN_HOME: in light mode only Landlock keeps a
// command off warden's files, and the project's grant would cover them),
// and not inside a system directory. Each is judged as written and where
// it really leads.
func projectMayBeWritten(dir, userHome, wardenHome string) bool {
	for _, d := range physicalNames(dir) {
		if d == "/" {
			return false
		}
		for _, h := range physicalNames(userHome) {
			if h == "" {
				continue
			}
			if d == h || strings.HasPrefix(h, d+"/") {
				return false
			}
			if rest, ok := strings.CutPrefix(d, h+"/"); ok && strings.HasPrefix(rest, ".") {
				return false
			}
		}
		for _, w := range physicalNames(wardenHome) {
			if w != "" && (d == w || strings.HasPrefix(d, w+"/") || strings.HasPrefix(w, d+"/")) {
				return false
			}
		}
		for _, sys := range []string{"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/boot", "/dev", "/proc", "/sys", "/run", "/var/lib", "/var/log", "/var/spool"} {
			if d == sys || strings.HasPrefix(d, sys+"/") {
				return false
			}
		}
	}
	return true
}

// programDirs are the folders of the home the user's shell runs programs
// from: the usual ones (~/bin, ~/go/bin, ~/.local/bin, ~/.cargo/bin), and
// every absolute entry of path inside the home, each by its name and
// where it really leads. A project inside one is not writable; one inside
// the project stays read-only.
func programDirs(userHome, path string) []string {
	if userHome == "" {
		return nil
	}
	dirs := []string{"bin", "go/bin", ".local/bin", ".cargo/bin"}
	var out []string
	for _, d := range dirs {
		out = append(out, filepath.Join(userHome, d))
	}
	for _, p := range filepath.SplitList(path) {
		if filepath.IsAbs(p) {
			p = filepath.Clean(p)
			if p != userHome && inside(p, userHome) {
				out = append(out, p)
			}
		}
	}
	var all []string
	for _, p := range out {
		for _, n := range physicalNames(p) {
			if n != "" && !slices.Contains(all, n) {
				all = append(all, n)
			}
		}
	}
	return all
}

// inProgramDir reports whether dir, by its name or where it really leads,
// is one of programs or lies inside one.
func inProgramDir(dir string, programs []string) bool {
	for _, d := range physicalNames(dir) {
		if slices.ContainsFunc(programs, func(p string) bool { return inside(d, p) }) {
			return true
		}
	}
	return false
}

// inside reports whether p is dir or lies below it, by name.
func inside(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// physicalNames are p cleaned, and where it really leads when that differs
// ("" stays "").
func physicalNames(p string) []string {
	if p == "" {
		return []string{""}
	}
	p = filepath.Clean(p)
	if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
		return []string{p, real}
	}
	return []string{p}
}

// homePaths turns ~ and ~/… into paths in userHome, leaving absolute
// paths as they are and dropping anything else.
func homePaths(paths []string, userHome string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		switch {
		case p == "~" || strings.HasPrefix(p, "~/"):
			if userHome == "" {
				continue
			}
			p = filepath.Join(userHome, p[1:])
		case !filepath.IsAbs(p):
			continue
		}
		out = append(out, filepath.Clean(p))
	}
	return out
}

// pnpmStoreEnv returns env with pnpm's store named (npm_config_store_dir)
// when args run pnpm and spec makes its store writable (a cache ending in
// pnpm/store), unless env names one already. pnpm keeps its store where it
// can hard-link from the project: a store on another mount (the sandbox's
// bind mount of the cache) it replaces by a .pnpm-store in the project,
// which git add -A then commits; a store it is told of it uses as it is.
// Only for a line that runs pnpm: npm warns about an npm_config_ variable
// it does not know.
func pnpmStoreEnv(env []string, args []string, spec sandbox.Spec) []string {
	runsPnpm := false
	for _, a := range args {
		for _, f := range strings.FieldsFunc(a, func(r rune) bool {
			return !(r == '-' || r == '.' || r == '@' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
		}) {
			runsPnpm = runsPnpm || f == "pnpm" || strings.HasPrefix(f, "pnpm@")
		}
	}
	if !runsPnpm || slices.ContainsFunc(env, func(kv string) bool {
		return strings.HasPrefix(strings.ToLower(kv), "npm_config_store_dir=") || strings.HasPrefix(kv, "pnpm_config_store_dir=")
	}) {
		return env
	}
	for _, c := range spec.ReadWrite {
		if strings.HasSuffix(c, "/pnpm/store") {
			return append(slices.Clone(env), "npm_config_store_dir="+c)
		}
	}
	return env
}
