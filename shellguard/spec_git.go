package shellguard

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/nestedgit"
	"github.com/agentwarden/warden/shellguard/walk"
)

// gitGlobal is the grammar of git's options before the subcommand.
const gitGlobal = "C= c= git-dir= work-tree= namespace= exec-path=? config-env= p,paginate P,no-pager bare no-replace-objects literal-pathspecs glob-pathspecs noglob-pathspecs icase-pathspecs no-optional-locks super-prefix= list-cmds= attr-source= h,help v,version html-path man-path info-path"

// gitSub is one git subcommand: its grammar and its rule. A nil rule means
// the subcommand only reads or makes recoverable changes.
type gitSub struct {
	opts string
	rule func(cc *cmdCtx, p parsed)
}

// gitSubs is the git subcommand tree, set with the specs (see lookupSpec).
var gitSubs map[string]gitSub

// gitSubTable is the git subcommand tree as data.
func gitSubTable() map[string]gitSub {
	return map[string]gitSub{
		"status": {}, "log": {}, "diff": {}, "show": {}, "blame": {}, "rev-parse": {}, "ls-files": {},
		"describe": {}, "shortlog": {}, "ls-remote": {}, "request-pull": {}, "ls-tree": {}, "cat-file": {},
		"rev-list": {}, "for-each-ref": {}, "show-ref": {}, "name-rev": {}, "merge-base": {}, "cherry": {},
		"whatchanged": {}, "fetch": {}, "pull": {}, "add": {}, "mv": {}, "merge": {},
		"rebase":      {rule: gitRunsOption("x", "exec")},
		"difftool":    {rule: gitRunsOption("x", "extcmd")},
		"grep":        {rule: gitGrep},
		"bisect":      {rule: gitRunsArgs("run")},
		"submodule":   {rule: gitRunsArgs("foreach")},
		"cherry-pick": {}, "revert": {}, "init": {}, "clone": {}, "tag": {}, "remote": {},
		"lfs": {}, "archive": {}, "format-patch": {}, "am": {}, "apply": {}, "notes": {},
		"sparse-checkout": {}, "maintenance": {}, "help": {}, "version": {}, "range-diff": {},
		"config": {rule: func(cc *cmdCtx, p parsed) {
			if _, _, _, write := gitConfigForm(cc.args); !write && !slices.ContainsFunc(cc.args, func(a walk.Word) bool { return a.Dynamic }) {
				return // git config --get core.hooksPath reads: it sets nothing to run
			}
			for _, a := range cc.args[1:] {
				k := strings.ToLower(a.Value)
				if a.Dynamic || strings.HasPrefix(k, "!") || strings.HasPrefix(k, "alias.") || strings.HasPrefix(k, "core.") && (strings.Contains(k, "command") || strings.Contains(k, "hookspath") || strings.Contains(k, "fsmonitor") || strings.Contains(k, "pager") || strings.Contains(k, "editor")) || strings.HasPrefix(k, "filter.") || strings.HasPrefix(k, "credential.") || strings.HasPrefix(k, "include.") || strings.HasPrefix(k, "includeif.") {
					cc.say(warden.Ask, "shell.git.config_exec", "git config sets an alias or hook that later runs commands")
					return
				}
			}
			gitConfigWrite(cc)
		}},
		"count-objects": {}, "fsck": {}, "verify-commit": {}, "var": {}, "check-ignore": {}, "check-attr": {},
		// Built-in commands (an alias never overrides one) that read, or
		// write only the repository's index, objects and refs, or the
		// files they are given, which the sandbox keeps to what the
		// command may write; the ones that serve, send or run programs
		// (daemon, http-backend, instaweb, send-pack, imap-send, hook,
		// merge-index, for-each-repo, credential helpers) stay unknown.
		"diff-tree": {}, "diff-index": {}, "diff-files": {}, "show-branch": {}, "merge-tree": {},
		"check-ref-format": {}, "check-mailmap": {}, "column": {}, "get-tar-commit-id": {}, "verify-pack": {},
		"verify-tag": {}, "fmt-merge-msg": {}, "stripspace": {}, "interpret-trailers": {}, "update-index": {},
		"hash-object": {}, "symbolic-ref": {}, "write-tree": {}, "commit-tree": {}, "mktag": {}, "mktree": {},
		"pack-refs": {}, "repack": {}, "rerere": {}, "prune-packed": {}, "unpack-objects": {}, "multi-pack-index": {},
		"commit-graph": {}, "replace": {}, "merge-file": {}, "pack-objects": {}, "index-pack": {}, "show-index": {},
		"unpack-file": {}, "update-server-info": {}, "stage": {}, "mailinfo": {}, "mailsplit": {}, "bugreport": {},
		"diagnose": {},
		"read-tree": {rule: func(cc *cmdCtx, p parsed) {
			if hasArg(cc.args, "--reset") && hasArg(cc.args, "-u") {
				cc.gitDiscard("git read-tree --reset -u overwrites uncommitted changes", "git stash", false)
			}
		}},
		"checkout-index": {rule: func(cc *cmdCtx, p parsed) {
			for _, a := range cc.args[1:] {
				if a.Value == "-f" || a.Value == "--force" || strings.HasPrefix(a.Value, "-") && !strings.HasPrefix(a.Value, "--") && strings.Contains(a.Value, "f") {
					cc.gitDiscard("git checkout-index --force overwrites uncommitted changes", "git stash", false)
					return
				}
			}
		}},
		"mergetool": {}, "bundle": {}, "credential": {}, "restore-staged": {}, "annotate": {},
		"commit": {opts: "no-verify n", rule: func(cc *cmdCtx, p parsed) {
			for _, a := range cc.args {
				if a.Value == "--no-verify" || a.Value == "-n" {
					cc.say(warden.Ask, "shell.git.no_verify", "git commit --no-verify skips the repository's hooks")
				}
			}
		}},
		"reset": {rule: func(cc *cmdCtx, p parsed) {
			for _, a := range cc.args {
				if a.Value == "--hard" || a.Value == "--merge" || a.Value == "--keep" {
					cc.gitDiscard("git reset "+a.Value+" discards uncommitted changes", "git stash", true)
				}
			}
		}},
		"checkout": {rule: func(cc *cmdCtx, p parsed) {
			dashdash := false
			for _, a := range cc.args[1:] {
				v := a.Value
				switch {
				case v == "--":
					dashdash = true
				case v == "-f" || v == "--force" || strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.Contains(v, "f") && !strings.ContainsAny(v, "bB"):
					cc.gitDiscard("git checkout --force discards uncommitted changes", "git stash", true)
				case v == "." || dashdash && !strings.HasPrefix(v, "-"):
					cc.gitDiscard("git checkout of paths overwrites uncommitted changes to them", "git stash", true)
					return
				}
			}
		}},
		"switch": {rule: func(cc *cmdCtx, p parsed) {
			for _, a := range cc.args[1:] {
				if a.Value == "-f" || a.Value == "--force" || a.Value == "--discard-changes" {
					cc.gitDiscard("git switch "+a.Value+" discards uncommitted changes", "git stash", true)
				}
			}
		}},
		"restore": {rule: func(cc *cmdCtx, p parsed) {
			staged, worktree := false, false
			for _, a := range cc.args[1:] {
				switch a.Value {
				case "--staged", "-S":
					staged = true
				case "--worktree", "-W":
					worktree = true
				case "-SW", "-WS":
					staged, worktree = true, true
				}
			}
			if !staged || worktree {
				cc.gitDiscard("git restore overwrites uncommitted changes in the working tree", "git restore --staged", true)
			}
		}},
		"clean": {opts: "d f,force i,interactive n,dry-run q,quiet e,exclude= x X", rule: func(cc *cmdCtx, p parsed) {
			if p.has("dry-run") {
				return
			}
			if p.has("force") {
				// Ignored files (-x, -X) can be anything and huge (build
				// output, dependencies), and -ff also deletes nested
				// repositories: a snapshot of the work tree holds neither.
				ignored := p.has("x") || p.has("X")
				reason := "git clean --force deletes untracked files"
				if ignored {
					reason = "git clean --force -x deletes untracked and ignored files"
				}
				if len(p.flags["force"]) > 1 {
					reason = "git clean -ff deletes untracked files and nested repositories"
				}
				cc.gitDiscard(reason, "git clean -n", !ignored && len(p.flags["force"]) < 2)
				return
			}
			if p.has("interactive") {
				cc.say(warden.Ask, "shell.git.clean_interactive", "git clean -i deletes untracked files after prompting")
			}
		}},
		"push": {opts: "f,force force-with-lease=? force-if-includes mirror all tags d,delete n,dry-run u,set-upstream v,verbose q,quiet no-verify verify follow-tags atomic porcelain prune o,push-option= signed=? recurse-submodules= repo= receive-pack= exec= 4,ipv4 6,ipv6 progress no-progress thin no-thin", rule: gitPush},
		"branch": {rule: func(cc *cmdCtx, p parsed) {
			for _, a := range cc.args[1:] {
				v := a.Value
				if v == "-D" || (v == "--delete" || v == "-d") && hasArg(cc.args, "--force", "-f") || strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.Contains(v, "D") {
					// Where warden saves first (a snapshot keeps every
					// branch's tip, and warden undo makes a deleted one
					// again), it runs.
					f := cc.say(warden.Ask, "shell.git.branch_force_delete", "git branch -D deletes a branch even if it is not merged")
					f.destructive = true
					if tree := cc.z.cwd; tree != "" && cc.gitTree == "" && !cc.gitDir && !cc.gitEnv() && cc.inProject(tree) {
						f.saves = tree
					}
					return
				}
			}
		}},
		"stash": {rule: func(cc *cmdCtx, p parsed) {
			if len(cc.args) > 1 {
				switch cc.args[1].Value {
				case "drop", "clear":
					// A snapshot keeps every stash entry of its time
					// (undo.Snapshot.Stashes), and warden undo stores the
					// dropped ones again.
					cc.gitDiscard("git stash "+cc.args[1].Value+" deletes stashed changes", "git stash list", true)
				}
			}
		}},
		"reflog": {rule: func(cc *cmdCtx, p parsed) {
			if len(cc.args) > 1 && (cc.args[1].Value == "expire" || cc.args[1].Value == "delete") {
				cc.gitHistory("git reflog " + cc.args[1].Value + " removes the record needed to recover lost commits")
			}
		}},
		// Unreachable objects (what a dropped stash or a deleted branch
		// left, which only their hashes still name) are gone for good: a
		// human decides. History that refs and reflogs hold stays.
		"gc": {rule: func(cc *cmdCtx, p parsed) {
			for _, a := range cc.args[1:] {
				if strings.HasPrefix(a.Value, "--prune=") {
					cc.say(warden.Ask, "shell.git.prune", "git gc --prune=… deletes unreachable commits for good").destructive = true
				}
			}
		}},
		"prune": {rule: func(cc *cmdCtx, p parsed) {
			cc.say(warden.Ask, "shell.git.prune", "git prune deletes unreachable objects for good").destructive = true
		}},
		"update-ref": {rule: func(cc *cmdCtx, p parsed) {
			// A ref deleted leaves its commits in the objects until gc
			// prunes them (which asks), as git tag -d does: a tag or a
			// ref of the agent's own (refs/backup/main) goes. A branch,
			// or what --stdin says, is git branch -D's: it asks, or runs
			// where warden saves every branch's tip first.
			if !hasArg(cc.args, "-d", "--stdin") {
				return
			}
			branch := hasArg(cc.args, "--stdin")
			for _, a := range cc.args[1:] {
				if !strings.HasPrefix(a.Value, "-") && (a.Dynamic || strings.HasPrefix(a.Value, "refs/heads/") || !strings.HasPrefix(a.Value, "refs/") || a.Value == "HEAD") {
					branch = true
				}
			}
			if branch {
				f := cc.say(warden.Ask, "shell.git.branch_force_delete", "git update-ref -d deletes a branch even if it is not merged")
				f.destructive = true
				if tree := cc.z.cwd; tree != "" && cc.gitTree == "" && !cc.gitDir && !cc.gitEnv() && cc.inProject(tree) {
					f.saves = tree
				}
			}
		}},
		"worktree": {rule: func(cc *cmdCtx, p parsed) {
			if len(cc.args) > 1 && cc.args[1].Value == "add" {
				if wt := worktreeAddPath(cc.args[2:]); wt != nil && !wt.Dynamic && !wt.Glob && cc.z.cwd != "" {
					p := wt.Value
					if !path.IsAbs(p) {
						p = path.Join(cc.z.cwd, p)
					}
					cc.c.worktreeAdds = append(cc.c.worktreeAdds, path.Clean(p))
				}
				return
			}
			if len(cc.args) > 1 && cc.args[1].Value == "move" {
				// It moves a work tree, and the directory of its git, to
				// where the line says: a place the rest of warden judges
				// by what it is now. One in /tmp moved within /tmp stays
				// in the sandbox's own /tmp (agent-shapes-19).
				var ends []walk.Word
				for _, w := range cc.args[2:] {
					if w.Dynamic || !strings.HasPrefix(w.Value, "-") {
						ends = append(ends, w)
					}
				}
				if len(ends) == 2 && !ends[0].Glob && !ends[1].Glob && cc.zone(ends[0]) == ZoneTemp && cc.zone(ends[1]) == ZoneTemp {
					return
				}
				cc.say(warden.Ask, "shell.git.worktree_move", "git worktree move moves a work tree elsewhere")
				return
			}
			if len(cc.args) > 1 && cc.args[1].Value == "remove" {
				for _, w := range cc.args[2:] {
					if !strings.HasPrefix(w.Value, "-") && !w.Dynamic && !w.Glob && cc.z.cwd != "" {
						p := w.Value
						if !path.IsAbs(p) {
							p = path.Join(cc.z.cwd, p)
						}
						cc.c.worktreeRemoves = append(cc.c.worktreeRemoves, path.Clean(p))
					}
				}
				if hasArg(cc.args, "--force", "-f") {
					if tree := cc.savableWorktree(); tree != "" {
						// A worktree of the project (in it, or beside it):
						// warden saves its changes first, which warden undo
						// brings back in any work tree of the repository.
						f := cc.say(warden.Ask, "shell.git.discard", "git worktree remove --force deletes a worktree with its changes")
						f.destructive, f.suggestion, f.saves = true, "git worktree remove", tree
						span := cc.cmd.Span
						cc.c.worktreeRemove = &span
						return
					}
					if cc.temporaryWorktrees() {
						// A worktree in a temporary directory (the
						// session's /tmp) goes with its changes as rm -r
						// of it would: judged as that delete, in a line
						// that can run where the worktree's git directory
						// may go. git removes only the directory whose
						// registration names the very path given.
						for _, w := range cc.args[2:] {
							if !strings.HasPrefix(w.Value, "-") {
								cc.effect(EffDeleteRec, w)
							}
						}
						span := cc.cmd.Span
						cc.c.worktreeRemove = &span
						return
					}
					cc.gitDiscard("git worktree remove --force deletes a worktree with its changes", "git worktree remove", false)
					for _, w := range cc.args[2:] {
						if !strings.HasPrefix(w.Value, "-") {
							cc.effect(EffDeleteRec, w) // the worktree, wherever it is
						}
					}
					return
				}
				// Without --force git refuses a worktree with changes, so
				// nothing is lost: a worktree in the project or a temporary
				// directory goes, one elsewhere is judged as a recursive
				// delete there, in a line that can run where the
				// worktree's git directory may go (classify asks otherwise).
				for _, w := range cc.args[2:] {
					if strings.HasPrefix(w.Value, "-") {
						continue
					}
					if w.Dynamic {
						cc.effect(EffDeleteRec, w)
						continue
					}
					switch cc.z.path(w.Value) {
					case ZoneWorkspaceOther, ZoneWorkspaceArtifact, ZoneTemp:
					default:
						cc.effect(EffDeleteRec, w) // the worktree, wherever it is
					}
				}
				span := cc.cmd.Span
				cc.c.worktreeRemove = &span
			}
		}},
		"filter-branch": {rule: func(cc *cmdCtx, p parsed) { cc.gitHistory("git filter-branch rewrites history") }},
		"filter-repo":   {rule: func(cc *cmdCtx, p parsed) { cc.gitHistory("git filter-repo rewrites history") }},
		"rm": {rule: func(cc *cmdCtx, p parsed) {
			cached, rec := false, false
			var ops []walk.Word
			for _, a := range cc.args[1:] {
				switch {
				case a.Value == "--cached":
					cached = true
				case a.Value == "-r" || a.Value == "-rf" || a.Value == "-fr":
					rec = true
				case !strings.HasPrefix(a.Value, "-"):
					ops = append(ops, a)
				}
			}
			if !cached {
				deleteOperands(cc, ops, rec)
			}
		}},
	}
}

// savableWorktree is the one worktree a git worktree remove --force names,
// as an absolute path, when warden can save its changes first: a literal
// path in the project or in a worktree beside it (not .git, a temporary
// directory or anywhere else), with no option or variable moving git
// elsewhere; "" otherwise.
func (cc *cmdCtx) savableWorktree() string {
	var targets []walk.Word
	for _, w := range cc.args[2:] {
		if !strings.HasPrefix(w.Value, "-") {
			targets = append(targets, w)
		}
	}
	if len(targets) != 1 || targets[0].Dynamic || targets[0].Glob || cc.z.cwd == "" || cc.gitTree != "" || cc.gitDir || cc.gitEnv() {
		return ""
	}
	p := targets[0].Value
	if strings.HasPrefix(p, "~") {
		return ""
	}
	if !path.IsAbs(p) {
		p = path.Join(cc.z.cwd, p)
	}
	p = path.Clean(p)
	if p != cc.z.ws && cc.inProject(p) || slices.Contains(cc.z.worktrees, p) {
		return p
	}
	return ""
}

// temporaryWorktrees reports whether every worktree a git worktree remove
// names is a literal path in a temporary directory (the session's /tmp),
// or a name mktemp made there,
// with no option or variable moving git elsewhere.
func (cc *cmdCtx) temporaryWorktrees() bool {
	n := 0
	for _, w := range cc.args[2:] {
		if strings.HasPrefix(w.Value, "-") {
			continue
		}
		if _, temp := walk.TempPath(w); temp && !w.Glob {
			n++ // wt=$(mktemp -d): a name made in the temporary directory
			continue
		}
		if w.Dynamic || w.Glob || strings.HasPrefix(w.Value, "~") || cc.z.path(w.Value) != ZoneTemp {
			return false
		}
		n++
	}
	return n > 0 && cc.z.cwd != "" && cc.gitTree == "" && !cc.gitDir && !cc.gitEnv()
}

// worktreeAddPath is the <path> operand of git worktree add's arguments
// (after "add"), or nil: the first word that is not an option or an
// option's value (-b, -B and --reason take one).
func worktreeAddPath(args []walk.Word) *walk.Word {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a.Dynamic && strings.HasPrefix(a.Value, "-"):
			return nil
		case a.Value == "--":
			if i+1 < len(args) {
				return &args[i+1]
			}
			return nil
		case a.Value == "-b" || a.Value == "-B" || a.Value == "--reason":
			i++
		case strings.HasPrefix(a.Value, "-"):
		default:
			return &args[i]
		}
	}
	return nil
}

// gitConfigReads are git config's actions that only read.
var gitConfigReads = setOf("-l", "--list", "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "get", "list")

// gitConfigValued are git config's options that take the next word as
// their value; they (like --bool, --int, --path, --show-origin) shape a
// read or a write alike.
var gitConfigValued = setOf("--type", "--default", "--comment", "--value")

// gitConfigForm reads git config's arguments (args[0] is "config"): the
// words that are not options (ops), whether it names the user's or the
// system's file (global) or another file (file), and whether it writes at
// all (a key and its value, set, unset, --add, --edit…); the reading forms
// (--get, --list, a key alone) write nothing.
func gitConfigForm(args []walk.Word) (ops []string, global, file, write bool) {
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "--global" || v == "--system":
			global = true
		case v == "--file" || v == "-f" || v == "--blob":
			file = true
			i++
		case strings.HasPrefix(v, "--file=") || strings.HasPrefix(v, "--blob="):
			file = true
		case gitConfigReads.has(v):
			return ops, global, file, false
		case gitConfigValued.has(v):
			i++ // its value
		case v == "--local" || v == "--worktree":
		case strings.HasPrefix(v, "-") && v != "-e" && v != "--edit" && !strings.HasPrefix(v, "--unset") && !strings.HasPrefix(v, "--add") && !strings.HasPrefix(v, "--replace") && !strings.HasPrefix(v, "--rename") && !strings.HasPrefix(v, "--remove"):
			// another option of the reading forms
		default:
			ops = append(ops, v)
		}
	}
	write = len(ops) >= 2 || len(ops) == 1 && ops[0] == "set" || hasArg(args, "-e", "--edit", "--unset", "--unset-all", "--add", "--replace-all", "--rename-section", "--remove-section") || len(ops) > 0 && (ops[0] == "unset" || ops[0] == "rename-section" || ops[0] == "remove-section" || ops[0] == "edit")
	return ops, global, file, write
}

// gitConfigWrite asks about git config writing the user's configuration
// (--global, --system) or the project's own (.git/config, by default, or
// config.worktree): the workspace sandbox keeps them read-only, since git
// runs programs they name (core.fsmonitor, hooks, filters) on the host
// too, so the write fails there; a human may run it on the host, and
// git -c KEY=VALUE sets a value for one command. A repository the same
// line makes (git init, git clone) has a configuration of its own that
// the command may write.
func gitConfigWrite(cc *cmdCtx) {
	ops, global, file, write := gitConfigForm(cc.args)
	if !write || file {
		return
	}
	if !global {
		if cc.gitTree != "" || cc.gitDir || strings.Contains(cc.c.src, "git init") || strings.Contains(cc.c.src, "git clone") {
			return
		}
		if cwd := cc.z.cwd; cwd == "" || !cc.inProject(cwd) {
			return
		}
		// Where warden exec runs it with .git/config writable and takes
		// back any key that runs a program (Result.GitConfig), a key that
		// runs nothing (a user, a remote, a branch's upstream) is set.
		if cc.c.p.SandboxAvailable && len(ops) > 0 {
			key := ""
			for _, op := range ops {
				if !strings.HasPrefix(op, "-") && op != "set" && op != "unset" {
					key = op
					break
				}
			}
			if k := gitConfigKey(key); k != "" && nestedgit.InertKey(k) {
				if gitConfigLine(cc.c.walk.Commands, cc.c.src) {
					return
				}
				// Only a line of git commands (and filters) runs with
				// .git/config writable: here git would fail to write it.
				f := cc.say(warden.Ask, "shell.git.config_write_line", "git config writes the project's .git/config, which the workspace sandbox makes writable only for a line of git commands alone (with echo, grep and the like), and this line runs other programs too; run git config on a line of its own")
				f.suggestion = "git config … on its own line, then the rest"
				return
			}
		}
	}
	where := "the project's .git/config"
	if global {
		where = "your git configuration (~/.gitconfig)"
	}
	f := cc.say(warden.Ask, "shell.git.config_write", "git config writes "+where+", which the workspace sandbox keeps read-only (git runs programs it names); a human may run it on the host")
	f.suggestion = "git -c user.email=… commit … sets a value for one command"
}

// hasPrefixArg reports whether a plainly written argument starts with p.
func hasPrefixArg(args []walk.Word, p string) bool {
	for _, a := range args {
		if !a.Dynamic && strings.HasPrefix(a.Value, p) {
			return true
		}
	}
	return false
}

func hasArg(args []walk.Word, vs ...string) bool {
	for _, a := range args {
		for _, v := range vs {
			if !a.Dynamic && a.Value == v {
				return true
			}
		}
	}
	return false
}

// gitDiscard asks about a git command that discards uncommitted work in the
// project (a human may want it; nothing else can recover it). In a work
// tree outside the project (--work-tree, -C, cd) it is judged as a
// recursive delete of that tree, so discarding in / or a home is denied.
//
// savable says the work it discards is in the work tree (tracked changes,
// untracked files that are not ignored), which a snapshot of the work tree
// holds: where the caller saves one first (Env.Snapshots), the ask becomes
// an allow (see ctx.saved). It is so only in a work tree of the project
// that the command names plainly: the working directory as the line
// leaves it, with no --git-dir, --work-tree or GIT_* variables that move
// git elsewhere.
func (cc *cmdCtx) gitDiscard(reason, suggestion string, savable bool) {
	v, rule := warden.Ask, "shell.git.discard"
	tree := cc.gitTree
	if tree == "" {
		tree = cc.z.cwd
	}
	if tree != "" {
		switch zn := cc.z.path(tree); zn {
		case ZoneWorkspaceRoot, ZoneWorkspaceOther, ZoneWorkspaceArtifact, ZoneWorkspaceVCS, ZoneUnknown:
		default:
			// A work tree in scratch space (a clone in /tmp) is as
			// disposable as the table makes it: what rm -r of it may
			// do, discarding in it may do too.
			if t := cc.c.p.lookup(EffDeleteRec, zn); t.Stronger(v) || zn == ZoneTemp && !t.Stronger(warden.Allow) {
				v, rule = t, "shell.git.discard."+zn.String()
				reason += fmt.Sprintf(", in the work tree %q (%s)", tree, zn)
			}
		}
	}
	f := cc.say(v, rule, reason)
	f.destructive = true
	f.suggestion = suggestion
	if savable && rule == "shell.git.discard" && cc.gitTree == "" && !cc.gitDir && !cc.gitEnv() && !cc.recursesSubmodules() && cc.inProject(tree) {
		f.saves = tree
	}
}

// recursesSubmodules reports whether the git command is given
// --recurse-submodules: it then discards work in the submodules too, which
// are repositories of their own that a snapshot of the work tree does not
// hold (it has their commits only).
func (cc *cmdCtx) recursesSubmodules() bool {
	for _, a := range cc.args {
		if a.Value == "--recurse-submodules" || strings.HasPrefix(a.Value, "--recurse-submodules=") {
			return true
		}
	}
	return false
}

// inProject reports whether dir is the project (the workspace root) or a
// directory in it outside .git, wherever the project is (under /tmp too).
func (cc *cmdCtx) inProject(dir string) bool {
	ws := cc.z.ws
	if !path.IsAbs(dir) || ws == "" || ws == "/" || !path.IsAbs(ws) {
		return false
	}
	dir = path.Clean(dir)
	if dir != ws && !strings.HasPrefix(dir, ws+"/") {
		return false
	}
	return !slices.Contains(strings.Split(strings.TrimPrefix(dir, ws), "/"), ".git")
}

// gitPlaces are the variables that point git at another repository, work
// tree, index or configuration (which can set core.worktree). Compiled on
// first use, not at package init (docs/benchmarks.md, cold start).
var gitPlaces = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`GIT_(DIR|WORK_TREE|INDEX_FILE|COMMON_DIR|OBJECT_DIRECTORY|ALTERNATE_OBJECT|CONFIG|NAMESPACE|CEILING|DISCOVERY)`)
})

// gitEnv reports whether the line names a variable that points git
// elsewhere (GIT_DIR=… git, export GIT_WORK_TREE=…, env GIT_INDEX_FILE=…),
// anywhere in it: the work tree a snapshot would save might then not be the
// one git acts on.
func (cc *cmdCtx) gitEnv() bool {
	for _, a := range cc.cmd.Assigns {
		if gitPlaces().MatchString(a.Name) {
			return true
		}
	}
	return gitPlaces().MatchString(cc.c.src)
}

// gitHistory denies a git command that destroys history or the records
// needed to recover it.
func (cc *cmdCtx) gitHistory(reason string) {
	cc.say(warden.Deny, "shell.git.history", reason).destructive = true
}

// gitRunsOption returns the rule of a subcommand whose option (short or
// long, a value separate, attached or after "=") is a command git runs
// (rebase -x, difftool --extcmd): the command is classified.
func gitRunsOption(short, long string) func(*cmdCtx, parsed) {
	return func(cc *cmdCtx, _ parsed) {
		args := cc.args[1:]
		for i, a := range args {
			v := a.Value
			var code *string
			switch {
			case (v == "-"+short || v == "--"+long) && i+1 < len(args):
				if args[i+1].Dynamic {
					cc.say(warden.Ask, "shell.git.dynamic_command", "git "+cc.args[0].Value+" runs a command only known at run time")
					return
				}
				code = &args[i+1].Value
			case strings.HasPrefix(v, "--"+long+"="):
				c := strings.TrimPrefix(v, "--"+long+"=")
				code = &c
			case strings.HasPrefix(v, "-"+short) && len(v) > 2 && !strings.HasPrefix(v, "--"):
				c := v[2:]
				code = &c
			}
			if code != nil {
				if a.Dynamic {
					cc.say(warden.Ask, "shell.git.dynamic_command", "git "+cc.args[0].Value+" runs a command only known at run time")
					return
				}
				cc.subShell(*code)
			}
		}
	}
}

// gitGrep: git grep -O<cmd> / --open-files-in-pager=<cmd> runs cmd.
func gitGrep(cc *cmdCtx, _ parsed) {
	for _, a := range cc.args[1:] {
		v := a.Value
		if c, ok := strings.CutPrefix(v, "--open-files-in-pager="); ok {
			cc.subShell(c)
		} else if strings.HasPrefix(v, "-O") && len(v) > 2 {
			cc.subShell(v[2:])
		}
	}
}

// gitRunsArgs returns the rule of a subcommand whose sub-subcommand word
// runs the rest of the arguments as a command (bisect run CMD…, submodule
// foreach CMD).
func gitRunsArgs(word string) func(*cmdCtx, parsed) {
	return func(cc *cmdCtx, _ parsed) {
		args := cc.args[1:]
		for len(args) > 0 && strings.HasPrefix(args[0].Value, "-") {
			args = args[1:]
		}
		if len(args) == 0 || args[0].Value != word {
			return
		}
		args = args[1:]
		for len(args) > 0 && strings.HasPrefix(args[0].Value, "-") {
			args = args[1:] // foreach --recursive
		}
		if len(args) == 0 {
			return
		}
		var parts []string
		for _, a := range args {
			if a.Dynamic {
				cc.say(warden.Ask, "shell.git.dynamic_command", "git "+cc.args[0].Value+" "+word+" runs a command only known at run time")
				return
			}
			parts = append(parts, a.Value)
		}
		if len(parts) == 1 && word == "foreach" {
			cc.subShell(parts[0]) // a code string
			return
		}
		for i, p := range parts {
			parts[i] = shellQuote(p)
		}
		cc.subShell(strings.Join(parts, " "))
	}
}

func gitPush(cc *cmdCtx, p parsed) {
	if p.has("dry-run") {
		return
	}
	if p.has("force") || p.has("mirror") {
		f := cc.say(warden.Deny, "shell.git.force_push", "git push --force can overwrite commits on the remote")
		f.destructive = true
		f.suggestion = "git push --force-with-lease"
		return
	}
	refs := p.operands
	if len(refs) > 0 {
		refs = refs[1:] // the remote
	}
	for _, w := range refs {
		if strings.HasPrefix(w.Value, "+") {
			cc.say(warden.Deny, "shell.git.force_push", "a +refspec force-pushes and can overwrite commits on the remote").destructive = true
			return
		}
		if strings.HasPrefix(w.Value, ":") {
			cc.say(warden.Ask, "shell.git.push_delete", "pushing an empty refspec deletes a remote branch")
		}
	}
	if p.has("delete") {
		cc.say(warden.Ask, "shell.git.push_delete", "git push --delete deletes a remote branch")
	}
	if p.has("all") && p.has("prune") {
		cc.say(warden.Ask, "shell.git.push_prune", "git push --prune deletes remote branches")
	}
	if len(p.operands) > 0 {
		if w, ok := localRepository(p.operands[0]); ok {
			// A repository on this machine, written as a path: the push
			// writes there (its hooks run where the command does), judged
			// as any write to that place.
			cc.effect(EffWrite, w)
			return
		}
	}
	cc.leaves("git push sends commits to a remote repository, beyond this machine")
}

// localRepository is the path of a git remote operand written as a path on
// this machine (absolute, ./ or ../, ~/, or a file:// URL), not a remote's
// name or a URL of another machine.
func localRepository(w walk.Word) (walk.Word, bool) {
	if w.Dynamic || w.Glob {
		return w, false
	}
	v := w.Value
	if rest, ok := strings.CutPrefix(v, "file://"); ok {
		if !strings.HasPrefix(rest, "/") {
			return w, false // file://host/path
		}
		v = rest
	}
	switch {
	case v == "." || v == ".." || strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || strings.HasPrefix(v, "~/"):
		w.Value = v
		return w, true
	}
	return w, false
}

func hGit(cc *cmdCtx) {
	cc.netJudged = true // its remotes are judged by gitRemote
	g := gram("git")
	// Global options up to the subcommand.
	i := 0
	wt := ""
	for ; i < len(cc.args); i++ {
		a := cc.args[i]
		if a.Dynamic {
			cc.say(warden.Ask, "shell.git.dynamic", "git is given an argument only known at run time before its subcommand")
			return
		}
		v := a.Value
		if !strings.HasPrefix(v, "-") {
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(v, "-"), "=")
		var def optDef
		var ok bool
		if strings.HasPrefix(v, "--") {
			def, ok = g.lookupLong(name)
		} else if len(v) >= 2 {
			def, ok = g.short[v[1]]
			if ok && len(v) > 2 {
				val, hasVal = v[2:], true
			}
		}
		if !ok {
			cc.say(warden.Ask, "shell.git.unknown_option", fmt.Sprintf("git was given the option %s the guard does not know", v))
			return
		}
		if def.arg && !hasVal && !def.optional {
			if i+1 >= len(cc.args) {
				break
			}
			i++
			val = cc.args[i].Value
		}
		switch def.name {
		case "C":
			if val != "" {
				if path.IsAbs(val) {
					cc.z.cwd = path.Clean(val)
				} else if cc.z.cwd != "" {
					cc.z.cwd = path.Join(cc.z.cwd, val)
				}
			}
		case "work-tree":
			wt = val
		case "git-dir":
			cc.gitDir = true
		case "c", "config-env":
			k, cv, _ := strings.Cut(val, "=")
			k = strings.ToLower(k)
			if strings.HasPrefix(k, "core.") || strings.HasPrefix(k, "include") || strings.HasPrefix(k, "submodule.") {
				cc.gitDir = true // core.worktree, core.bare, submodule.recurse: git may act elsewhere
			}
			// protocol.NAME.allow lets git use a transport: only ext::
			// runs a command (protocol.allow names it too), and the
			// network ones still meet the network policy.
			switch {
			case strings.HasPrefix(k, "alias.") || k == "core.sshcommand":
				// Walk classifies a literal command value; an unknown one is asked.
				if cv == "" || def.name == "config-env" {
					cc.say(warden.Ask, "shell.git.config_exec", fmt.Sprintf("git -c %s runs a command only known at run time", k))
				}
			case k == "core.pager" || k == "core.editor" || k == "core.fsmonitor" || k == "core.hookspath" || strings.Contains(k, "command") || strings.HasPrefix(k, "diff.") || strings.HasPrefix(k, "filter.") || k == "sequence.editor" || strings.HasPrefix(k, "credential.") || k == "protocol.allow" || strings.HasPrefix(k, "protocol.ext.") || strings.HasPrefix(k, "uploadpack.") || strings.HasSuffix(k, ".textconv") || strings.HasPrefix(k, "gpg.") || strings.HasPrefix(k, "include"):
				cc.say(warden.Ask, "shell.git.config_exec", fmt.Sprintf("git -c %s can make git run other commands", k))
			}
		}
	}
	if wt != "" {
		cc.c.trace = append(cc.c.trace, "git work tree "+wt)
		if !path.IsAbs(wt) && cc.z.cwd != "" {
			wt = path.Join(cc.z.cwd, wt)
		}
		cc.gitTree = wt
	}
	if i >= len(cc.args) {
		return
	}
	sub := cc.args[i].Value
	cc.args = cc.args[i:]
	gitRemote(cc, sub)
	s, ok := gitSubs[sub]
	if !ok {
		if strings.HasPrefix(sub, "-") {
			return
		}
		cc.say(warden.Ask, "shell.git.unknown_subcommand", fmt.Sprintf("git %s is not a known subcommand (it may be an alias)", sub))
		return
	}
	if s.rule == nil {
		return
	}
	var p parsed
	if s.opts != "" {
		gs := gram("git " + sub)
		p = parseArgs(gs, cc.args[1:], false)
		if p.ambiguous {
			cc.say(warden.Ask, "shell.unknown_option", fmt.Sprintf("git %s was given an ambiguous option", sub))
		}
	}
	s.rule(cc, p)
}

// gitRemoteGrammars are the option grammars of the subcommands that reach a
// remote, for finding the repository operand (push's is gitSubs').
var gitRemoteGrammars = map[string]string{
	"clone": "o,origin= b,branch= u,upload-pack= reference= reference-if-able= separate-git-dir= depth= shallow-since= " +
		"shallow-exclude= c,config= template= j,jobs= filter= server-option= bundle-uri= ref-format= " +
		"recurse-submodules=? recursive=? l,local no-hardlinks s,shared dissociate q,quiet v,verbose progress " +
		"n,no-checkout bare mirror single-branch no-single-branch no-tags shallow-submodules no-shallow-submodules " +
		"remote-submodules no-remote-submodules sparse reject-shallow no-reject-shallow also-filter-submodules",
	"fetch": gitFetchOpts,
	"pull": gitFetchOpts + " s,strategy= X,strategy-option= rebase=? r gpg-sign=? S cleanup= log=? ff no-ff ff-only " +
		"commit no-commit edit no-edit squash no-squash stat no-stat autostash no-autostash verify no-verify signoff " +
		"no-signoff allow-unrelated-histories",
	"ls-remote":     "upload-pack= o,server-option= sort= h,heads t,tags b,branches refs get-url symref q,quiet exit-code",
	"archive":       "remote= exec= o,output= format= prefix= add-file= add-virtual-file= mtime= l,list v,verbose worktree-attributes",
	"submodule add": "b,branch= f,force name= reference= depth= q,quiet",
}

const gitFetchOpts = "upload-pack= depth= deepen= shallow-since= shallow-exclude= j,jobs= o,server-option= refmap= " +
	"negotiation-tip= recurse-submodules=? submodule-prefix= filter= all append atomic dry-run f,force k,keep multiple " +
	"no-all prune p P,prune-tags t,tags n,no-tags q,quiet v,verbose progress unshallow update-shallow " +
	"u,update-head-ok 4,ipv4 6,ipv6 set-upstream write-fetch-head no-write-fetch-head auto-maintenance auto-gc " +
	"show-forced-updates porcelain"

// gitRemote judges the remote a git subcommand reaches when it is written as
// a URL or host:path (a remote's name is in .git/config, which the guard
// does not read: the egress proxy judges that connection), and classifies
// the commands its transport options run (--upload-pack, --receive-pack).
func gitRemote(cc *cmdCtx, sub string) {
	args := cc.args[1:]
	key := sub
	switch sub {
	case "clone", "fetch", "pull", "ls-remote", "push", "archive":
	case "request-pull":
		// git request-pull START URL [END] asks URL for END (ls-remote).
		if len(args) > 0 && args[0].Value == "-p" {
			args = args[1:]
		}
		if len(args) < 2 {
			return
		}
		key, args = "ls-remote", args[1:]
	case "submodule":
		if len(args) == 0 || args[0].Value != "add" {
			return
		}
		key, args = "submodule add", args[1:]
	default:
		return
	}
	p := parseArgs(gram("git "+key), args, false)
	for _, k := range [...]string{"upload-pack", "receive-pack", "exec"} {
		if sub == "archive" && k == "exec" {
			continue // the remote side's program
		}
		for _, v := range p.flags[k] {
			cc.subShell(v)
		}
	}
	var repos []string
	if len(p.operands) > 0 && sub != "archive" {
		w := p.operands[0]
		if s, ok := knownURL(w); ok {
			repos = append(repos, s)
		}
	}
	repos = append(repos, p.flags["bundle-uri"]...)
	repos = append(repos, p.flags["repo"]...)
	repos = append(repos, p.flags["remote"]...)
	for _, r := range repos {
		if t, web, ok := urlTarget(r); ok {
			m := ""
			if web {
				m = "GET"
				if sub == "push" {
					m = "POST"
				}
			}
			cc.network(t, m)
		} else if h, ok := scpHost(r); ok {
			cc.remoteHost(h, 22)
		}
	}
}

// gitConfigKey is a key as git config names it (section and name lower
// case, a subsection kept), or "" when it is not one.
func gitConfigKey(k string) string {
	i, j := strings.IndexByte(k, '.'), strings.LastIndexByte(k, '.')
	if i <= 0 || j == len(k)-1 || strings.ContainsAny(k, " \t\n=") {
		return ""
	}
	return strings.ToLower(k[:i]) + k[i:j] + strings.ToLower(k[j:])
}
