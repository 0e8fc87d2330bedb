package shellguard

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/shellguard/walk"
)

// Result is the classification of one command line.
type Result struct {
	Verdict warden.Verdict
	// Rule is the stable id of the deciding rule, e.g. "shell.rm.home_root".
	Rule string
	// Reason is one sentence a user and an agent can act on.
	Reason string
	// Span locates the deciding command in the input.
	Span walk.Span
	// Suggestion is a safer alternative, one that itself classifies to a
	// weaker verdict (git push --force-with-lease asks where --force is
	// denied), or "".
	Suggestion string
	// Rewrite is the command line after the policy's replacements, or "".
	Rewrite string
	// Snapshot lists the git work trees (absolute directories) whose
	// uncommitted work the command discards, to be saved before it runs:
	// set only under Env.Snapshots, for the discards it allowed for that.
	Snapshot []string
	// GitConfig says the line is git commands only, at least one of which
	// writes the repository's own configuration (git branch -m, remote
	// add, config, checkout -b with tracking, submodule add): warden exec
	// runs it in a sandbox of its own where the project's .git/config is
	// writable, and takes back any key that would run a program after.
	GitConfig bool
	// GitWorktrees says the line removes a linked worktree (git worktree
	// remove, without --force): warden exec runs it in a sandbox of its
	// own where the worktree's git directory may be removed.
	GitWorktrees bool
	// Worktrees are the directories the line's git worktree add commands
	// make (absolute, as written): warden exec runs the line in a sandbox
	// of its own where each, beside the project, is writable.
	Worktrees []string
	// RemovedWorktrees are the directories the line's git worktree
	// remove commands name (absolute, as written; none for a path only
	// known at run time).
	RemovedWorktrees []string
	// Trace lists the parsed argv after unwrapping, zones and rules
	// consulted, for --explain.
	Trace []string
}

// walkFn is the walker; tests and wiring may replace it.
var walkFn func(string, walk.Options) walk.Result = walk.Walk

// maxDepth bounds recursion into code strings found by the classifier.
const maxDepth = 6

// Classify decides a shell command line. It never panics and never allows
// what it could not understand: walk issues, parse errors and internal
// failures give ask (deny when env.Autonomous).
func Classify(cmd string, env Env, p Policy) Result {
	r := classifyTop(cmd, env, &p, true)
	return r
}

func classifyTop(cmd string, env Env, p *Policy, suggest bool) (res Result) {
	defer func() {
		if e := recover(); e != nil {
			res = failure(env, "shell.internal", fmt.Sprintf("the shell guard failed on this command (%v); a human must review it", e))
		}
	}()
	res = classifyDepth(cmd, env, p, 0)
	if rw := rewrite(cmd, p.Replacements); rw != "" && rw != cmd {
		r2 := classifyDepth(rw, env, p, 0)
		snap := append(res.Snapshot, r2.Snapshot...)
		if r2.Verdict.Stronger(res.Verdict) {
			r2.Trace = append(res.Trace, r2.Trace...)
			res = r2
		}
		res.Snapshot = compactTrees(snap)
		res.Rewrite = rw
	}
	res.Verdict = p.final(res.Verdict)
	if env.Autonomous && res.Verdict == warden.Ask && isFailureRule(res.Rule) {
		res.Verdict = warden.Deny
	}
	if res.Suggestion != "" {
		if !suggest || !res.Verdict.Stronger(classifyTop(res.Suggestion, env, p, false).Verdict) {
			res.Suggestion = ""
		}
	}
	return res
}

func isFailureRule(rule string) bool {
	switch rule {
	case "shell.internal", "shell.parse_error", "shell.budget", "shell.walk_issue", "shell.no_parser":
		return true
	}
	return false
}

func failure(env Env, rule, reason string) Result {
	v := warden.Ask
	if env.Autonomous {
		v = warden.Deny
	}
	return Result{Verdict: v, Rule: rule, Reason: reason}
}

// classifyDepth walks and classifies src; depth counts the classifier's own
// recursion into code strings (interpreter shell-outs, sed e, git aliases).
func classifyDepth(src string, env Env, p *Policy, depth int) Result {
	if depth > maxDepth {
		return Result{Verdict: warden.Ask, Rule: "shell.budget", Reason: "code strings are nested too deeply to check"}
	}
	if walkFn == nil {
		return Result{Verdict: warden.Ask, Rule: "shell.no_parser", Reason: "no shell parser is available to check this command"}
	}
	if len(p.Destructive)+len(p.Suspicious) > 0 {
		// User patterns may name any program: no shortcut.
	} else if v, ok := prefilter(src); ok && !p.plainOperandDenied(src, env.Cwd) {
		return Result{Verdict: v, Rule: "shell.read_only", Reason: "every command is read-only", Trace: []string{"prefilter: read-only"}}
	}
	home, tmp := env.Home, env.Tmp
	if home == "" {
		home = p.Home
	}
	if tmp == "" {
		tmp = p.Tmp
	}
	if tmp == "" {
		tmp = "/tmp"
	}
	wr := walkFn(src, walk.Options{Cwd: env.Cwd, Top: env.Root, Home: home, Tmp: tmp, Unset: env.Unset})
	c := &ctx{env: &env, p: p, src: src, depth: depth, walk: &wr}
	c.res.Verdict = warden.Allow
	c.res.Rule = "shell.allow"
	c.res.Reason = "every command is known and safe here"
	c.prepare()
	for i := range wr.Commands {
		c.command(&wr.Commands[i])
	}
	c.dataflow()
	c.issues()
	if len(wr.Commands) == 0 && len(wr.Issues) == 0 {
		c.res.Reason = "nothing to run"
	}
	c.res.GitConfig = depth == 0 && len(wr.Issues) == 0 && gitConfigLine(wr.Commands, c.src)
	c.res.GitWorktrees = depth == 0 && c.worktreeRemove != nil
	if depth == 0 {
		c.res.Worktrees, c.res.RemovedWorktrees = c.worktreeAdds, c.worktreeRemoves
	}
	c.res.Trace = c.trace
	return c.res
}

// ctx accumulates the verdict of one command line.
type ctx struct {
	env   *Env
	p     *Policy
	src   string
	depth int
	walk  *walk.Result
	res   Result
	trace []string
	// mktempVars are variables assigned from mktemp in this line.
	mktempVars []string
	// feedsNoOptions are the pipelines whose xargs input comes from find,
	// whose every line starts with a start path it was given: no line of
	// it is an option.
	feedsNoOptions map[int]bool
	// ownLoopbackOnly are the commands whose every destination is the
	// sandbox's own loopback (curl localhost:3000 of the session's dev
	// server): no network sink a secret could leave by.
	ownLoopbackOnly map[*walk.Command]bool
	// netFiles are files written from the network in this line.
	netFiles map[string]bool
	// feeds are zones of targets fed to xargs-like commands per pipeline;
	// key -1 holds every feed of the line.
	feeds map[int][]Zone
	// secretReads are commands that read secrets.
	secretReads []*walk.Command
	// understood marks spans of dynamic code a rule has judged.
	understood map[walk.Span]bool
	// artifactFinds are the spans of find commands whose expression selects
	// only build output: the {} of their -exec is build output.
	artifactFinds []walk.Span
	// worktreeRemove is the span of a git worktree remove (without
	// --force) in the line: it works only in a sandbox of its own, where
	// the worktree's git directory is not pinned (Result.GitWorktrees).
	worktreeRemove *walk.Span
	// worktreeAdds are the directories the line's git worktree add
	// commands make (Result.Worktrees).
	worktreeAdds []string
	// worktreeRemoves are the directories the line's git worktree remove
	// commands name (Result.RemovedWorktrees).
	worktreeRemoves []string
}

func (c *ctx) understand(s walk.Span) {
	if c.understood == nil {
		c.understood = map[walk.Span]bool{}
	}
	c.understood[s] = true
}

// finding is one rule's opinion on one command.
type finding struct {
	v            warden.Verdict
	rule, reason string
	suggestion   string
	destructive  bool // escalates to deny when privileged
	// saves is the git work tree whose uncommitted work an ask about
	// discarding it could save first: under Env.Snapshots the finding is
	// an allow (shell.git.saved) and the tree goes to Result.Snapshot.
	saves string
}

// saved turns a discard the caller saves first into an allow, when the
// caller does (Env.Snapshots) and the command line is the caller's own
// (not code an interpreter runs, which the classifier reads apart) with a
// sandbox to save it in, and records the work tree to save.
func (c *ctx) saved(f *finding) {
	if f.saves == "" || f.v != warden.Ask || !c.env.Snapshots || c.depth != 0 || !c.p.SandboxAvailable {
		return
	}
	c.res.Snapshot = compactTrees(append(c.res.Snapshot, f.saves))
	if strings.HasPrefix(f.rule, "shell.git.") {
		f.v, f.rule = warden.Allow, "shell.git.saved"
		f.reason += "; warden saves the uncommitted work first (`warden undo` brings it back)"
	} else {
		f.v, f.rule = warden.Allow, "shell.delete_recursive.saved"
		f.reason += "; warden saves the project's work tree first (`warden undo` brings it back, but for ignored files)"
	}
	f.suggestion = ""
}

// compactTrees drops repeated work trees, keeping the first of each.
func compactTrees(ts []string) []string {
	var out []string
	for _, t := range ts {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func (c *ctx) add(f finding, span walk.Span) {
	if c.env.Explain {
		c.trace = append(c.trace, "rule "+f.rule+": "+f.v.String())
	}
	// An allow with a rule of its own (code the workspace sandbox contains)
	// names the line's verdict until something stronger does.
	if f.v.Stronger(c.res.Verdict) || f.v == warden.Allow && c.res.Verdict == warden.Allow && c.res.Rule == "shell.allow" {
		c.res.Verdict, c.res.Rule, c.res.Reason, c.res.Span, c.res.Suggestion = f.v, f.rule, f.reason, span, f.suggestion
	}
}

func (c *ctx) issues() {
	for _, is := range c.walk.Issues {
		f := finding{v: warden.Ask, rule: "shell.walk_issue", reason: "the command could not be fully read: " + is.Message}
		switch is.Kind {
		case walk.ParseError:
			f.rule, f.reason = "shell.parse_error", "the command does not parse as bash: "+is.Message
		case walk.BudgetExceeded:
			f.rule, f.reason = "shell.budget", "the command is too large or too deeply nested to check"
		case walk.DynamicCommand:
			raw := c.src[is.Span.Start:is.Span.End]
			if is.Raw != "" {
				raw = is.Raw // inside a code string: the word itself
			}
			if toolPathProgram(raw) != "" || c.tempProgram(raw) != "" || unknownFileName(is.FileName) != "" {
				continue // an unknown program at a toolchain's directory or in a temporary one the line made, judged by the command's own rule
			}
			f.rule, f.reason = "shell.dynamic_command", "the program name is only known at run time"
			if is.EnvAssigns && c.p.SandboxAvailable && c.p.AllowTaskRunners && !c.privilegedAround(is.Span) && !c.netWithin(walk.Span{Start: 0, End: len(c.src)}) {
				// env $(cat .env | xargs) ./app: the program named is
				// judged by its own rule; a line of the file that is no
				// NAME=VALUE would be run instead, in the workspace
				// sandbox, as any program the agent names is.
				f.v, f.rule, f.reason = warden.Allow, "shell.env_computed", "env is given assignments only known at run time (a word that is none would be the program); it runs in the workspace sandbox"
			}
		case walk.DynamicCode:
			f.rule, f.reason = "shell.dynamic_code", "code whose text is only known at run time would be executed"
			if c.understood[is.Span] || c.pipedExecAt(is.Span) {
				continue // judged by the command's own rule
			}
			if code, ok := c.decodeSubst(is.Span); ok {
				r := classifyDepth(code, *c.env, c.p, c.depth+1)
				if c.env.Explain {
					c.trace = append(c.trace, "decoded code: "+strconv.Quote(code))
				}
				if c.env.Explain {
					c.trace = append(c.trace, r.Trace...)
				}
				if r.Verdict.Stronger(f.v) {
					f.v, f.rule, f.reason = r.Verdict, r.Rule, "decoded code would run: "+r.Reason
				}
			} else if c.netWithin(is.Span) {
				f.v, f.rule, f.reason = warden.Sandbox, "shell.net_exec", "code fetched from the network would be executed"
			} else if c.envPrinted(is.Span) && c.p.SandboxAvailable {
				f.v, f.rule, f.reason = warden.Allow, "shell.env_printer", "the code is what a tool prints for a shell to set its environment (go env, pyenv init -); it runs in the workspace sandbox"
			} else if c.substitutedWithin(is.Span) && !c.netWithin(walk.Span{Start: 0, End: len(c.src)}) && !c.privilegedAround(is.Span) && c.saveWorkspace() {
				// . <(node -p …), eval "$(cat x)": code a local program
				// prints, from the program's own values and files, is code
				// the guard cannot see, as a script's: it runs in the
				// workspace sandbox, the project saved first.
				f.v, f.rule, f.reason = warden.Allow, "shell.dynamic_code.saved", "code a local command prints would be run; it runs in the workspace sandbox, and warden saves the project's work tree first (`warden undo` brings it back, but for ignored files)"
			}
		case walk.PlaceholderCode:
			// The code was read with the input in it as an unknown
			// variable, and its commands are judged by their own rules;
			// what the input adds is code the guard cannot see.
			f.rule, f.reason = "shell.placeholder_code", "the code string holds the input xargs or find fills in, which bash reads as code too and the guard cannot see"
			c.unknownsInCode(&f, is.Span, "input fetched from the network would be run as code (xargs or find fills it into a code string)", false)
		case walk.ValueCode:
			// bash -c "…/$port": the code as written was read with the
			// values as unknown variables, and its commands are judged
			// by their own rules; what the values add (bash reads them as
			// code too) is code the guard cannot see, as a script's: it
			// runs in the workspace sandbox, the project saved first.
			f.rule, f.reason = "shell.value_code", "the code string has values only known at run time put in it, which bash reads as code too and the guard cannot see"
			c.unknownsInCode(&f, is.Span, "values fetched from the network would be run as code (put in a code string)", true)
		case walk.Internal:
			f.rule = "shell.internal"
		}
		c.add(f, is.Span)
	}
}

// unknownsInCode judges what unknown values put in a code string add (f
// names the kind): fetched from the network, the guard sandbox's; with
// elevated privileges, or no sandbox, asked about; under the strict
// policy, the guard sandbox's; else the workspace sandbox's. values are
// a line's own values (not xargs's input): decoded in the line (a hidden
// payload, as for interpreter code: templateCode), the guard sandbox's;
// else run with the project saved first where the caller saves.
func (c *ctx) unknownsInCode(f *finding, span walk.Span, fetched string, values bool) {
	switch {
	case c.netWithin(walk.Span{Start: 0, End: len(c.src)}):
		f.v, f.rule, f.reason = warden.Sandbox, "shell.net_exec", fetched
	case values && c.decoderIn(nil):
		f.v, f.reason = warden.Sandbox, f.reason+", and the line decodes what it may put in: it runs in the guard sandbox"
	case c.privilegedAround(span):
		f.reason += ", and it would run with elevated privileges, which no sandbox grants"
	case !c.p.AllowTaskRunners:
		f.v, f.reason = warden.Sandbox, f.reason+"; the strict policy runs it in the guard sandbox"
	case !c.p.SandboxAvailable:
		f.reason += "; no sandbox is available to contain it"
	case values && c.saveWorkspace():
		f.v, f.reason = warden.Allow, f.reason+"; it runs in the workspace sandbox, and warden saves the project's work tree first (`warden undo` brings it back, but for ignored files)"
	default:
		f.v, f.reason = warden.Allow, f.reason+"; it runs in the workspace sandbox"
	}
}

// substitutedWithin reports whether a command substitution ($(…), <(…))
// lies inside span: the code there is what a command prints.
func (c *ctx) substitutedWithin(s walk.Span) bool {
	for i := range c.walk.Commands {
		cmd := &c.walk.Commands[i]
		if cmd.Span.Start >= s.Start && cmd.Span.End <= s.End && (cmd.Via == "$()" || cmd.Via == "<()") {
			return true
		}
	}
	return false
}

// saveWorkspace records that warden saves the project's work tree before
// the line runs, where the line runs in the workspace sandbox through
// warden exec from a project of a git work tree (as cmdCtx.saveProject
// does for one command), and reports whether it does.
func (c *ctx) saveWorkspace() bool {
	if !c.env.Snapshots || !c.env.GitWorkTree || !c.p.SandboxAvailable || !c.p.AllowTaskRunners || c.depth != 0 || c.env.Cwd == "" {
		return false
	}
	z := newZoner(&walk.Command{Cwd: c.env.Cwd}, c.env, c.p)
	if !z.isProject() {
		return false
	}
	c.res.Snapshot = compactTrees(append(c.res.Snapshot, z.ws))
	return true
}

// privilegedAround reports whether a command run with elevated privileges
// (sudo xargs …) holds span.
func (c *ctx) privilegedAround(s walk.Span) bool {
	for i := range c.walk.Commands {
		cmd := &c.walk.Commands[i]
		if cmd.Privileged && cmd.Span.Start <= s.Start && s.End <= cmd.Span.End {
			return true
		}
	}
	return false
}

// pipedExecAt reports a shell or interpreter at span that reads code from a
// pipe; its own rule (sandbox, deny when privileged or from a homograph)
// decides it.
func (c *ctx) pipedExecAt(s walk.Span) bool {
	for i := range c.walk.Commands {
		cmd := &c.walk.Commands[i]
		if cmd.Span == s && cmd.PipePos > 0 && isExecSink(cmd) {
			return true
		}
	}
	return false
}

// netWithin reports whether a network fetch writing to stdout lies inside span.
func (c *ctx) netWithin(s walk.Span) bool {
	for i := range c.walk.Commands {
		cmd := &c.walk.Commands[i]
		if cmd.Span.Start >= s.Start && cmd.Span.End <= s.End && netFetchStdout(cmd) {
			return true
		}
	}
	return false
}

// raw returns the source text of a word when its span is inside the input.
func (c *ctx) raw(w walk.Word) string {
	if w.Span.Start >= 0 && w.Span.End <= len(c.src) && w.Span.Start < w.Span.End {
		return c.src[w.Span.Start:w.Span.End]
	}
	return ""
}

// prepare scans the line for facts later commands depend on.
func (c *ctx) prepare() {
	for i := range c.walk.Commands {
		cmd := &c.walk.Commands[i]
		if len(cmd.Argv) == 0 {
			continue
		}
		if progName(cmd.Argv[0].Value) == "curl" || progName(cmd.Argv[0].Value) == "wget" {
			for _, f := range netOutputFiles(cmd) {
				if c.netFiles == nil {
					c.netFiles = map[string]bool{}
				}
				c.netFiles[f] = true
			}
		}
	}
	for i := range c.walk.Commands {
		cmd := &c.walk.Commands[i]
		if len(cmd.Argv) > 0 && !cmd.Argv[0].Dynamic && progName(cmd.Argv[0].Value) == "find" {
			if _, j := findStarts(cmd.Argv[1:]); findSelectsArtifacts(cmd.Argv[1+j:]) {
				c.artifactFinds = append(c.artifactFinds, cmd.Span)
			}
		}
	}
	// Producers piped into xargs/parallel: their operands become the targets.
	for i := range c.walk.Commands {
		cmd := &c.walk.Commands[i]
		if cmd.PipePos == 0 || !fedByPipe(cmd) {
			continue
		}
		// What reaches xargs through filters that only pick, order or
		// copy whole lines (sort, uniq, head, tail, grep, tee) is lines
		// the producer before them printed.
		pos := cmd.PipePos - 1
		for pos > 0 {
			f := c.pipeElem(cmd.Pipeline, pos)
			if f == nil || !passesLines(f, cmd.NulFed) {
				break
			}
			pos--
		}
		for j := range c.walk.Commands {
			prod := &c.walk.Commands[j]
			if prod.Pipeline != cmd.Pipeline || prod.PipePos != pos || len(prod.Argv) == 0 {
				continue
			}
			z := newZoner(prod, c.env, c.p)
			if progName(prod.Argv[0].Value) == "find" && !prod.Argv[0].Dynamic {
				// find prints each path under a start path it was given,
				// none of which is an option: neither is what it prints.
				starts, _ := findStarts(prod.Argv[1:])
				if !slices.ContainsFunc(starts, func(w walk.Word) bool { return w.Dynamic || strings.HasPrefix(w.Value, "-") }) {
					if c.feedsNoOptions == nil {
						c.feedsNoOptions = map[int]bool{}
					}
					c.feedsNoOptions[cmd.Pipeline] = true
				}
			}
			if cmd.NulFed && nulArtifactFind(prod, z, c) {
				// find -print0 of build output only, read item by item
				// (xargs -0): each item is an artifact below the
				// project, as find -exec rm -rf {} + would delete.
				if c.feeds == nil {
					c.feeds = map[int][]Zone{}
				}
				c.feeds[cmd.Pipeline] = append(c.feeds[cmd.Pipeline], ZoneWorkspaceArtifact)
				c.feeds[-1] = append(c.feeds[-1], ZoneWorkspaceArtifact)
				continue
			}
			for _, w := range producerTargets(prod) {
				zones := []Zone{z.word(w, c.raw(w))}
				if zones[0] == ZoneWorkspaceRoot && reachesGitDir(prod) {
					zones = append(zones, ZoneWorkspaceVCS) // grep -rl x . lists .git's files too
				}
				if c.feeds == nil {
					c.feeds = map[int][]Zone{}
				}
				c.feeds[cmd.Pipeline] = append(c.feeds[cmd.Pipeline], zones...)
				c.feeds[-1] = append(c.feeds[-1], zones...)
			}
		}
	}
	// NAME=$(mktemp …) assignments.
	s := c.src
	for {
		i := strings.Index(s, "=$(mktemp")
		if i < 0 {
			i = strings.Index(s, "=`mktemp")
		}
		if i < 0 {
			break
		}
		j := i
		for j > 0 && isNameByte(s[j-1]) {
			j--
		}
		if j < i {
			c.mktempVars = append(c.mktempVars, s[j:i])
		}
		s = s[i+2:]
	}
}

// pipeElem is the command at position pos of pipeline, nil when there is
// none or more than one (a compound element).
func (c *ctx) pipeElem(pipeline, pos int) *walk.Command {
	var found *walk.Command
	for i := range c.walk.Commands {
		cmd := &c.walk.Commands[i]
		if cmd.Pipeline != pipeline || cmd.PipePos != pos {
			continue
		}
		if found != nil {
			return nil
		}
		found = cmd
	}
	return found
}

// fedArtifacts reports whether the process substitution at sp runs a
// find that prints only build output of the project, each path ending
// with NUL (nulArtifactFind), and nothing else.
func (c *ctx) fedArtifacts(sp walk.Span) bool {
	found := false
	for i := range c.walk.Commands {
		cmd := &c.walk.Commands[i]
		if cmd.Span.Start < sp.Start || cmd.Span.End > sp.End || len(cmd.Argv) == 0 {
			continue
		}
		if cmd.Via != "<()" || cmd.PipeLen > 1 || found || !nulArtifactFind(cmd, newZoner(cmd, c.env, c.p), c) {
			return false
		}
		found = true
	}
	return found
}

// nulArtifactFind reports whether prod is a find that prints, ending each
// with NUL (-print0), only build output (findSelectsArtifacts with -print0
// as its action, and no other action or print) below start paths of the
// project.
func nulArtifactFind(prod *walk.Command, z zoner, c *ctx) bool {
	if progName(prod.Argv[0].Value) != "find" || prod.Argv[0].Dynamic {
		return false
	}
	starts, i := findStarts(prod.Argv[1:])
	for _, w := range starts {
		if zn := z.word(w, c.raw(w)); w.Dynamic || strings.HasPrefix(w.Value, "-") || zn != ZoneWorkspaceRoot && zn != ZoneWorkspaceOther && zn != ZoneWorkspaceArtifact {
			return false
		}
	}
	expr := slices.Clone(prod.Argv[1+i:])
	printed := false
	for k, w := range expr {
		switch {
		case w.Dynamic:
			return false
		case w.Value == "-print0":
			printed = true
			expr[k] = walk.Word{Value: "-delete"} // its action, as findSelectsArtifacts reads one
		case w.Value == "-delete" || w.Value == "-print" || w.Value == "-fprint" || w.Value == "-fprint0" ||
			strings.HasPrefix(w.Value, "-exec") || strings.HasPrefix(w.Value, "-ok") || findPrints.has(w.Value):
			return false
		}
	}
	return printed && findSelectsArtifacts(expr)
}

func isNameByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// progName is the name a program is looked up by: the base name of a path.
func progName(v string) string {
	if i := strings.LastIndexByte(v, '/'); i >= 0 {
		return v[i+1:]
	}
	return v
}

// rewrite applies the first matching replacement.
func rewrite(cmd string, rs []Replacement) string {
	t := strings.TrimSpace(cmd)
	for _, r := range rs {
		if r.From == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(t, r.From); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t' || rest[0] == ';' || rest[0] == '&' || rest[0] == '|') {
			return r.To + rest
		}
	}
	return ""
}

// lineFilters read their input or the files named (or print their words,
// or nothing) and print: nothing else. Without a redirect, and with only
// these options of theirs that write nothing, they can write no file, and
// need nothing of a session's world but its /tmp, which its lines run
// one-shot share (git config … && echo done, git apply /tmp/x.patch).
// test and [ only look at files (git worktree remove ../wt && test ! -e
// ../wt: agent-shapes-9).
var lineFilters = map[string]bool{"wc": true, "head": true, "tail": true, "grep": true, "cut": true, "tr": true,
	"echo": true, "printf": true, "true": true, "false": true, "pwd": true, "cat": true, "ls": true, "test": true, "[": true}

// lineFilter reports whether cmd is one of lineFilters with no redirect
// and no long option that names a file to write or read patterns from; a
// word only known at run time may only expand variables plainly (echo
// "exit=$?"), src being the line it lies in.
func lineFilter(cmd walk.Command, src string) bool {
	if len(cmd.Redirects) > 0 || !lineFilters[progName(cmd.Argv[0].Value)] || !systemProgram(cmd.Argv[0].Value, progName(cmd.Argv[0].Value)) {
		return false
	}
	for _, a := range cmd.Argv[1:] {
		if a.Dynamic {
			// Text, a path to read or an option of these programs, none
			// of which writes a file, but only from a plain expansion:
			// bash runs code in an array subscript ($((x)) with x set
			// to a[$(cmd)]), a prompt expansion or a default's value.
			raw := a.Raw
			if raw == "" && a.Span.Start >= 0 && a.Span.End <= len(src) && a.Span.Start < a.Span.End {
				raw = src[a.Span.Start:a.Span.End]
			}
			if raw == "" || !plainExpansions(raw) {
				return false
			}
			continue
		}
		if strings.HasPrefix(a.Value, "--") && a.Value != "--" && !slices.Contains([]string{"--lines", "--count", "--invert-match", "--fixed-strings", "--extended-regexp", "--ignore-case"}, a.Value) {
			return false
		}
	}
	return true
}

// plainExpansions reports whether every expansion in the word's text is a
// variable's plain value ($NAME, ${NAME}, $?, $#, $1): no command
// substitution, arithmetic, subscript, default, pattern or prompt
// expansion, each of which can run code or reads more than a value.
func plainExpansions(raw string) bool {
	if strings.ContainsAny(raw, "`") {
		return false
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '$' || i > 0 && raw[i-1] == '\\' {
			continue
		}
		if i+1 >= len(raw) {
			return true
		}
		switch c := raw[i+1]; {
		case c == '?' || c == '#' || c == '$' || c == '!' || c >= '0' && c <= '9':
			i++
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case c == '{':
			j := i + 2
			for j < len(raw) && isNameByte(raw[j]) {
				j++
			}
			if j == i+2 || j >= len(raw) || raw[j] != '}' {
				return false
			}
			i = j
		case c == '"' || c == '\'':
		default:
			return false
		}
	}
	return true
}

// systemProgram reports whether word runs the program name as installed:
// the bare name (found on PATH, or a builtin) or its path in a system
// directory. ./test or bin/git in the project is the project's own code.
func systemProgram(word, name string) bool {
	if word == name {
		return true
	}
	dir, base := path.Split(word)
	return base == name && slices.Contains([]string{"/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/"}, dir)
}

// gitConfigWriters are the git subcommands that may write the
// repository's own configuration (.git/config) as they do their work.
var gitConfigWriters = setOf("branch", "remote", "config", "checkout", "switch", "submodule", "worktree", "init")

// gitConfigLine reports whether cmds are git commands only (and filters of
// their output or words printed, lineFilter), run as they are written (no wrapper, no
// variable set before one (GIT_DIR, GIT_CONFIG), no -C, --git-dir or
// --work-tree moving git elsewhere), and at least one is of
// gitConfigWriters.
func gitConfigLine(cmds []walk.Command, src string) bool {
	writes := false
	for _, cmd := range cmds {
		if cmd.Via != "" || len(cmd.Assigns) > 0 || len(cmd.Wrappers) > 0 || cmd.Privileged || len(cmd.Argv) == 0 || cmd.Argv[0].Dynamic {
			return false
		}
		if lineFilter(cmd, src) {
			continue
		}
		if len(cmd.Argv) < 2 || !systemProgram(cmd.Argv[0].Value, "git") {
			return false
		}
		sub := ""
		for i := 1; i < len(cmd.Argv) && sub == ""; i++ {
			a := cmd.Argv[i]
			switch {
			case a.Dynamic:
				return false
			case a.Value == "-c":
				i++ // its key=value
			case strings.HasPrefix(a.Value, "-C") || strings.HasPrefix(a.Value, "--git-dir") || strings.HasPrefix(a.Value, "--work-tree") || strings.HasPrefix(a.Value, "--namespace"):
				return false
			case strings.HasPrefix(a.Value, "-"):
			default:
				sub = a.Value
			}
		}
		if gitConfigWriters.has(sub) {
			writes = true
		}
	}
	return writes
}
