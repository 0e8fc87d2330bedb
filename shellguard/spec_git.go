package shellguard

import (
	"fmt"
	"path"
	"strings"

	"github.com/agentwarden/warden"
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
		"describe": {}, "shortlog": {}, "grep": {}, "ls-remote": {}, "ls-tree": {}, "cat-file": {},
		"rev-list": {}, "for-each-ref": {}, "show-ref": {}, "name-rev": {}, "merge-base": {}, "cherry": {},
		"whatchanged": {}, "fetch": {}, "pull": {}, "add": {}, "mv": {}, "merge": {}, "rebase": {},
		"cherry-pick": {}, "revert": {}, "init": {}, "clone": {}, "tag": {}, "remote": {}, "submodule": {},
		"lfs": {}, "archive": {}, "format-patch": {}, "am": {}, "apply": {}, "bisect": {}, "notes": {},
		"sparse-checkout": {}, "maintenance": {}, "help": {}, "version": {}, "range-diff": {},
		"config": {rule: func(cc *cmdCtx, p parsed) {
			for _, a := range cc.args[1:] {
				k := strings.ToLower(a.Value)
				if a.Dynamic || strings.HasPrefix(k, "!") || strings.HasPrefix(k, "alias.") || strings.HasPrefix(k, "core.") && (strings.Contains(k, "command") || strings.Contains(k, "hookspath") || strings.Contains(k, "fsmonitor") || strings.Contains(k, "pager") || strings.Contains(k, "editor")) || strings.HasPrefix(k, "filter.") || strings.HasPrefix(k, "credential.") {
					cc.say(warden.Ask, "shell.git.config_exec", "git config sets an alias or hook that later runs commands")
					return
				}
			}
		}},
		"count-objects": {}, "fsck": {}, "verify-commit": {}, "var": {}, "check-ignore": {}, "check-attr": {},
		"mergetool": {}, "difftool": {}, "bundle": {}, "credential": {}, "restore-staged": {}, "annotate": {},
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
					cc.gitDiscard("git reset "+a.Value+" discards uncommitted changes", "git stash")
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
					cc.gitDiscard("git checkout --force discards uncommitted changes", "git stash")
				case v == "." || dashdash && !strings.HasPrefix(v, "-"):
					cc.gitDiscard("git checkout of paths overwrites uncommitted changes to them", "git stash")
					return
				}
			}
		}},
		"switch": {rule: func(cc *cmdCtx, p parsed) {
			for _, a := range cc.args[1:] {
				if a.Value == "-f" || a.Value == "--force" || a.Value == "--discard-changes" {
					cc.gitDiscard("git switch "+a.Value+" discards uncommitted changes", "git stash")
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
				cc.gitDiscard("git restore overwrites uncommitted changes in the working tree", "git restore --staged")
			}
		}},
		"clean": {opts: "d f,force i,interactive n,dry-run q,quiet e,exclude= x X", rule: func(cc *cmdCtx, p parsed) {
			if p.has("dry-run") {
				return
			}
			if p.has("force") {
				cc.gitDiscard("git clean --force deletes untracked files", "git clean -n")
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
					cc.say(warden.Ask, "shell.git.branch_force_delete", "git branch -D deletes a branch even if it is not merged")
					return
				}
			}
		}},
		"stash": {rule: func(cc *cmdCtx, p parsed) {
			if len(cc.args) > 1 {
				switch cc.args[1].Value {
				case "drop", "clear":
					cc.gitDiscard("git stash "+cc.args[1].Value+" deletes stashed changes", "git stash list")
				}
			}
		}},
		"reflog": {rule: func(cc *cmdCtx, p parsed) {
			if len(cc.args) > 1 && (cc.args[1].Value == "expire" || cc.args[1].Value == "delete") {
				cc.gitDiscard("git reflog "+cc.args[1].Value+" removes the record needed to recover lost commits", "")
			}
		}},
		"gc": {rule: func(cc *cmdCtx, p parsed) {
			for _, a := range cc.args[1:] {
				if strings.HasPrefix(a.Value, "--prune=") {
					cc.gitDiscard("git gc --prune=… deletes unreachable commits", "git gc")
				}
			}
		}},
		"prune": {rule: func(cc *cmdCtx, p parsed) { cc.gitDiscard("git prune deletes unreachable objects", "") }},
		"update-ref": {rule: func(cc *cmdCtx, p parsed) {
			if hasArg(cc.args, "-d", "--stdin") {
				cc.gitDiscard("git update-ref -d deletes a ref", "")
			}
		}},
		"worktree": {rule: func(cc *cmdCtx, p parsed) {
			if len(cc.args) > 1 && cc.args[1].Value == "remove" {
				if hasArg(cc.args, "--force", "-f") {
					cc.gitDiscard("git worktree remove --force deletes a worktree with its changes", "git worktree remove")
					return
				}
				cc.say(warden.Ask, "shell.git.worktree_remove", "git worktree remove deletes a worktree directory")
			}
		}},
		"filter-branch": {rule: func(cc *cmdCtx, p parsed) { cc.gitDiscard("git filter-branch rewrites history", "") }},
		"filter-repo":   {rule: func(cc *cmdCtx, p parsed) { cc.gitDiscard("git filter-repo rewrites history", "") }},
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

// gitDiscard denies a git command that discards work.
func (cc *cmdCtx) gitDiscard(reason, suggestion string) {
	f := cc.say(warden.Deny, "shell.git.discard", reason)
	f.destructive = true
	f.suggestion = suggestion
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
}

func hGit(cc *cmdCtx) {
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
		case "c", "config-env":
			k, cv, _ := strings.Cut(val, "=")
			k = strings.ToLower(k)
			switch {
			case strings.HasPrefix(k, "alias.") || k == "core.sshcommand":
				// Walk classifies a literal command value; an unknown one is asked.
				if cv == "" || def.name == "config-env" {
					cc.say(warden.Ask, "shell.git.config_exec", fmt.Sprintf("git -c %s runs a command only known at run time", k))
				}
			case k == "core.pager" || k == "core.editor" || k == "core.fsmonitor" || k == "core.hookspath" || strings.Contains(k, "command") || strings.HasPrefix(k, "diff.") || strings.HasPrefix(k, "filter.") || k == "sequence.editor" || strings.HasPrefix(k, "credential.") || strings.HasPrefix(k, "protocol.") || strings.HasPrefix(k, "uploadpack.") || strings.HasSuffix(k, ".textconv") || strings.HasPrefix(k, "gpg.") || strings.HasPrefix(k, "include"):
				cc.say(warden.Ask, "shell.git.config_exec", fmt.Sprintf("git -c %s can make git run other commands", k))
			}
		}
	}
	if wt != "" {
		cc.c.trace = append(cc.c.trace, "git work tree "+wt)
	}
	if i >= len(cc.args) {
		return
	}
	sub := cc.args[i].Value
	cc.args = cc.args[i:]
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
