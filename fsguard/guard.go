package fsguard

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/clip"
	"github.com/agentwarden/warden/internal/regfile"
	"github.com/agentwarden/warden/nestedgit"
)

// Guard judges paths against one compiled Policy. It is safe for concurrent
// use.
type Guard struct {
	workspace []string // the workspace as written and where it really is
	allowed   []allowedRule
	denied    []pattern // case-folded
	// self holds warden's home (as written and physical, case-folded); sandbox
	// the one directory in it agents may be given.
	self, sandbox []string
	userHome      string
	// userHomes is the user's home as written and where it really is; a
	// project can be neither of them nor above them.
	userHomes []string
	// caches are the tool caches (Policy.Caches, absolute and clean);
	// cacheRoots resolves them on first use.
	caches     []string
	cachesOnce sync.Once
	cacheReal  []string
	// readHome is Policy.ReadHome.
	readHome bool
	// protected is Policy.Protected, case-folded.
	protected []string
}

type allowedRule struct {
	pats    []pattern
	actions [4]bool // indexed like Actions
	level   Level
	text    string
}

// New compiles p. It fails on an invalid pattern or a missing workspace or
// warden home; the policy file's loader reports such problems first.
func New(p Policy) (*Guard, error) {
	g, err := newBase(p)
	if err != nil {
		return nil, err
	}
	if _, err := g.compileRules(p); err != nil {
		return nil, err
	}
	return g, nil
}

// compiled is what compileRules saw: the memo that answered resolution,
// whose deps are the directories the answers came from, and how many
// patterns each denied path became (one, or two with an alias).
type compiled struct {
	fsys    *memoLinks
	deniedN []int
}

// newBase is New without the rules: the homes and the workspace, resolved
// (a few lstat calls, whatever the policy's size).
func newBase(p Policy) (*Guard, error) {
	g := &Guard{userHome: p.UserHome, readHome: p.ReadHome}
	for _, pr := range p.Protected {
		g.protected = append(g.protected, foldCase(pr))
	}
	if p.UserHome != "" {
		g.userHome = filepath.Clean(p.UserHome)
		g.userHomes = physical(g.userHome)
	}
	if p.WardenHome == "" || !filepath.IsAbs(expandTilde(p.WardenHome, g.userHome)) {
		return nil, fmt.Errorf("warden's home %q is not an absolute path", p.WardenHome)
	}
	home := filepath.Clean(expandTilde(p.WardenHome, g.userHome))
	for _, h := range physical(home) {
		g.self = append(g.self, foldCase(h))
		g.sandbox = append(g.sandbox, foldCase(join(h, SandboxDir)))
	}
	ws := expandTilde(p.Workspace, g.userHome)
	if ws == "" || !filepath.IsAbs(ws) {
		return nil, fmt.Errorf("workspace %q is not an absolute path", p.Workspace)
	}
	g.workspace = physical(filepath.Clean(ws))
	for _, c := range p.Caches {
		if c = expandTilde(c, g.userHome); filepath.IsAbs(c) {
			g.caches = append(g.caches, filepath.Clean(c))
		}
	}
	return g, nil
}

// cacheRoots are the tool caches as written and where they really are,
// resolved once, when a path no rule allows is read.
func (g *Guard) cacheRoots() []string {
	g.cachesOnce.Do(func() {
		for _, c := range g.caches {
			g.cacheReal = append(g.cacheReal, physical(c)...)
		}
	})
	return g.cacheReal
}

// compileRules compiles p's denied and allowed paths into g (built by
// newBase from the same p).
func (g *Guard) compileRules(p Policy) (compiled, error) {
	denied := make([]expanded, len(p.Denied))
	allowed := make([]expanded, len(p.Allowed))
	bases := make([]string, 0, len(p.Denied)+len(p.Allowed))
	var err error
	tilde := homeGlob(g.userHome)
	for i, d := range p.Denied {
		if err := CheckPattern(d, false); err != nil {
			return compiled{}, err
		}
		if denied[i], err = expand(d, tilde, true); err != nil {
			return compiled{}, err
		}
		bases = append(bases, denied[i].base)
	}
	rules := make([]allowedRule, len(p.Allowed))
	for i, r := range p.Allowed {
		if err := CheckPattern(r.Pattern, true); err != nil {
			return compiled{}, err
		}
		ar := &rules[i]
		ar.level, ar.text = r.Level, r.Pattern
		for _, a := range r.Actions {
			k := actionIndex(a)
			if k < 0 {
				return compiled{}, fmt.Errorf("allowed path %q names the unknown action %q; want read, write, list or delete", r.Pattern, a)
			}
			ar.actions[k] = true
		}
		if allowed[i], err = expand(r.Pattern, tilde, false); err != nil {
			return compiled{}, err
		}
		bases = append(bases, allowed[i].base)
	}
	c := compiled{fsys: newMemoLinks(bases), deniedN: make([]int, len(p.Denied))}
	g.denied = make([]pattern, 0, len(p.Denied))
	for i, d := range p.Denied {
		n := len(g.denied)
		g.denied = compile(g.denied, d, denied[i], true, c.fsys)
		c.deniedN[i] = len(g.denied) - n
	}
	// One backing array for every rule's patterns; each rule's slice is
	// capped, so nothing appended to one reaches the next.
	pats := make([]pattern, 0, len(p.Allowed)+len(p.Allowed)/8)
	for i, r := range p.Allowed {
		start := len(pats)
		pats = compile(pats, r.Pattern, allowed[i], false, c.fsys)
		rules[i].pats = pats[start:len(pats):len(pats)]
	}
	g.allowed = rules
	return c, nil
}

func actionIndex(a Action) int {
	for i, x := range Actions {
		if x == a {
			return i
		}
	}
	return -1
}

// physical returns p and, when it differs, where p really is.
func physical(p string) []string {
	if r, err := resolve(p); err == nil && r.path != p {
		return []string{p, r.path}
	}
	return []string{p}
}

func expandTilde(p, home string) string {
	if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return home + p[1:]
	}
	return p
}

// Decide judges action on name, a path relative to cwd (or absolute, or
// "~/…"). It never fails: a path it cannot judge is denied with the reason.
func (g *Guard) Decide(action Action, name, cwd string) warden.Decision {
	return g.DecideIn(action, name, cwd, "")
}

// DecideIn is Decide for a request of an agent session whose /tmp is tmp
// on the host ("" for none; warden's home holds it): a path that lies
// there, as named and where it really is, is allowed as its commands are
// (fs.session_tmp), to read and write. A symlink in tmp that leads out of
// it is judged where it leads, and the rest of warden's home stays its own.
func (g *Guard) DecideIn(action Action, name, cwd, tmp string) warden.Decision {
	i := actionIndex(action)
	if i < 0 {
		return warden.Denyf("fs.unknown_action", fmt.Sprintf("the filesystem capability has the actions read, write, list and delete; got %q", action))
	}
	p, d, ok := g.target(action, name, cwd, false)
	if !ok {
		return d
	}
	d = g.decideTarget(i, action, name, p, cwd, tmp)
	if cleaned, ok := g.cleanedName(name, cwd); ok {
		// The agent hosts' tools make a path absolute by cleaning it as
		// text first (Node's path.resolve: L/../../.bashrc is the home's
		// .bashrc, whatever L links to), and only then open it, where the
		// kernel follows each symlink: that path is judged too, and the
		// strictest answer stands (red-team-24: a symlink a command made
		// in the project led the check into the project while the tool
		// wrote ~/.bashrc).
		if cp, cd, ok := g.target(action, cleaned, cwd, false); !ok {
			d = strictest(d, cd)
		} else if cp.real != p.real || cp.lexical != p.lexical {
			d = strictest(d, g.decideTarget(i, action, name, cp, cwd, tmp))
		}
	}
	if p.literal {
		// A listing's name with glob characters that names an entry as
		// written (a Grep's path k[e]ys, which is never a pattern, a
		// symlink a command made) is that entry too: the strictest of
		// both answers.
		if lit, ld, ok := g.target(action, name, cwd, true); !ok {
			d = ld
		} else if dl := g.decideTarget(i, action, name, lit, cwd, tmp); dl.Verdict.Stronger(d.Verdict) {
			d = dl
		}
	}
	return d
}

// cleanedName is name made absolute (from cwd, or the user's home for ~/)
// and cleaned as text, when that is another path than name's own
// resolution would walk: when name has a ".." element.
func (g *Guard) cleanedName(name, cwd string) (string, bool) {
	if !slices.Contains(strings.Split(name, "/"), "..") {
		return "", false
	}
	p := name
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if g.userHome == "" {
			return "", false
		}
		p = g.userHome + p[1:]
	case !filepath.IsAbs(p):
		if cwd == "" || !filepath.IsAbs(cwd) {
			return "", false
		}
		p = cwd + "/" + p
	}
	return filepath.Clean(p), true
}

// strictest is the stronger of two decisions (a, when they are as strong).
func strictest(a, b warden.Decision) warden.Decision {
	if b.Verdict.Stronger(a.Verdict) {
		return b
	}
	return a
}

// decideTarget is DecideIn for the target p of name.
func (g *Guard) decideTarget(i int, action Action, name string, p target, cwd, tmp string) warden.Decision {
	var d warden.Decision
	if p.viaProc || under(p.lexical, "/proc") || under(p.real, "/proc") || under(p.lexical, "/dev/fd") || isStdio(p.lexical) {
		return warden.Denyf("fs.proc", fmt.Sprintf("%s reaches a file through /proc or /dev/fd, which name the files of whichever process opens them; name the file itself", quote(name)))
	}
	if tmp != "" && inTree(p.lexical, tmp) && inTree(p.real, tmp) {
		d = warden.Allowf("fs.session_tmp", fmt.Sprintf("%s is in the session's /tmp, where its commands write too", p.real))
		return g.checkFile(action, p, d)
	}
	d, denied := g.denial(p)
	if !denied {
		d = g.allowance(i, p, cwd)
	}
	if (action == Read || action == List) && (d.Rule == "fs.denied" || d.Rule == "fs.no_rule") && g.publicRead(p) {
		// What every user of the machine may read in a system directory
		// (Go's sources, /usr/include) is read as the shell guard lets
		// a command read it; no sandbox hides it either.
		d = warden.Allowf("fs.public_system", fmt.Sprintf("%s is a system file every user of this machine may read", p.real))
	}
	if action == List && (d.Rule == "fs.public_system" || d.Rule == "fs.tool_cache" || d.Rule == "fs.home_read") {
		// A listing is also a search of the tree (Grep): one that holds
		// a denied path (a token in ~/.cache, ~/.ssh in the home) or
		// warden's home is not the cache's, the home's or the system's
		// to give.
		//
		// A bounded listing that is the system's to give (LS of /etc, a
		// Glob of /usr/lib/*.so) was let past the whole system trees the
		// policy denies (/etc/**: publicRead), which hold the directory
		// it lists: only the other denied paths can be within it.
		if dd, within := g.deniedWithin(p, d.Rule == "fs.public_system" && p.names != nil); within {
			return dd
		}
	}
	return g.checkFile(action, p, d)
}

// inTree reports whether path (absolute, clean, physical or as named) is
// dir, or lies in it, as written or where it really is.
func inTree(path, dir string) bool {
	for _, t := range physical(filepath.Clean(dir)) {
		if path == t || under(path, t) {
			return true
		}
	}
	return false
}

// checkFile is what an allowed read or write of p must also pass: a
// regular file (or a directory), and one whose other names cannot lie
// elsewhere.
func (g *Guard) checkFile(action Action, p target, d warden.Decision) warden.Decision {
	if d.Verdict == warden.Deny || action != Read && action != Write {
		return d
	}
	// p.real has every symlink resolved: Lstat is the file itself.
	fi, err := os.Lstat(p.real)
	if err != nil {
		return d
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() {
		// A FIFO (or a socket, a device) blocks the tool that opens it
		// until someone else opens the other end, for as long as that
		// one likes: what the agent's commands left running can hold a
		// host file tool there past any bound warden puts on it.
		return warden.Denyf("fs.special_file", fmt.Sprintf("%s is not a regular file (%s); an agent's file tools read and write regular files only", p.real, regfile.Kind(fi.Mode())))
	}
	if d.Verdict == warden.Allow && d.Rule != "fs.public_system" {
		// (Another name of a public file reads the same public bytes.)
		if n := hardLinks(fi); n > 1 {
			return warden.Askf("fs.hard_link", fmt.Sprintf("%s has %d hard links; another name for the same file may lie outside every allowed area", p.real, n))
		}
	}
	return d
}

// allowance applies the workspace and the allowed rules to a path that is
// not denied.
func (g *Guard) allowance(i int, p target, cwd string) warden.Decision {
	action := Actions[i]
	for _, ws := range g.workspace {
		if p.real == ws || under(p.real, ws) {
			// A workspace the user pointed at a project keeps its
			// protected paths as a project does.
			if rest, ok := strings.CutPrefix(p.real, ws+"/"); ok && (action == Write || action == Delete) && g.isProtected(rest) {
				return warden.Askf("fs.workspace_protected", fmt.Sprintf("%s is a protected path (sandbox.protected_paths, or in a .git directory): the agent host, an editor or git runs what it says, so writing it asks", p.real))
			}
			return warden.Allowf("fs.workspace", fmt.Sprintf("%s is in the workspace %s", p.real, g.workspace[0]))
		}
	}
	rel := g.projectRel(p.real, cwd)
	for _, r := range g.allowed {
		if !r.actions[i] {
			continue
		}
		for k := range r.pats {
			if !r.pats[k].match(p.real, rel) {
				continue
			}
			reason := fmt.Sprintf("%s matches the allowed path %q for %s", p.real, r.text, action)
			if r.level == Auto && (action == Write || action == Delete) && rel != "" && g.isProtected(rel) {
				return warden.Askf("fs.workspace_protected", fmt.Sprintf("%s is a protected path of the project (sandbox.protected_paths, or in a .git directory): the agent host, an editor or git runs what it says, so writing it asks", p.real))
			}
			if r.level == Auto {
				return warden.Allowf("fs.allowed", reason)
			}
			return warden.Askf("fs.allowed_ask", reason+", which asks first")
		}
	}
	if action == Read || action == List {
		// The agent's sandboxed commands read and write the tool caches
		// (a module a build fetched, a package's sources): its file tools
		// read them too. A credential kept there is a denied path.
		for _, c := range g.cacheRoots() {
			if p.real == c || under(p.real, c) {
				return warden.Allowf("fs.tool_cache", fmt.Sprintf("%s is in the tool cache %s, which the agent's commands read and write", p.real, c))
			}
		}
		if g.inHome(p) {
			return warden.Allowf("fs.home_read", fmt.Sprintf("%s is in your home, which the agent's sandboxed commands read but for the denied paths", p.real))
		}
	}
	return warden.Denyf("fs.no_rule", fmt.Sprintf("no rule for %s on %s; add it to filesystem.allowed_paths in the policy, or use the workspace %s", action, p.real, g.workspace[0]))
}

// inHome reports whether p lies in the user's home, as named and where it
// really is, with Policy.ReadHome set. The home itself is in it only for a
// bounded listing of names: a listing of the whole home is a search of
// every project and tool's state (and holds the denied paths anyway).
func (g *Guard) inHome(p target) bool {
	if !g.readHome || g.userHome == "" || g.userHome == "/" {
		return false
	}
	in := func(path string) bool {
		for _, h := range g.userHomes {
			// The home itself only for a bounded listing of names
			// (LS ~, Glob ~/*.md).
			if h != "/" && (under(path, h) || path == h && p.names != nil) {
				return true
			}
		}
		return false
	}
	return in(p.lexical) && in(p.real)
}

// isProtected reports whether rel (relative to the project, slashes) is
// one of g.protected, at the project's root or in any directory below it
// (a monorepo package's .claude/), or lies in a .git directory.
func (g *Guard) isProtected(rel string) bool {
	r := "/" + foldCase(rel)
	if strings.Contains(r+"/", foldCase("/.git/")) {
		return true
	}
	for _, pr := range g.protected {
		if dir, ok := strings.CutSuffix(pr, "/"); ok {
			if strings.Contains(r+"/", "/"+dir+"/") {
				return true
			}
			continue
		}
		if strings.HasSuffix(r, "/"+pr) || strings.Contains(r+"/", "/"+pr+"/") {
			return true
		}
	}
	return false
}

// Denied judges name only against warden's home and the denied paths, for
// callers (the shell guard) that have zones of their own for the rest. A path
// it cannot judge is not denied here.
func (g *Guard) Denied(name, cwd string) (warden.Decision, bool) {
	p, _, ok := g.target(Read, name, cwd, false)
	if !ok {
		return warden.Decision{}, false
	}
	return g.denial(p)
}

// DeniedWithin judges dir as a tree that a program reads whole (tar c,
// cp -r, grep -r): whether warden's home or a path the policy denies lies
// inside it. dir itself is Denied's to judge. Patterns that match anywhere
// ("**/…") are not counted, since any tree may hold a match (the sandbox
// masks those); a path it cannot judge is not reported here.
func (g *Guard) DeniedWithin(dir, cwd string) (warden.Decision, bool) {
	t, _, ok := g.target(Read, dir, cwd, false)
	if !ok {
		return warden.Decision{}, false
	}
	return g.deniedWithin(t, false)
}

// deniedWithin is DeniedWithin for the target t; with publicNames (a
// bounded listing the system gives to everyone) the denied whole system
// trees (/etc/**, /usr/**) are not counted.
func (g *Guard) deniedWithin(t target, publicNames bool) (warden.Decision, bool) {
	for _, d := range [2]string{foldCase(t.lexical), foldCase(t.real)} {
		// A bounded listing of names (t.names) shows a denied
		// directory's name, as ls does, and is refused only where it
		// would list what is inside it.
		within := func(r string) bool { return (r == d || under(r, d)) && (t.names == nil || t.enters(d, r)) }
		for _, h := range g.self {
			if within(h) {
				return warden.Denyf("fs.self_within", fmt.Sprintf("%s holds warden's own home (its policy, audit log and keys)", t.real)), true
			}
		}
		for k := range g.denied {
			pt := &g.denied[k]
			if publicNames && pt.systemTree() {
				continue
			}
			if r := pt.root(); r != "" && within(r) {
				return warden.Denyf("fs.denied_within", fmt.Sprintf("%s holds the denied path %q", t.real, pt.text)), true
			}
		}
	}
	return warden.Decision{}, false
}

// target is a path being judged.
type target struct {
	lexical string // absolute and clean, as the request names it
	real    string // after following symlinks
	viaProc bool
	// names are the segments of a bounded listing pattern below the
	// directory (Glob's "*/*.go", LS's "*"): it lists names to that depth
	// and reads no file. Nil for a path, or a listing of the whole tree
	// (Grep, "**").
	names []string
	// literal says the pattern's whole name is also an existing entry,
	// to judge as a path too.
	literal bool
}

// target makes name absolute and resolves it; when that fails it returns the
// deny to give.
//
// A listing's name with glob characters is a pattern, judged below its
// literal directory, unless literal: then it is a path like any other.
// A pattern whose whole name also names an existing entry (a file or
// symlink called "k[e]ys") says so (target.literal).
func (g *Guard) target(action Action, name, cwd string, literal bool) (target, warden.Decision, bool) {
	bad := func(why string) (target, warden.Decision, bool) {
		return target{}, warden.Denyf("fs.invalid_path", why), false
	}
	switch {
	case name == "":
		return bad("the request names no path")
	case strings.IndexByte(name, 0) >= 0:
		return bad(fmt.Sprintf("the path %s has a NUL byte, which no file name can hold", quote(name)))
	case !utf8.ValidString(name):
		return bad(fmt.Sprintf("the path %s is not valid UTF-8", quote(name)))
	case len(name) > PathMax:
		return bad(fmt.Sprintf("the path is %d bytes long; the longest path warden judges is %d bytes", len(name), PathMax))
	case strings.HasPrefix(name, "~") && name != "~" && !strings.HasPrefix(name, "~/"):
		return bad(fmt.Sprintf("%s names another user's home; warden expands only ~ and ~/…, so give the absolute path", quote(name)))
	}
	p := name
	var names []string
	if p == "~" || strings.HasPrefix(p, "~/") {
		if g.userHome == "" {
			return bad(fmt.Sprintf("%s starts with ~ but the user's home directory is unknown; give the absolute path", quote(name)))
		}
		p = g.userHome + p[1:]
	}
	named := false // the pattern's whole name is an entry as written
	if action == List && !literal && strings.ContainsAny(p, "*?[{") {
		whole := p
		if !filepath.IsAbs(whole) && cwd != "" && filepath.IsAbs(cwd) {
			whole = cwd + "/" + whole
		}
		if _, err := os.Lstat(whole); err == nil {
			named = true
		}
		// A listing pattern lists below its literal directory, which is
		// judged; ".." after a wildcard could lead anywhere.
		base, rest := doublestar.SplitPattern(p)
		for _, seg := range strings.Split(rest, "/") {
			if seg == ".." {
				return bad(fmt.Sprintf("the pattern %s has a .. element after a wildcard; list the directory it means", quote(name)))
			}
		}
		if base == "." {
			base = ""
		}
		p = base
		if p == "" {
			p = "."
		}
		names = listedNames(rest)
	}
	if !filepath.IsAbs(p) {
		if cwd == "" || !filepath.IsAbs(cwd) {
			return bad(fmt.Sprintf("%s is relative and the request has no absolute working directory to resolve it against", quote(name)))
		}
		p = cwd + "/" + p // not Join: that would clean away ".." before resolving
	}
	// The name is judged as written (cleaned) and where it really leads:
	// resolution walks the uncleaned path, because ".." after a symlink
	// climbs from the link's target, not from the link.
	t := target{lexical: filepath.Clean(p)}
	r, err := resolve(p)
	switch {
	case errors.Is(err, errLoop):
		return target{}, warden.Denyf("fs.symlink_loop", fmt.Sprintf("%s is a symlink loop (%v)", quote(name), err)), false
	case errors.Is(err, syscall.ENAMETOOLONG):
		return bad(fmt.Sprintf("%s has a name too long for the filesystem", quote(name)))
	case err != nil:
		return target{}, warden.Denyf("fs.unresolvable", fmt.Sprintf("cannot follow the symlinks in %s: %v", quote(name), err)), false
	}
	t.real, t.viaProc, t.names, t.literal = r.path, r.viaProc, names, named
	return t, warden.Decision{}, true
}

// listedNames is what a listing pattern's part below its literal directory
// lists, segment by segment, when it is bounded: names at a fixed depth, no
// "**" (which lists the whole tree) and no brace (whose alternatives may
// hold a slash). Nil for an unbounded one.
func listedNames(rest string) []string {
	if rest == "" || strings.Contains(rest, "**") || strings.ContainsAny(rest, "{}") {
		return nil
	}
	var segs []string
	for _, s := range strings.Split(rest, "/") {
		if s != "" && s != "." {
			segs = append(segs, s)
		}
	}
	return segs
}

// enters reports whether the bounded listing t (t.names set) lists the
// entries of dir (absolute, clean, case-folded), which lies below base (t's
// directory, case-folded): dir's depth below base is less than the
// pattern's, and each of its names on the way matches the pattern's
// segment there. Only its name shows otherwise.
func (t target) enters(base, dir string) bool {
	rel := strings.Split(strings.TrimPrefix(dir, base+"/"), "/")
	if dir == base {
		rel = nil
	}
	if len(rel) >= len(t.names) {
		return false
	}
	for i, name := range rel {
		if ok, err := doublestar.Match(foldCase(t.names[i]), name); err != nil || !ok {
			return err != nil // a pattern it cannot read is taken to match
		}
	}
	return true
}

// denial checks warden's own home and the denied paths, against both the
// path as named and where it really points.
func (g *Guard) denial(t target) (warden.Decision, bool) {
	lex, real := foldCase(t.lexical), foldCase(t.real)
	for _, p := range [2]string{lex, real} {
		if g.isSelf(p) {
			where := t.real
			if p == lex && t.real != t.lexical {
				where = t.lexical + " (really " + t.real + ")"
			}
			return warden.Denyf("fs.self_protect", fmt.Sprintf("%s is in warden's own home (its policy, audit log and keys); an agent may never read or change its own guard", where)), true
		}
	}
	for k := range g.denied {
		pt := &g.denied[k]
		if pt.match(lex, "") || (real != lex && pt.match(real, "")) {
			where := t.real
			if t.real != t.lexical {
				where = t.lexical + " (really " + t.real + ")"
			}
			return warden.Denyf("fs.denied", fmt.Sprintf("%s is in the denied path %q", where, pt.text)), true
		}
	}
	return warden.Decision{}, false
}

func (g *Guard) isSelf(p string) bool {
	for i, h := range g.self {
		if (p == h || under(p, h)) && !(p == g.sandbox[i] || under(p, g.sandbox[i])) {
			return true
		}
	}
	return false
}

// workTreeOf is the nearest of dir (resolved) and the directories above it
// that holds a repository git takes for one (nestedgit.IsRepository),
// below the user's homes (all their names, as nestedgit.WorkTreeOf stops
// at one); dir itself when there is none.
func (g *Guard) workTreeOf(dir string) string {
	for d := dir; d != "/" && !slices.Contains(g.userHomes, d) && d != filepath.Dir(d); d = filepath.Dir(d) {
		if nestedgit.IsRepository(d) {
			return d
		}
	}
	return dir
}

// projectRel returns real relative to the project (cwd, resolved), or "" when
// it is not in the project or cwd cannot be a project: "/" and the user's
// home and its ancestors are too wide to be one; a hidden directory of the
// home (~/.config, ~/.local, ~/.claude…) holds the settings, state and
// credentials of the user's tools, which the host runs from: a working
// directory there (a host that reports one, a cd that persisted) lends its
// files no project rule.
func (g *Guard) projectRel(real, cwd string) string {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return ""
	}
	root, err := resolve(filepath.Clean(cwd))
	if err != nil || root.viaProc || root.path == "/" {
		return ""
	}
	// The project is the git work tree cwd lies in (a session in a
	// package of a monorepo, or one that ran cd sub, edits the
	// repository's root files and its other packages: agent-shapes-13),
	// as the workspace sandbox makes it writable; never the home or above.
	root.path = g.workTreeOf(root.path)
	for _, h := range g.userHomes {
		if h == root.path || under(h, root.path) {
			return ""
		}
		if rest, ok := strings.CutPrefix(root.path, h+"/"); ok && strings.HasPrefix(rest, ".") {
			return ""
		}
	}
	if real == root.path {
		return "."
	}
	rest, ok := strings.CutPrefix(real, root.path+"/")
	if !ok {
		return ""
	}
	return rest
}

// under reports whether p lies strictly below dir.
func under(p, dir string) bool {
	if dir == "/" {
		return p != "/" && strings.HasPrefix(p, "/")
	}
	return strings.HasPrefix(p, dir) && len(p) > len(dir) && p[len(dir)] == '/'
}

func isStdio(p string) bool {
	switch p {
	case "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/fd":
		return true
	}
	return false
}

// quote shows a path in a reason: whole when it has at most 200 runes (bytes
// that are not UTF-8 shown as escapes), otherwise its first 200 runes and its
// length in bytes.
func quote(p string) string {
	if utf8.RuneCountInString(p) > 200 {
		return fmt.Sprintf("%q (%d bytes)", clip.String(p, 200), len(p))
	}
	return fmt.Sprintf("%q", p)
}
