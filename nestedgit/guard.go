package nestedgit

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Bounds of the search: how deep git directories nest under .git/modules
// (a submodule's name may hold slashes), how many repositories it lists
// (nested in one another to any depth: git's own recursion has no bound),
// and how many directories the fallback walk of a work tree whose index
// cannot be read looks at.
const (
	maxDepth    = 64
	maxRepos    = 4096
	maxWalkDirs = 20000
)

// A Repo is a git directory inside a project that git on the host enters.
type Repo struct {
	GitDir string // absolute
	// Via says how git on the host gets there: "the gitlink sub in the
	// index of /p", "/p/.git/modules/x".
	Via string
	// Pointer is the file that leads git there, when one does: a work
	// tree's .git (a file, or a symlink), or another git directory's
	// commondir.
	Pointer string
	// Escape, when set, is an entry of GitDir's index whose path leads
	// out of its work tree (../../.ssh/id_rsa): the index is what leads
	// git astray, and Pointer names it.
	Escape string
}

// A Finding is what Sweep did to one git directory.
type Finding struct {
	Repo
	// Keys are the configuration keys taken out (config and
	// config.worktree), Hooks the hooks moved; Whole names a file moved
	// as a whole because git could not read it.
	Keys, Hooks, Whole []string
	// Cut is set when the Pointer was moved out instead: it led git
	// into a git directory the command could not write, which it did not
	// lead to before the command.
	Cut bool
	// Links are the symbolic links removed ("BISECT_START -> ~/.netrc"):
	// git on the host reads a git directory's files through a link and
	// prints what it read.
	Links []string
	// Moved is the quarantine directory that holds the originals and a
	// RESTORE.txt saying how to put them back; "" when nothing moved.
	Moved string
	// Err says what could not be done (the git directory keeps what it
	// could not move).
	Err error
}

// String says what happened, for the command's warnings and the audit log.
func (f Finding) String() string {
	if f.Cut && f.Escape != "" {
		s := fmt.Sprintf("the index %s has an entry %q, a path outside its work tree that git never writes and that git on the host would follow (into a repository elsewhere, whose config it obeys, or to a file git diff prints), so it was moved to %s (RESTORE.txt there says how to put it back)", f.Pointer, f.Escape, f.Moved)
		if f.Err != nil {
			s += fmt.Sprintf("; %v", f.Err)
		}
		return s
	}
	if f.Cut {
		s := fmt.Sprintf("the command made %s lead git on the host into the git directory %s, which it could not write and which nothing led to before (a git directory an earlier command, with other rights, may have made), so it was moved to %s (RESTORE.txt there says how to put it back)", f.Pointer, f.GitDir, f.Moved)
		if f.Err != nil {
			s += "; could not move it: " + f.Err.Error()
		}
		return s
	}
	var what []string
	if len(f.Keys) > 0 {
		what = append(what, "the config keys "+strings.Join(f.Keys, ", "))
	}
	if len(f.Whole) > 0 {
		what = append(what, strings.Join(f.Whole, ", ")+" (git could not read it)")
	}
	if len(f.Hooks) > 0 {
		what = append(what, "the hooks "+strings.Join(f.Hooks, ", "))
	}
	s := fmt.Sprintf("the command changed the git directory %s, which git on the host enters (%s): ", f.GitDir, f.Via)
	if len(what) > 0 {
		s += "it would run programs there, so " + strings.Join(what, "; ") + " were moved to " + f.Moved + " (RESTORE.txt there says how to put them back)"
	}
	if len(f.Links) > 0 {
		if len(what) > 0 {
			s += "; "
		}
		s += "git on the host would read and print what these links lead to, so they were removed (" + strings.Join(f.Links, ", ") + "; RESTORE.txt in " + f.Moved + ")"
		what = append(what, "links")
	}
	if f.Err != nil {
		if len(what) > 0 {
			s += "; "
		}
		s += "could not take out what runs programs: " + f.Err.Error()
	}
	return s
}

var sweeping sync.Mutex

// A Guard holds the state of a project's nested git directories when it
// was made. The zero Guard is not usable; make one with New.
type Guard struct {
	project    string
	writable   []string
	quarantine string
	// nested: the repositories nested in the project that git does not
	// enter by itself are watched too (NewWithNested).
	nested bool
	mu     sync.Mutex
	before map[string]string // git directory -> digest
	// links are the symbolic links in each git directory (where it really
	// is), the project's own among them, by path under it: a link that is
	// not here is the command's, and Sweep removes it.
	links map[string]map[string]string
}

// A Baseline is what a Guard knew before the command ran: kept in a file
// by a process the agent host may kill before its sweep (a one-shot run in
// the warden the host started), so that the next warden process can sweep
// in its place (Resume).
type Baseline struct {
	Project    string                       `json:"project"`
	Writable   []string                     `json:"writable"`
	Quarantine string                       `json:"quarantine"`
	Nested     bool                         `json:"nested"`
	Before     map[string]string            `json:"before"`
	Links      map[string]map[string]string `json:"links"`
}

// Baseline returns what g knew before the command.
func (g *Guard) Baseline() Baseline {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := Baseline{Project: g.project, Writable: slices.Clone(g.writable), Quarantine: g.quarantine, Nested: g.nested,
		Before: maps.Clone(g.before), Links: map[string]map[string]string{}}
	for k, v := range g.links {
		b.Links[k] = maps.Clone(v)
	}
	return b
}

// Resume is the Guard whose Baseline b is, for a sweep in another process.
func Resume(b Baseline) *Guard {
	g := &Guard{project: filepath.Clean(b.Project), writable: b.Writable, quarantine: b.Quarantine, nested: b.Nested,
		before: b.Before, links: b.Links}
	if g.before == nil {
		g.before = map[string]string{}
	}
	if g.links == nil {
		g.links = map[string]map[string]string{}
	}
	return g
}

// New takes the baseline of project's nested git directories. writable
// are the directories outside the project the sandboxed command may write
// (a git directory is changed only there); quarantine is where Sweep
// moves what it takes out.
func New(project string, writable []string, quarantine string) *Guard {
	return newGuard(project, writable, quarantine, false)
}

// NewWithNested is New for a guard that also watches every repository
// nested in the project (Nested), whether or not the project's index names
// it: git on the host runs in one when an editor or a shell prompt enters
// it. Its search reads up to a few thousand directories each time, so it
// is for the sweeps that are not on a command's path: a one-shot run's
// end, a long-lived sandbox's health checks and its stop.
func NewWithNested(project string, writable []string, quarantine string) *Guard {
	return newGuard(project, writable, quarantine, true)
}

func newGuard(project string, writable []string, quarantine string, nested bool) *Guard {
	g := &Guard{project: filepath.Clean(project), quarantine: quarantine, nested: nested, before: map[string]string{}, links: map[string]map[string]string{}}
	// Each writable directory by its name and where it really leads: a
	// git directory is judged by the names Reachable gives it, which may
	// be either.
	for _, w := range append([]string{g.project}, writable...) {
		if w == "" {
			continue
		}
		w = filepath.Clean(w)
		g.writable = append(g.writable, w)
		if real, err := filepath.EvalSymlinks(w); err == nil && real != w {
			g.writable = append(g.writable, real)
		}
	}
	repos, _ := g.repos()
	for _, r := range repos {
		g.before[r.GitDir] = digest(r.GitDir)
	}
	for _, r := range append(g.own(), repos...) {
		if real, err := filepath.EvalSymlinks(r.GitDir); err == nil {
			g.links[real] = linksOf(real)
		}
	}
	return g
}

// mayWrite reports whether real (a path with no symlink on it) lies in
// what the command could write.
func (g *Guard) mayWrite(real string) bool {
	return slices.ContainsFunc(g.writable, func(w string) bool { return w != "" && within(real, w) })
}

// own is the project's own git directory, when it has one: its config and
// hooks the sandbox keeps read-only, but the rest is the command's to
// write, links among it.
func (g *Guard) own() []Repo {
	gd, err := resolveDotGit(filepath.Join(g.project, ".git"))
	if err != nil {
		return nil
	}
	return []Repo{{GitDir: gd, Via: "the project's own git directory"}}
}

// repos are the git directories the guard watches: Reachable's, and with
// nested those of the repositories nested in the project.
func (g *Guard) repos() ([]Repo, []error) {
	repos, problems := Reachable(g.project)
	if !g.nested {
		return repos, problems
	}
	w := &reach{seen: map[string]bool{}, walked: map[string]bool{}, repos: repos, problems: problems}
	for _, r := range repos {
		w.seen[r.GitDir] = true
	}
	if top, err := resolveDotGit(filepath.Join(g.project, ".git")); err == nil {
		w.seen[top] = true
	}
	for _, wt := range Nested(g.project, true) {
		gd, err := resolveDotGit(filepath.Join(wt, ".git"))
		if err != nil {
			continue
		}
		// And what git enters from there: its own gitlinks (in
		// node_modules too, which the search of nested repositories
		// passes over) and the git directories it keeps.
		if w.add(gd, "the repository "+wt+" nested in the project, which an editor or a shell prompt entering it runs git in", filepath.Join(wt, ".git")) {
			w.inGitDir(gd, 0)
		}
		// Its index, read against this work tree even when the git
		// directory was reached before: a linked worktree's gitdir file
		// (which the command may write) can name another work tree.
		w.inWorkTree(w.workTreeOf(wt, gd), gd)
	}
	return w.repos, w.problems
}

// Sweep looks at every git directory git on the host would enter from the
// project that is new or changed since New, inside what the command could
// write, and moves out of it each configuration key not known to be inert
// and each hook. In those and in the project's own git directory it
// removes every symbolic link that was not there at New (or leads
// elsewhere now). It reports what it did; a git directory it could not
// make safe is a Finding with Err. Nothing found is nil.
func (g *Guard) Sweep(now time.Time) []Finding {
	// One sweep at a time in a process: a world's supervisor sweeps at its
	// health checks while its commands' own sweeps run.
	sweeping.Lock()
	defer sweeping.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	repos, problems := g.repos()
	var out []Finding
	if f := g.rootAsGitDir(now); f.Moved != "" || f.Err != nil {
		out = append(out, f)
	}
	for _, p := range problems {
		out = append(out, Finding{Repo: Repo{GitDir: g.project, Via: "its index"}, Err: p})
	}
	own := g.own()
	for i, r := range append(own, repos...) {
		if r.Escape != "" {
			// An index that names a path outside its work tree, which git
			// never writes: the user's git status would follow it (into
			// a repository elsewhere, whose config it obeys; to a secret,
			// which git diff prints). The index goes, where the command
			// could write it.
			if f := cutPointer(r, g.mayWrite, g.quarantine, now); f.Moved != "" || f.Err != nil {
				out = append(out, f)
			}
			continue
		}
		// Judged by where it really leads, and only there: a .git file
		// may name a git directory through a symlink (~/code ->
		// /data/code), and a sandboxed process may name one through a
		// symlink to what it cannot write (sub/lnk -> ~/.ssh), which the
		// sweep, unconfined, must not touch.
		real, err := filepath.EvalSymlinks(r.GitDir)
		if err != nil {
			continue // gone
		}
		if !g.mayWrite(real) {
			// The command could not have written it. But if nothing led
			// git there before the command, and the command could write
			// what leads there now, an earlier command, which could write
			// it (a linked worktree's common directory, another
			// project), may have made it for this one to lead to: what
			// leads there goes.
			if _, was := g.before[r.GitDir]; i >= len(own) && !was && r.Pointer != "" {
				if f := cutPointer(r, g.mayWrite, g.quarantine, now); f.Moved != "" || f.Err != nil {
					out = append(out, f)
				}
			}
			continue
		}
		f := Finding{Repo: Repo{GitDir: real, Via: r.Via}}
		if d, ok := g.before[r.GitDir]; i >= len(own) && (!ok || d != digest(r.GitDir)) {
			f = neutralize(f.Repo, g.project, g.quarantine, now)
			if f.Err == nil {
				// Safe now: a later Sweep looks again only once it changes.
				g.before[r.GitDir] = digest(r.GitDir)
			}
		}
		g.links[real] = removeNewLinks(&f, g.links[real], g.mayWrite, g.quarantine, now)
		f.Repo = r
		if f.Moved != "" || f.Err != nil {
			out = append(out, f)
		}
	}
	return out
}

// Reachable lists the git directories inside project, other than its own,
// that git on the host enters: the git directory of every gitlink in the
// index whose work tree holds a .git (recursively: a repository's own
// gitlinks too, under its core.worktree when it names one), every git
// directory under .git/modules and .git/worktrees, and the common
// directory a git directory's commondir names. problems say where it
// could not look (an index it cannot read is replaced by a walk of the
// work tree for every .git, which is bounded, as is the number of
// repositories).
func Reachable(project string) (repos []Repo, problems []error) {
	project = filepath.Clean(project)
	top := filepath.Join(project, ".git")
	if st, err := os.Stat(top); err != nil || !st.IsDir() {
		if err == nil {
			// The project is itself a submodule or linked worktree: its git
			// directory lies elsewhere, and is not this package's to judge.
			if gd, err := readGitfile(top); err == nil {
				top = gd
			} else {
				return nil, nil
			}
		} else {
			return nil, nil
		}
	}
	w := &reach{seen: map[string]bool{}, walked: map[string]bool{}}
	w.from(project, top)
	return w.repos, w.problems
}

// reach is one search of the git directories git enters from a work tree.
type reach struct {
	seen     map[string]bool
	walked   map[string]bool // work tree + NUL + git directory, each searched once
	repos    []Repo
	problems []error
	full     bool // maxRepos were found: the rest is a problem
}

// from searches from workTree, whose git directory is gitDir (not listed
// itself).
func (w *reach) from(workTree, gitDir string) {
	w.seen[gitDir] = true
	w.inGitDir(gitDir, 0)
	w.inWorkTree(w.workTreeOf(workTree, gitDir), gitDir)
}

// add lists a git directory not seen before; false when it was, or the
// search is full.
func (w *reach) add(gitDir, via, pointer string) bool {
	if w.seen[gitDir] {
		return false
	}
	if len(w.repos) >= maxRepos {
		if !w.full {
			w.full = true
			w.problems = append(w.problems, fmt.Errorf("more than %d git repositories nested in one another: the rest were not looked at", maxRepos))
		}
		return false
	}
	w.seen[gitDir] = true
	w.repos = append(w.repos, Repo{GitDir: gitDir, Via: via, Pointer: pointer})
	return true
}

// inGitDir adds the git directories a git directory keeps inside
// (modules/…, worktrees/…) and its common directory.
func (w *reach) inGitDir(gitDir string, depth int) {
	if c, ok := commonDir(gitDir); ok && w.add(c, "the commondir of "+gitDir, filepath.Join(gitDir, "commondir")) {
		w.inGitDir(c, depth)
	}
	insideGitDir(gitDir, depth, func(child string, d int) {
		if w.add(child, child, "") {
			w.inGitDir(child, d)
			// A linked worktree has an index of its own: the gitlinks
			// in it are entered by git run in that worktree.
			if wt := linkedWorkTree(child); wt != "" {
				w.inWorkTree(wt, child)
			}
		}
	})
}

// linkedWorkTree is the work tree of the linked worktree whose git
// directory (…/worktrees/NAME) is gitDir, as its gitdir file names it
// (the worktree's .git file); "" for any other git directory.
func linkedWorkTree(gitDir string) string {
	if filepath.Base(filepath.Dir(gitDir)) != "worktrees" {
		return ""
	}
	data, err := readFile(filepath.Join(gitDir, "gitdir"))
	if err != nil {
		return ""
	}
	dotGit := strings.TrimRight(string(data), "\r\n")
	if !filepath.IsAbs(dotGit) {
		dotGit = filepath.Join(gitDir, dotGit)
	}
	return filepath.Dir(filepath.Clean(dotGit))
}

// workTreeOf is the work tree git uses with gitDir, found at dir: the
// one its core.worktree names (resolved, relative to the git directory),
// else dir.
func (w *reach) workTreeOf(dir, gitDir string) string {
	wt := configWorktree(gitDir)
	if wt == "" {
		return dir
	}
	if !filepath.IsAbs(wt) {
		wt = gitDir + "/" + wt
	}
	if real, err := resolveGitPath(wt); err == nil {
		return real
	}
	return dir
}

// inWorkTree adds the git directory of each gitlink of gitDir's index
// that is checked out in workTree, and searches on from each.
func (w *reach) inWorkTree(workTree, gitDir string) {
	key := workTree + "\x00" + gitDir
	if w.walked[key] {
		return
	}
	if len(w.walked) >= maxRepos {
		if !w.full {
			w.full = true
			w.problems = append(w.problems, fmt.Errorf("more than %d work trees of git repositories nested in one another: the rest were not looked at", maxRepos))
		}
		return
	}
	w.walked[key] = true
	links, err := indexGitlinks(gitDir)
	var esc *escapeError
	if errors.As(err, &esc) {
		w.repos = append(w.repos, Repo{GitDir: gitDir, Via: "the index of " + workTree, Pointer: filepath.Join(gitDir, "index"), Escape: esc.name})
		links, err = esc.links, nil
	}
	if err != nil {
		var ok bool
		if links, ok = walkDotGits(workTree); !ok {
			w.problems = append(w.problems, fmt.Errorf("the index of %s cannot be read (%v), and its work tree is too large to search for repositories", gitDir, err))
		}
	}
	for _, l := range links {
		wt := filepath.Join(workTree, filepath.FromSlash(l))
		if !within(wt, workTree) || wt == workTree {
			continue
		}
		gd, err := resolveDotGit(filepath.Join(wt, ".git"))
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
				w.problems = append(w.problems, fmt.Errorf("%s/.git: %v", wt, err))
			}
			continue
		}
		if w.add(gd, "the gitlink "+l+" in the index of "+workTree, filepath.Join(wt, ".git")) {
			w.inGitDir(gd, 0)
		}
		w.inWorkTree(w.workTreeOf(wt, gd), gd)
	}
}

// InsideGitDir lists the git directories kept inside gitDir, and inside
// those in turn: each submodule's under modules/, each linked worktree's
// under worktrees/. Git on the host enters every one of them (git status in
// the superproject runs git in each submodule).
func InsideGitDir(gitDir string) []string {
	var out []string
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		insideGitDir(dir, depth, func(child string, d int) {
			out = append(out, child)
			walk(child, d)
		})
	}
	walk(filepath.Clean(gitDir), 0)
	return out
}

// insideGitDir calls found for each git directory directly under gitDir's
// modules/ and worktrees/ (a directory holding HEAD; one without is a step
// of a name that holds slashes, modules/a/b, and is looked through), with
// its depth: depth counts from gitDir's, and nothing deeper than maxDepth
// is read.
func insideGitDir(gitDir string, depth int, found func(child string, depth int)) {
	var look func(dir string, d int)
	look = func(dir string, d int) {
		if d > maxDepth {
			return
		}
		// Listable even when the command made it unreadable (mode 0311):
		// git still opens the git directories in it by name.
		dd, err := openListable(dir)
		if err != nil {
			return
		}
		entries, err := dd.List()
		dd.Close()
		if err != nil {
			return
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			child := filepath.Join(dir, e.Name())
			if _, err := os.Lstat(filepath.Join(child, "HEAD")); err != nil {
				look(child, d+1)
				continue
			}
			found(child, d+1)
		}
	}
	for _, sub := range []string{"modules", "worktrees"} {
		look(filepath.Join(gitDir, sub), depth)
	}
}

// resolveDotGit is the git directory a work tree's .git leads to: the
// directory itself (or where a symlink leads), or the target of a .git
// file.
func resolveDotGit(dotGit string) (string, error) {
	st, err := os.Stat(dotGit)
	if err != nil {
		return "", err
	}
	if st.IsDir() {
		if real, err := filepath.EvalSymlinks(dotGit); err == nil {
			return real, nil
		}
		return dotGit, nil
	}
	return readGitfile(dotGit)
}

// readGitfile is the git directory the .git file p names, where it really
// leads.
func readGitfile(p string) (string, error) {
	data, err := readFile(p)
	if err != nil {
		return "", err
	}
	gd, err := parseGitfile(data, filepath.Dir(p))
	if err != nil {
		return "", err
	}
	return resolveGitPath(gd)
}

// worktreeCache keeps the core.worktree of each config read, by the
// file's identity: a submodule's config names one, and a long-lived
// sandbox's sweeps would otherwise ask git for it at every command.
var worktreeCache struct {
	sync.Mutex
	m map[string][2]string // config path -> stamp, value
}

// configWorktree is the core.worktree gitDir's config sets, as written
// (the last one wins, as in git); "" when none, or the file cannot be read.
func configWorktree(gitDir string) string {
	p := filepath.Join(gitDir, "config")
	st, err := os.Stat(p)
	if err != nil {
		return ""
	}
	stamp := fileStamp(st)
	worktreeCache.Lock()
	c, ok := worktreeCache.m[p]
	worktreeCache.Unlock()
	if ok && c[0] == stamp {
		return c[1]
	}
	data, err := readFile(p)
	if err != nil {
		return ""
	}
	wt := ""
	if bytes.Contains(bytes.ToLower(data), []byte("worktree")) { // git is asked only where the key may be
		if es, err := parseConfig(data); err == nil {
			for _, e := range es {
				if e.Key == "core.worktree" && !e.NoValue {
					wt = e.Value
				}
			}
		}
	}
	worktreeCache.Lock()
	if worktreeCache.m == nil {
		worktreeCache.m = map[string][2]string{}
	}
	worktreeCache.m[p] = [2]string{stamp, wt}
	worktreeCache.Unlock()
	return wt
}

// indexCache keeps the gitlinks of each index read, by the file's identity,
// so that a long-lived sandbox's sweeps read a large index once.
var indexCache struct {
	sync.Mutex
	m map[string]cachedIndex
}

type cachedIndex struct {
	stamp string
	links []string
}

// indexGitlinks reads gitDir's index. A missing index holds nothing.
func indexGitlinks(gitDir string) ([]string, error) {
	p := filepath.Join(gitDir, "index")
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	stamp := fileStamp(st)
	indexCache.Lock()
	c, ok := indexCache.m[p]
	indexCache.Unlock()
	if ok && c.stamp == stamp {
		return c.links, nil
	}
	data, err := readFile(p)
	if err != nil {
		return nil, err
	}
	// The object format decides the size of the ids in the index; an
	// index read with the wrong one fails, so both are tried, the one the
	// config names first.
	sizes := []int{sha1Size, sha256Size}
	if cfg, err := readFile(filepath.Join(gitDir, "config")); err == nil && bytes.Contains(bytes.ToLower(cfg), []byte("sha256")) {
		sizes = []int{sha256Size, sha1Size}
	}
	var links []string
	escapes := ""
	for _, n := range sizes {
		var x *index
		if x, err = readIndex(data, n); err != nil {
			continue
		}
		links, escapes = x.links, x.escapes
		if x.shared != nil {
			var shared string
			links, shared, err = splitIndex(gitDir, x, n)
			if escapes == "" {
				escapes = shared
			}
		}
		break
	}
	if err != nil {
		return nil, err
	}
	if escapes != "" {
		return nil, &escapeError{name: escapes, links: links} // never cached: it must go
	}
	indexCache.Lock()
	if indexCache.m == nil {
		indexCache.m = map[string]cachedIndex{}
	}
	indexCache.m[p] = cachedIndex{stamp, links}
	indexCache.Unlock()
	return links, nil
}

// escapeError says an index holds an entry whose path leads out of its
// work tree (index.escapes); links are its gitlinks all the same.
type escapeError struct {
	name  string
	links []string
}

func (e *escapeError) Error() string {
	return fmt.Sprintf("the index has an entry %q, a path outside its work tree", e.name)
}

// fileStamp is what says a cached reading of a file still holds: its size,
// times and inode, with the change time, which no writer can set back (an
// in-place rewrite with its old mtime restored by utimensat keeps the
// rest).
func fileStamp(st fs.FileInfo) string {
	ctime := int64(0)
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		ctime = changeTime(sys)
	}
	return fmt.Sprintf("%d %d %d %v", st.Size(), st.ModTime().UnixNano(), ctime, inode(st))
}

// walkDotGits lists, relative to workTree, every directory below it that
// holds a .git: what may be a gitlink when the index cannot be read. ok is
// false when the walk stopped at its bound.
func walkDotGits(workTree string) (rel []string, ok bool) {
	n := 0
	err := filepath.WalkDir(workTree, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if n++; n > maxWalkDirs {
			return fs.SkipAll
		}
		if p != workTree {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			if _, err := os.Lstat(filepath.Join(p, ".git")); err == nil {
				r, _ := filepath.Rel(workTree, p)
				rel = append(rel, filepath.ToSlash(r))
			}
		} else if d.Name() == ".git" {
			return filepath.SkipDir
		}
		return nil
	})
	return rel, err == nil && n <= maxWalkDirs
}

// digest sums what of a git directory can run programs: its config and
// config.worktree, its commondir, and its hooks (names, modes, contents).
func digest(gitDir string) string {
	h := sha256.New()
	for _, name := range []string{"config", "config.worktree", "commondir"} {
		data, err := readFile(filepath.Join(gitDir, name))
		fmt.Fprintf(h, "%s %d %v\n", name, len(data), err != nil)
		h.Write(data)
	}
	// Where core.worktree really leads: a directory on the way swapped
	// for a symlink changes what git on the host reads, not the config.
	if wt := configWorktree(gitDir); wt != "" {
		p := wt
		if !filepath.IsAbs(p) {
			p = gitDir + "/" + p
		}
		real, err := resolveGitPath(p)
		fmt.Fprintf(h, "worktree %q %v\n", real, err != nil)
	}
	hooks := filepath.Join(gitDir, "hooks")
	if st, err := os.Lstat(hooks); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		t, _ := os.Readlink(hooks)
		fmt.Fprintf(h, "hooks -> %s\n", t)
	}
	entries, _ := os.ReadDir(hooks)
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue
		}
		if strings.HasSuffix(e.Name(), ".sample") && info.Mode().IsRegular() {
			// git never runs a sample; neutralize leaves them too.
			fmt.Fprintf(h, "sample %q\n", e.Name())
			continue
		}
		data, _ := readFile(filepath.Join(hooks, e.Name()))
		fmt.Fprintf(h, "hook %q %v %d\n", e.Name(), info.Mode(), len(data))
		h.Write(data)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}
