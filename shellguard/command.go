package shellguard

import (
	"fmt"
	"net"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/shellguard/walk"
)

// cmdCtx is one simple command being classified.
type cmdCtx struct {
	c    *ctx
	cmd  *walk.Command
	name string      // program name (base name)
	args []walk.Word // argv[1:]
	z    zoner
	out  []finding
	// netJudged is set once a handler has judged the command's network
	// destinations itself, so the generic URL scan leaves them alone.
	netJudged bool
	// netTargets counts the destinations the command's network was judged
	// for, ownLoopback those that are the sandbox's own loopback.
	netTargets, ownLoopback int
	// gitTree is git's --work-tree, when given.
	gitTree string
	// gitDir is set when git is given --git-dir, or -c core.… (such as
	// core.worktree), include.… or submodule.… (submodule.recurse): it may
	// act on another repository or work tree than the working directory's.
	gitDir bool
}

func (cc *cmdCtx) say(v warden.Verdict, rule, reason string) *finding {
	cc.out = append(cc.out, finding{v: v, rule: rule, reason: reason})
	return &cc.out[len(cc.out)-1]
}

// effect applies the effect×zone table to one path operand, after the
// filesystem policy's denied paths.
func (cc *cmdCtx) effect(e Effect, w walk.Word) {
	if cc.deniedPath(w, effectVerb(e)) {
		return
	}
	zn := cc.zone(w)
	if len(cc.z.alts) > 0 && !w.Dynamic && !path.IsAbs(w.Value) && !strings.HasPrefix(w.Value, "~") {
		// An earlier cd may not have run: the path is judged in each
		// directory the command may run in, by the strictest.
		unknown := cc.z
		for i, d := range unknown.alts {
			cc.z.cwd = d
			if az := cc.zone(w); i == 0 || cc.c.p.lookup(e, az).Stronger(cc.c.p.lookup(e, zn)) {
				zn = az
			}
		}
		cc.z = unknown
	}
	if zn == ZoneUnknown && w.Input && fedByPipe(cc.cmd) {
		// xargs sed -i …: the operand is a path the producer before the
		// pipe prints (grep -rl X src, find . -name …), in its zones; not
		// one built around it (../{}, {}{}) or read from a file (xargs -a).
		if fz := cc.c.feeds[cc.cmd.Pipeline]; len(fz) > 0 {
			for _, z := range fz {
				if v := cc.c.p.lookup(e, z); v != warden.Allow {
					cc.say(v, fmt.Sprintf("shell.%s.%s", e, z), fmt.Sprintf("%s would %s paths fed to it from %s", cc.name, effectVerb(e), z)).destructive = true
				}
			}
			return
		}
	}
	if e == EffDelete && w.Glob && zn.isHome() {
		e = EffDeleteRec
	}
	if e == EffWrite && !w.Dynamic && cc.z.isTempRoot(w.Value) {
		// Written to as a whole (tar -C /tmp, rsync -a src/ /tmp/,
		// install -t /tmp, ln -s x /tmp/), a temporary directory only
		// gets entries, which any of its entries is, or new times; it
		// cannot be replaced. Removing or opening it up is judged as
		// before.
		zn = ZoneTemp
	}
	if zn == ZoneHomeSensitive && (e == EffWrite || e == EffDelete || e == EffDeleteRec) && !w.Dynamic {
		// Writing, moving or removing a project's own .env file, or a
		// development key and certificate in /tmp (openssl req -keyout
		// /tmp/key.pem), is routine, as for any other file there;
		// reading one into a network sink is what the secret zone
		// guards.
		switch {
		case cc.z.inWorkspace(w.Value):
			zn = ZoneWorkspaceOther
		case cc.z.inTemp(w.Value):
			zn = ZoneTemp
		}
	}
	v := cc.c.p.lookup(e, zn)
	if cc.c.env.Explain {
		cc.c.trace = append(cc.c.trace, cc.name+" "+strconv.Quote(w.Value)+": "+e.String()+" in "+zn.String())
	}
	if v == warden.Allow {
		return
	}
	if cc.containedWrite(e, w, zn) {
		cc.say(warden.Allow, "shell.write.dynamic", fmt.Sprintf("%s would write to %s; it runs in the workspace sandbox, where only the project (but its protected paths), the session's /tmp and the tool caches are writable", cc.who(), describe(w)))
		return
	}
	// One file removed at a path only known at run time (rm
	// "$(go env GOCACHE)/probe", rm -f "$tmp"), as interpreter code's
	// deletes: where the sandbox holds the write and the project is
	// saved first.
	if e == EffDelete && cc.containedWrite(EffWrite, w, zn) && cc.saveProject() {
		cc.say(warden.Allow, "shell.delete.dynamic_saved", fmt.Sprintf("%s would delete %s; it runs in the workspace sandbox, which lets it delete only in the project, the session's /tmp and the tool caches, and warden saves the project's work tree first (`warden undo` brings it back, but for ignored files)", cc.who(), describe(w)))
		return
	}
	// A tree removed at a path with a literal directory of the project
	// (or another place a plain write is allowed) before its computed
	// part, quoted so it stays one word that cannot be an option (rm -rf
	// "release/$name-$version"): held by the sandbox as above, the
	// project saved first; a computed part that climbs out with .. can
	// reach only what the sandbox lets it write (agent-shapes-20).
	if e == EffDeleteRec && w.Dynamic && !w.Splits && !w.Glob && strings.Contains(w.Prefix, "/") && !strings.HasPrefix(w.Prefix, "-") &&
		cc.containedWrite(EffWrite, w, zn) && cc.saveProject() {
		cc.say(warden.Allow, "shell.delete_recursive.dynamic_saved", fmt.Sprintf("%s would delete %s; it runs in the workspace sandbox, which lets it delete only in the project, the session's /tmp and the tool caches, and warden saves the project's work tree first (`warden undo` brings it back, but for ignored files)", cc.who(), describe(w)))
		return
	}
	f := cc.say(v, fmt.Sprintf("shell.%s.%s", e, zn), fmt.Sprintf("%s would %s %s (%s)", cc.who(), effectVerb(e), describe(w), zn))
	f.destructive = true
	if e == EffDeleteRec && zn == ZoneWorkspaceOther && v == warden.Ask && cc.savableDelete(w) {
		f.saves = cc.z.ws
	}
}

// who names the command in a reason: its program, or "a redirection" for
// a redirection judged before the program is known (> file, or one of a
// command with none).
func (cc *cmdCtx) who() string {
	if cc.name == "" {
		return "a redirection"
	}
	return cc.name
}

// containedWrite reports whether a write (not a delete) to operand w,
// whose path is only known at run time, runs where the workspace sandbox
// holds it: that holds every write to the project, the session's /tmp and
// the tool caches, the same places a plainly written path may be written
// without asking. A path with a literal directory before its computed part
// ("logs/$s.log", "/tmp/x-$n", build/"$f") is one where a plain write into
// that directory is allowed (the project, the session's /tmp, a cache);
// elsewhere it keeps its zone's verdict (/etc/$X, ~/.config/$X, .git/$X),
// as do a path fed through a pipe (xargs), a run with elevated privileges,
// no sandbox, and the strict policy. What the computed part adds (a "..",
// a symlink) is the sandbox's to hold.
func (cc *cmdCtx) containedWrite(e Effect, w walk.Word, zn Zone) bool {
	p := cc.c.p
	if e != EffWrite || !w.Dynamic || w.Input || cc.cmd.Privileged || !p.SandboxAvailable || !p.AllowTaskRunners {
		return false
	}
	if w.Prefix != "" {
		// The zone of a name in the prefix's directory.
		dir := "."
		if i := strings.LastIndexByte(w.Prefix, '/'); i >= 0 {
			dir = w.Prefix[:i+1]
		}
		if strings.HasPrefix(dir, "~") && !strings.HasPrefix(dir, "~/") || strings.ContainsAny(dir, "*?[") {
			return false
		}
		return p.lookup(EffWrite, cc.z.path(path.Join(dir, "x"))) == warden.Allow
	}
	raw := w.Raw // inside a code string: the word itself
	if raw == "" {
		raw = cc.c.raw(w)
	}
	r := strings.Trim(raw, `"`)
	if !strings.HasPrefix(r, "$(") && !strings.HasPrefix(r, "`") && !strings.HasPrefix(r, "$") {
		return false
	}
	return zn == ZoneUnknown || zn == ZoneRoot
}

// savableDelete reports whether a recursive delete of operand w removes
// files of the project that a snapshot of its work tree holds, so that
// where the caller saves one first (Env.Snapshots, in a git work tree:
// Env.GitWorkTree) it is allowed (see
// ctx.saved): a path written plainly (not only known at run time) that
// lies in the project below its root and outside .git, and not a glob
// that matches every entry of a directory (rm -rf *, src/*), which asks.
// Ignored files under it are not in a snapshot (they are build output and
// dependencies far more often than work), nor is the work of a nested
// repository.
func (cc *cmdCtx) savableDelete(w walk.Word) bool {
	if !cc.c.env.GitWorkTree || w.Dynamic || w.Value == "" || strings.Contains(w.Value, "..") || !cc.z.inWorkspace(w.Value) {
		return false
	}
	if w.Glob {
		last := w.Value[strings.LastIndexByte(strings.TrimRight(w.Value, "/"), '/')+1:]
		if strings.Trim(last, "*?./") == "" || strings.HasPrefix(last, "[") && strings.Trim(last[strings.IndexByte(last, ']')+1:], "*?./") == "" {
			return false
		}
	}
	p := w.Value
	if !strings.HasPrefix(p, "/") {
		p = cc.z.cwd + "/" + p
	}
	return cc.inProject(path.Clean(p))
}

// deniedPath denies a path operand the filesystem policy denies and reports
// whether it did; verb says what the command would do to it.
func (cc *cmdCtx) deniedPath(w walk.Word, verb string) bool {
	p, cwd, ok := cc.judgeable(w)
	if !ok {
		return false
	}
	judge := cc.c.p.Paths.Denied
	if verb == "read" {
		judge = cc.c.p.Paths.DeniedToRead
	}
	d, denied := judge(p, cwd)
	if !denied {
		return false
	}
	cc.say(warden.Deny, "shell.denied_path", fmt.Sprintf("%s would %s %s: %s", cc.name, verb, describe(w), d.Reason)).destructive = true
	return true
}

// deniedWithin asks about a directory operand that the command reads as a
// whole tree when a denied path (or warden's home) lies inside it, and marks
// the line as reading secrets, so a network sink in it is an exfiltration.
// It reports whether it asked.
func (cc *cmdCtx) deniedWithin(w walk.Word) bool {
	p, cwd, ok := cc.judgeable(w)
	if !ok {
		return false
	}
	d, within := cc.c.p.Paths.DeniedWithin(p, cwd)
	if !within {
		return false
	}
	cc.say(warden.Ask, "shell.denied_path_within", fmt.Sprintf("%s would read everything in %s, and %s; name the files it needs instead", cc.name, describe(w), d.Reason))
	cc.c.markSecretRead(cc.cmd)
	return true
}

// judgeable returns the path to give the filesystem policy for operand w and
// the working directory to resolve it against. Operands only known at run
// time are left to the zones; a glob is judged by its literal directory.
func (cc *cmdCtx) judgeable(w walk.Word) (p, cwd string, ok bool) {
	if cc.c.p.Paths == nil || w.Dynamic || w.Value == "" || w.Value == "-" || strings.HasPrefix(w.Value, "-") && !w.Glob {
		return "", "", false
	}
	p = w.Value
	if w.Glob {
		i := strings.IndexAny(p, "*?[")
		j := strings.LastIndexByte(p[:i], '/')
		if j < 0 {
			return "", "", false // a glob in the working directory: its entries are judged by zone
		}
		p = p[:j+1]
	}
	cwd = cc.z.cwd
	if cwd != "" && !strings.HasPrefix(cwd, "/") {
		cwd = ""
	}
	return p, cwd, true
}

func effectVerb(e Effect) string {
	switch e {
	case EffDelete:
		return "delete"
	case EffDeleteRec:
		return "recursively delete"
	case EffWrite:
		return "write to"
	case EffPerm:
		return "change permissions of"
	case EffPermRec:
		return "recursively change permissions of"
	case EffDevice:
		return "overwrite the device or filesystem at"
	}
	return "touch"
}

func describe(w walk.Word) string {
	if w.Dynamic {
		return "a path only known at run time"
	}
	return fmt.Sprintf("%q", w.Value)
}

// zone resolves a path operand, with the line's knowledge of temp variables
// and placeholders.
func (cc *cmdCtx) zone(w walk.Word) Zone {
	if w.Dynamic {
		raw := cc.c.raw(w)
		// A process substitution, >(cmd) or <(cmd), is a pipe the shell
		// names /dev/fd/N; the command in it is judged on its own.
		if (strings.HasPrefix(raw, ">(") || strings.HasPrefix(raw, "<(")) && strings.HasSuffix(raw, ")") {
			return ZoneNull
		}
		if w.FedBy != (walk.Span{}) && cc.c.fedArtifacts(w.FedBy) {
			// one whole item a find printing only build output with
			// -print0 gave mapfile -d '' or read -r -d '' (agent-shapes-18)
			return ZoneWorkspaceArtifact
		}
		if p, ok := walk.TempPath(w); ok && !w.Glob {
			// d=$(mktemp -d); "$d/x": under the temporary directory
			// (the walk follows d; "$d/../.." is not this)
			return cc.zone(walk.Word{Value: strings.ReplaceAll(p, "${WARDEN_INPUT}", "tmp.name")})
		}
	}
	if !w.Dynamic && w.Value == "{}" {
		if strings.HasPrefix(cc.cmd.Via, "find") {
			for _, s := range cc.c.artifactFinds {
				if s.Start <= cc.cmd.Span.Start && cc.cmd.Span.End <= s.End {
					return ZoneWorkspaceArtifact // its start paths are judged by find's own rule
				}
			}
			return ZoneWorkspaceOther
		}
		return ZoneUnknown
	}
	return cc.z.word(w, cc.c.raw(w))
}

// worktreesBeside are the worktrees the line's git worktree add commands
// so far make beside the project's work tree (Env.Root), not hidden or
// node_modules: the workspace sandbox makes each writable for the run
// (where it judges it may: app's makeWorktrees), so the commands after the
// add work in them as in the workspace. Without a sandbox, none.
func (c *ctx) worktreesBeside() []string {
	if c.env.Root == "" || !c.p.SandboxAvailable || len(c.worktreeAdds) == 0 {
		return nil
	}
	parent := path.Dir(path.Clean(c.env.Root))
	var out []string
	for _, wt := range c.worktreeAdds {
		base := path.Base(wt)
		if path.Dir(wt) == parent && !strings.HasPrefix(base, ".") && base != "node_modules" {
			out = append(out, wt)
		}
	}
	return out
}

// command classifies one simple command.
func (c *ctx) command(cmd *walk.Command) {
	cc := &cmdCtx{c: c, cmd: cmd, z: newZoner(cmd, c.env, c.p)}
	if added := c.worktreesBeside(); len(added) > 0 {
		cc.z.worktrees = append(slices.Clone(cc.z.worktrees), added...)
	}
	if p, ok := walk.TempCwd(cmd.CwdVar); ok && cmd.CwdDynamic {
		// cd "$d" after d=$(mktemp -d): a temporary directory the line
		// made (the walk follows d).
		cc.z.cwd = strings.ReplaceAll(p, "${WARDEN_INPUT}", "$tmp")
	}
	if c.env.Explain {
		c.trace = append(c.trace, traceCmd(cmd))
	}
	c.redirects(cc)
	if len(cmd.Argv) == 0 {
		c.flush(cc)
		return
	}
	a0 := cmd.Argv[0]
	cc.args = cmd.Argv[1:]
	if strings.HasPrefix(cmd.Via, "find") {
		// find -exec fills {} with each path it finds.
		args := make([]walk.Word, len(cc.args))
		for i, w := range cc.args {
			if w.Dynamic && strings.Contains(c.raw(w), "{}") {
				w = walk.Word{Value: "{}", Span: w.Span}
			}
			args[i] = w
		}
		cc.args = args
	}
	if a0.Dynamic {
		raw := c.raw(a0)
		if a0.Raw != "" {
			raw = a0.Raw // inside a code string: the word itself
		}
		if p, ok := walk.TempPath(a0); ok && !a0.Glob && c.tempProgram(raw) != "" {
			// "$out/calc" after out=$(mktemp -d): a program file in a
			// temporary directory the line made, whatever its name (the
			// walk follows out; the text says it is named plainly).
			cc.name = path.Base(p)
			c.unknownProgram(cc)
			daemonWrappers(cc)
			cc.scanURLs()
			c.flush(cc)
			return
		}
		if name := unknownFileName(a0.FileName()); name != "" {
			// "build/$v/wc2": a file named wc2, in a directory only
			// known at run time; no program the guard knows, so
			// judged as any unknown program is, wherever it lies.
			cc.name = name
			c.unknownProgram(cc)
			daemonWrappers(cc)
			cc.scanURLs()
			c.flush(cc)
			return
		}
		name := toolPathProgram(raw)
		if name == "" {
			c.dynamicProgram(cc)
			c.flush(cc)
			return
		}
		a0 = walk.Word{Value: name, Span: a0.Span}
	}
	cc.name = progName(a0.Value)
	switch {
	case c.userPatterns(cc):
	case packageRunner(cmd) != "" && lookupSpec(cc.name) == nil:
		registryPackage(cc, packageRunner(cmd), a0.Value)
	case strings.Contains(a0.Value, "/") && !strings.HasPrefix(a0.Value, "/"):
		c.projectPath(cc, a0.Value)
	case lookupSpec(cc.name) != nil:
		lookupSpec(cc.name)(cc)
	default:
		c.unknownProgram(cc)
	}
	daemonWrappers(cc)
	cc.scanURLs()
	cc.proxyAssigns()
	c.flush(cc)
}

// flush records a command's findings, escalating destructive ones under
// privilege.
func (c *ctx) flush(cc *cmdCtx) {
	if cc.netTargets > 0 && cc.netTargets == cc.ownLoopback {
		if c.ownLoopbackOnly == nil {
			c.ownLoopbackOnly = map[*walk.Command]bool{}
		}
		c.ownLoopbackOnly[cc.cmd] = true
	}
	for _, f := range cc.out {
		if cc.cmd.Privileged && f.destructive && (f.v == warden.Ask || f.v == warden.Sandbox) {
			f.v = warden.Deny
			f.reason += ", with elevated privileges"
		}
		c.saved(&f)
		c.add(f, cc.cmd.Span)
	}
}

func traceCmd(cmd *walk.Command) string {
	var b strings.Builder
	b.WriteString("argv:")
	for _, w := range cmd.Argv {
		b.WriteByte(' ')
		if w.Dynamic {
			b.WriteString("<dyn ")
			b.WriteString(strconv.Quote(w.Value))
			b.WriteByte('>')
		} else {
			b.WriteString(strconv.Quote(w.Value))
		}
	}
	if len(cmd.Wrappers) > 0 {
		b.WriteString(" wrappers=" + strings.Join(cmd.Wrappers, ","))
	}
	if cmd.Via != "" {
		b.WriteString(" via=" + strconv.Quote(cmd.Via))
	}
	if cmd.Privileged {
		b.WriteString(" privileged")
	}
	if cmd.Cwd != "" {
		b.WriteString(" cwd=" + strconv.Quote(cmd.Cwd))
	}
	return b.String()
}

// redirects classifies a command's file redirections.
func (c *ctx) redirects(cc *cmdCtx) {
	for _, r := range cc.cmd.Redirects {
		if r.IsBody {
			continue
		}
		t := r.Target
		if !t.Dynamic && (t.Value == "-" || isFdNumber(t.Value)) && (r.Op == ">&" || r.Op == "<&") {
			continue
		}
		zn := cc.zone(t)
		if zn == ZoneNetwork {
			if host, port, ok := devSocket(t); ok && loopbackHost(host) && c.p.SandboxAvailable && !cc.cmd.Privileged {
				// </dev/tcp/127.0.0.1/$port: a port probe of the session's
				// own server, in the sandbox's own loopback.
				if port == "" {
					cc.netJudged = true
					continue
				}
				cc.network(net.JoinHostPort(host, port), "")
				continue
			}
			cc.say(warden.Deny, "shell.net_socket", "a redirection opens a network socket (/dev/tcp), the shape of a reverse shell").destructive = true
			continue
		}
		switch r.Op {
		case "<", "<&", "<>":
			cc.deniedPath(t, "read")
			if r.Op != "<>" {
				continue
			}
		case "<<<", "<<", "<<-":
			continue
		}
		cc.effect(EffWrite, t)
	}
}

// devSocket is the host and port of a redirection to bash's /dev/tcp or
// /dev/udp, the host written out (port "" when only known at run time).
func devSocket(t walk.Word) (host, port string, ok bool) {
	known := t.Value
	if t.Dynamic {
		known = t.Prefix
	}
	rest, found := strings.CutPrefix(known, "/dev/tcp/")
	if !found {
		if rest, found = strings.CutPrefix(known, "/dev/udp/"); !found {
			return "", "", false
		}
	}
	host, port, found = strings.Cut(rest, "/")
	if !found || host == "" || strings.Contains(port, "/") || t.Dynamic && port != "" {
		return "", "", false
	}
	return host, port, true
}

// loopbackHost reports whether host is a loopback address or localhost.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func isFdNumber(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// toolDirQuery is a program path whose unknown part is a toolchain's
// answer to where its own directories are ("$(go env GOPATH)/bin/calc",
// $(npm root)/.bin/eslint, $(python3 -m site --user-base)/bin/x), or a
// lookup of a program by name ($(which calc), "$(command -v calc)"), and
// nothing else: the program's name is written plainly. Compiled on first
// use (docs/benchmarks.md, cold start).
var toolDirQuery = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^"?\$\((?:go env (?:GOPATH|GOBIN|GOROOT)|npm (?:root|prefix|bin)(?: -g)?|pnpm (?:root|bin)(?: -g)?|yarn (?:global )?bin|python3? -m site --user-base|git rev-parse --show-toplevel|pwd)\)((?:/[A-Za-z0-9._+-]+)+)"?$|^"?\$\((?:which|command -v) ([A-Za-z0-9._+-]+)\)"?$`)
})

// unknownFileName returns name when it is the file name of no program the
// guard knows (nor a package runner), else "".
func unknownFileName(name string) string {
	if name == "" || lookupSpec(name) != nil || packageRunners.has(name) {
		return ""
	}
	return name
}

// toolPathProgram returns the name of the program a program word only
// known at run time runs when its raw text is a toolDirQuery and that name
// is no program the guard knows: it is then judged as an unknown program
// (it runs in the workspace sandbox), as the same binary on the PATH would
// be. It returns "" for anything else: a known program (bash, git, rm),
// whose arguments the walk did not read as that program's, stays a program
// only known at run time, as does a path that climbs (..).
func toolPathProgram(raw string) string {
	return unknownFileName(toolPathName(raw))
}

// toolPathName is the program name a toolDirQuery names, or "".
func toolPathName(raw string) string {
	m := toolDirQuery().FindStringSubmatch(raw)
	switch {
	case m == nil:
		return ""
	case m[2] != "":
		return m[2]
	}
	if strings.Contains(m[1], "/..") || strings.HasSuffix(m[1], "/.") {
		return ""
	}
	name := m[1][strings.LastIndexByte(m[1], '/')+1:]
	if name == "" || strings.Trim(name, ".") == "" {
		return ""
	}
	return name
}

// tempProgram is the file name of a program word that is a path in a
// directory this line made with mktemp ("$d/calc", ${d}/bin/app, with d
// from $(mktemp -d)), the rest written plainly (no other variable, no ..);
// "" otherwise.
func (c *ctx) tempProgram(raw string) string {
	raw = strings.Trim(raw, `"`)
	for _, v := range c.mktempVars {
		for _, pre := range []string{"$" + v + "/", "${" + v + "}/"} {
			rest, ok := strings.CutPrefix(raw, pre)
			if !ok || rest == "" || strings.ContainsAny(rest, "$`\"*?[{'") || strings.HasSuffix(rest, "/") {
				continue
			}
			if slices.Contains(strings.Split(rest, "/"), "..") {
				return ""
			}
			return path.Base(rest)
		}
	}
	return ""
}

// dynamicProgram handles a program name only known at run time.
func (c *ctx) dynamicProgram(cc *cmdCtx) {
	rec := false
	danger := false
	for _, w := range cc.args {
		if w.Dynamic {
			continue
		}
		v := w.Value
		if strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.ContainsAny(v, "rR") || strings.HasPrefix(v, "--rec") {
			rec = true
			continue
		}
		if zn := cc.zone(w); zn.dangerous() || zn.isHome() {
			danger = true
		}
	}
	if rec && danger {
		cc.say(warden.Deny, "shell.dynamic_program.destructive", "a program only known at run time is given a recursive flag and a home or system path").destructive = true
		return
	}
	cc.say(warden.Ask, "shell.dynamic_program", "the program name is only known at run time")
}

// unknownProgram handles a program with no spec.
func (c *ctx) unknownProgram(cc *cmdCtx) {
	if c.funcDefined(cc.name) {
		return // a function defined in this line; Walk classifies its body
	}
	for _, w := range cc.args {
		if !w.Dynamic && w.Value != cc.name && lookupSpec(w.Value) != nil && destructivePrograms.has(w.Value) {
			cc.say(warden.Ask, "shell.unknown_wrapper", fmt.Sprintf("%s is unknown and is given the destructive program %s as an argument", cc.name, w.Value))
			return
		}
	}
	cc.unseen("shell.unknown_program", cc.name+" is not a known program")
}

// unseen judges code the guard cannot see but that is not suspicious by
// itself (an unknown program, a script, a program file): it is allowed, to
// run in the workspace sandbox, with rule naming why. It is asked about when
// no sandbox can contain it or it runs with elevated privileges (which no
// sandbox grants), and goes to the guard sandbox under the strict policy
// (AllowTaskRunners off).
func (cc *cmdCtx) unseen(rule, what string) {
	p := cc.c.p
	switch {
	case cc.cmd.Privileged:
		cc.say(warden.Ask, rule, what+", and it would run with elevated privileges, which no sandbox grants")
	case !p.AllowTaskRunners:
		cc.say(warden.Sandbox, rule, what+"; the strict policy runs code the guard cannot see in the guard sandbox")
	case !p.SandboxAvailable:
		cc.say(warden.Ask, rule, what+"; no sandbox is available to contain it")
	default:
		cc.say(warden.Allow, rule, what+"; it runs in the workspace sandbox")
	}
}

// funcDefined reports whether the line defines a shell function name.
func (c *ctx) funcDefined(name string) bool {
	for i := range c.walk.Commands {
		if c.walk.Commands[i].Via == "function "+name {
			return true
		}
	}
	return strings.Contains(c.src, name+"()") || strings.Contains(c.src, name+" ()") || strings.Contains(c.src, "function "+name)
}

// projectPath handles ./x and bin/x: project code. The wrapper scripts of
// known build tools (./gradlew, ./mvnw) are judged as those tools.
func (c *ctx) projectPath(cc *cmdCtx, p string) {
	switch cc.name {
	case "gradlew", "mvnw":
		lookupSpec(cc.name)(cc)
		return
	}
	if slices.Contains(shellNames, cc.name) && cc.cmd.PipePos > 0 && !cc.cmd.StdinKnown && readsCodeFromStdin(cc.args) && !c.netPipedInto(cc.cmd) {
		// A shell by its name (a copy of sh in the project) reading code
		// piped in is what sh reading it is (interp.go).
		cc.say(warden.Sandbox, "shell.stdin_code", p+" runs code piped in from another command, the shape of an obfuscated payload; it runs in the guard sandbox").destructive = true
		return
	}
	q := strings.TrimPrefix(p, "./")
	if c.p.AllowTaskRunners && (strings.HasPrefix(q, "scripts/") || strings.HasPrefix(q, "script/")) && !strings.Contains(q, "..") {
		return
	}
	cc.unseen("shell.project_script", p+" is project code the guard cannot see")
}

// readsCodeFromStdin reports whether a shell given args reads its code
// from stdin: no -c and no script operand (options only, or -s).
func readsCodeFromStdin(args []walk.Word) bool {
	for _, a := range args {
		if a.Dynamic || a.Value == "-c" || !strings.HasPrefix(a.Value, "-") || strings.HasPrefix(a.Value, "-") && !strings.HasPrefix(a.Value, "--") && strings.Contains(a.Value, "c") {
			return false
		}
		if a.Value == "-s" || a.Value == "--" {
			return true
		}
	}
	return true
}

// packageRunners are the wrappers that fetch a package from a registry and
// run it (Walk unwraps them: the package is the command's program).
var packageRunners = setOf("npx", "pnpx", "bunx", "uvx", "npm exec", "pipx run")

// packageRunner returns the package runner a command was reached through,
// or "".
func packageRunner(cmd *walk.Command) string {
	for _, w := range cmd.Wrappers {
		if packageRunners.has(w) {
			return w
		}
	}
	return ""
}

// registryPackage judges a package a package runner fetches and runs: a
// known development tool is a task runner; anything else is code fetched
// from a registry that the guard cannot see. That is an unknown program,
// not a suspicious one (issue 22): it runs in the workspace sandbox, as
// the same package installed with npm install and run from node_modules
// would, fetched through the egress proxy, which judges the registry's
// host by the network policy. It asks where no sandbox can contain it and
// goes to the guard sandbox under the strict policy (see unseen).
func registryPackage(cc *cmdCtx, runner, pkg string) {
	if strings.HasPrefix(pkg, ".") || strings.HasPrefix(pkg, "/") {
		cc.unseen("shell.project_script", runner+" runs "+pkg+", project code the guard cannot see")
		return
	}
	if knownDevTool(pkg) {
		taskRunner(cc)
		return
	}
	cc.unseen("shell.package_runner", fmt.Sprintf("%s runs the registry package %s, code fetched through the egress proxy that the guard cannot see", runner, pkg))
}

// daemonWrappers asks about a command run through a container or cluster
// wrapper (docker run/exec, kubectl exec): the daemon that runs it is
// outside warden's sandbox.
func daemonWrappers(cc *cmdCtx) {
	for _, w := range cc.cmd.Wrappers {
		if strings.HasPrefix(w, "docker ") || strings.HasPrefix(w, "podman ") || strings.HasPrefix(w, "kubectl ") {
			cc.leaves(w + " runs the command through a container or cluster daemon, outside warden's sandbox")
			return
		}
	}
}

// userPatterns applies the policy's extra patterns; it reports whether a
// Safe pattern decided the command.
func (c *ctx) userPatterns(cc *cmdCtx) bool {
	match := func(pat string) bool {
		ws := strings.Fields(pat)
		if len(ws) == 0 || len(ws) > len(cc.cmd.Argv) {
			return false
		}
		if ws[0] != cc.name && ws[0] != cc.cmd.Argv[0].Value {
			return false
		}
		for i := 1; i < len(ws); i++ {
			if cc.cmd.Argv[i].Dynamic || cc.cmd.Argv[i].Value != ws[i] {
				return false
			}
		}
		return true
	}
	for _, pat := range c.p.Destructive {
		if match(pat) {
			cc.say(warden.Deny, "shell.user.destructive", fmt.Sprintf("the policy marks %q as destructive", pat)).destructive = true
		}
	}
	for _, pat := range c.p.Suspicious {
		if match(pat) {
			cc.say(warden.Sandbox, "shell.user.suspicious", fmt.Sprintf("the policy marks %q as suspicious", pat))
		}
	}
	if len(cc.out) > 0 {
		return true
	}
	if lookupSpec(cc.name) == nil {
		for _, pat := range c.p.Safe {
			if match(pat) {
				if c.env.Explain {
					c.trace = append(c.trace, "user safe pattern "+pat)
				}
				return true
			}
		}
	}
	return false
}
