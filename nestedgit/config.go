package nestedgit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// An entry is one key of a git configuration file as git lists it: the
// section and the name in lower case, a subsection as written; NoValue is
// a key written without "=" (a boolean true).
type entry struct {
	Key, Value string
	NoValue    bool
}

// inertKeys are the configuration keys that run nothing, whatever their
// value: what git init, git clone and git submodule write, and a person's
// everyday settings. Every other key is taken out of a git directory the
// command changed: the list of keys that run programs (core.fsmonitor,
// core.pager, core.hooksPath, core.sshCommand, diff.external,
// filter.*.process, alias.*, include.path, remote.*.uploadpack, gpg.program
// and more with each git release) is longer and keeps growing.
var inertKeys = map[string]bool{
	"core.repositoryformatversion": true, "core.filemode": true, "core.bare": true,
	"core.logallrefupdates": true, "core.ignorecase": true, "core.precomposeunicode": true,
	"core.symlinks": true, "core.autocrlf": true, "core.eol": true, "core.safecrlf": true,
	"core.quotepath": true, "core.checkstat": true, "core.trustctime": true,
	"core.untrackedcache": true, "core.splitindex": true, "core.sparsecheckout": true,
	"core.sparsecheckoutcone": true, "core.abbrev": true, "core.compression": true,
	"core.loosecompression": true, "core.bigfilethreshold": true, "core.commentchar": true,
	"core.whitespace": true, "core.preloadindex": true, "core.multipackindex": true,
	"core.protecthfs": true, "core.protectntfs": true,
	"extensions.objectformat": true, "extensions.refstorage": true, "extensions.worktreeconfig": true,
	"extensions.preciousobjects": true, "extensions.noop": true,
	"init.defaultbranch": true, "user.name": true, "user.email": true, "user.useconfigonly": true,
	"author.name": true, "author.email": true, "committer.name": true, "committer.email": true,
	"gc.auto": true, "gc.autodetach": true, "pull.rebase": true, "pull.ff": true, "push.default": true,
	"fetch.prune": true, "color.ui": true, "lfs.repositoryformatversion": true,
	// How git merges, rebases, diffs and shows what it has: a choice among
	// its own behaviours, a number or a format, never a program or a path.
	"rerere.enabled": true, "rerere.autoupdate": true,
	"merge.conflictstyle": true, "merge.ff": true, "merge.autostash": true, "merge.stat": true,
	"merge.log": true, "merge.renames": true, "merge.renamelimit": true,
	"rebase.autostash": true, "rebase.autosquash": true, "rebase.updaterefs": true, "rebase.stat": true,
	"rebase.missingcommitscheck": true, "rebase.abbreviatecommands": true, "rebase.instructionformat": true,
	"diff.algorithm": true, "diff.renames": true, "diff.renamelimit": true, "diff.colormoved": true,
	"diff.colormovedws": true, "diff.context": true, "diff.interhunkcontext": true, "diff.mnemonicprefix": true,
	"diff.noprefix": true, "diff.relative": true, "diff.indentheuristic": true, "diff.submodule": true,
	"diff.statgraphwidth": true, "diff.ignoresubmodules": true,
	"fetch.prunetags": true, "fetch.parallel": true, "fetch.writecommitgraph": true, "push.autosetupremote": true,
	"branch.autosetupmerge": true, "branch.autosetuprebase": true, "branch.sort": true,
	"tag.sort": true, "column.ui": true, "commit.verbose": true, "commit.cleanup": true, "commit.status": true,
	"log.date": true, "log.decorate": true, "log.abbrevcommit": true, "log.follow": true, "log.showroot": true,
	"status.short": true, "status.branch": true, "status.showuntrackedfiles": true, "status.submodulesummary": true,
	"status.relativepaths": true, "status.aheadbehind": true, "status.renames": true, "status.renamelimit": true,
	"status.showstash": true, "status.displaycommentprefix": true,
	"grep.linenumber": true, "grep.column": true, "grep.patterntype": true, "grep.extendedregexp": true,
	"grep.fullname": true, "stash.showpatch": true, "stash.showstat": true, "apply.whitespace": true,
}

// inertSections are the sections whose every key runs nothing: colours
// (color.diff, color.diff.meta…) and advice messages.
var inertSections = map[string]bool{"color": true, "advice": true}

// Not inert though everyday: merge.tool, diff.tool and diff.external name
// a program; commit.template, diff.orderFile, blame.ignoreRevsFile and
// mailmap.file a path; commit.gpgSign, merge.verifySignatures and
// log.showSignature run gpg; help.autoCorrect runs the command it
// guesses; pull.twohead and pull.octopus may name a merge program on the
// PATH (git-merge-NAME); submodule.recurse fetches and checks out the
// submodules' URLs by itself.

// Not inert either: remote.*.pushurl, remote.*.mirror and
// branch.*.pushremote send the user's next git push elsewhere (mirror
// force-pushes and deletes the remote's other refs).
//
// Not inert though they run no program: extensions.partialclone and
// remote.*.promisor make git on the host fetch a missing object from the
// remote's URL by itself (git status does), unconfined, to wherever the
// command wrote it would: a listener on the host's loopback, with what
// the URL's path carries.

// inertNamed are the names of keys with a subsection (remote.NAME.url)
// that run nothing, by section.
var inertNamed = map[string]map[string]bool{
	"remote":    {"url": true, "fetch": true, "push": true, "tagopt": true, "prune": true},
	"branch":    {"remote": true, "merge": true, "rebase": true, "description": true},
	"submodule": {"url": true, "active": true, "branch": true, "ignore": true, "fetchrecursesubmodules": true, "shallow": true},
}

// inert reports whether git's use of e runs nothing. core.worktree names
// the work tree of a submodule's git directory (../../../sub): it stays
// when it leads into the project, else git on the host would check out
// and read files elsewhere; where it leads is part of the git directory's
// digest, so that a swap of a directory on the way for a symlink has it
// judged again. In the project's own repository it never stays.
func inert(e entry, gitDir, project string) bool {
	if e.Key == "core.worktree" {
		if e.NoValue || filepath.Clean(gitDir) == filepath.Join(filepath.Clean(project), ".git") {
			// The project's own repository has its work tree where it
			// is: a core.worktree the command sets there, even one that
			// leads inside the project now, could lead elsewhere once a
			// directory on the way is swapped for a symlink, and nothing
			// judges the project's own config again.
			return false
		}
		// Where it really leads, as git resolves it: through a symlink
		// in the project to the home, it is outside.
		p := e.Value
		if !filepath.IsAbs(p) {
			p = gitDir + "/" + p
		}
		real, err := resolveGitPath(p)
		if err != nil {
			return false
		}
		if rp, err := filepath.EvalSymlinks(project); err == nil {
			project = rp
		}
		return within(real, project)
	}
	return InertKey(e.Key)
}

// InertKey reports whether git's use of the configuration key (as git
// names it: section and name in lower case, a subsection as written) runs
// nothing, whatever its value. core.worktree is not: where it leads
// decides (inert).
func InertKey(key string) bool {
	if inertKeys[key] {
		return true
	}
	section, rest, ok := strings.Cut(key, ".")
	if !ok {
		return false
	}
	if inertSections[section] {
		return true
	}
	i := strings.LastIndexByte(rest, '.')
	return i > 0 && inertNamed[section][rest[i+1:]]
}

// parseList reads `git config --list --null`: entries ended by NUL, each a
// key, then a newline and the value when the key has one.
func parseList(out []byte) ([]entry, error) {
	var es []entry
	for len(out) > 0 {
		i := bytes.IndexByte(out, 0)
		if i < 0 {
			return nil, errors.New("git config's list does not end with NUL")
		}
		rec := out[:i]
		out = out[i+1:]
		k, v, hasValue := bytes.Cut(rec, []byte{'\n'})
		if len(k) == 0 || !bytes.Contains(k, []byte{'.'}) {
			return nil, fmt.Errorf("git config listed the key %q", k)
		}
		es = append(es, entry{Key: string(k), Value: string(v), NoValue: !hasValue})
	}
	return es, nil
}

// gitEnv runs git on a file alone: no system or user configuration, no
// home, nothing from the caller's GIT_* environment.
func gitEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=/nonexistent", "LC_ALL=C"}
}

// readConfig lists the entries of one git configuration file as git reads
// it, without following its includes. git config --file runs nothing the
// file names.
func readConfig(file string) ([]entry, error) {
	data, err := readFile(file)
	if err != nil {
		return nil, err
	}
	es, err := parseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return es, nil
}

// parseConfig lists the keys of a configuration file's contents as git
// reads them (given on its standard input: git opens no file of the
// repository's, which a sandboxed process may have made a symlink).
func parseConfig(data []byte) ([]entry, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "config", "--file", "-", "--no-includes", "--null", "--list")
	cmd.Dir, cmd.Env = "/", gitEnv()
	cmd.Stdin = bytes.NewReader(data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git config --list: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return parseList(out)
}

// formatConfig writes entries as a git configuration file, each under its
// own section header, values quoted.
func formatConfig(es []entry) ([]byte, error) {
	var b bytes.Buffer
	for _, e := range es {
		section, rest, ok := strings.Cut(e.Key, ".")
		i := strings.LastIndexByte(rest, '.')
		name, sub := rest, ""
		if i >= 0 {
			name, sub = rest[i+1:], rest[:i]
		}
		if !ok || !validName(section, true) || !validName(name, false) || strings.ContainsAny(sub, "\n\x00") || strings.ContainsRune(e.Value, 0) {
			return nil, fmt.Errorf("cannot write the key %q", e.Key)
		}
		if i >= 0 {
			fmt.Fprintf(&b, "[%s \"%s\"]\n", section, quote(sub, false))
		} else {
			fmt.Fprintf(&b, "[%s]\n", section)
		}
		if e.NoValue {
			fmt.Fprintf(&b, "\t%s\n", name)
		} else {
			fmt.Fprintf(&b, "\t%s = \"%s\"\n", name, quote(e.Value, true))
		}
	}
	return b.Bytes(), nil
}

// validName: letters, digits and "-" (and "." in a section name, which git
// lists as part of it), starting with a letter for a variable's name.
func validName(s string, section bool) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case (c >= '0' && c <= '9' || c == '-') && (section || i > 0):
		default:
			return false
		}
	}
	return true
}

// quote escapes s for a double-quoted value (value) or subsection name.
func quote(s string, value bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' || c == '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case value && c == '\n':
			b.WriteString(`\n`)
		case value && c == '\t':
			b.WriteString(`\t`)
		case value && c == '\b':
			b.WriteString(`\b`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// NewKeysThatRun lists the keys of the configuration after that were not
// in before (the same key with the same value) and are not inert: what a
// command that wrote the configuration added that would run a program
// when git on the host reads it, and the URL of a remote that was there
// before, changed (where the user's next git push goes). A file git
// cannot read is an error.
func NewKeysThatRun(before, after []byte, gitDir, project string) ([]string, error) {
	was, err := parseConfig(before)
	if err != nil {
		was = nil // the command's file is judged on its own
	}
	now, err := parseConfig(after)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range now {
		if slices.Contains(was, e) || slices.Contains(out, e.Key) {
			continue
		}
		// The URL of a remote that was there before, changed: the
		// user's next push would go where the command chose (a remote
		// it adds is its own, and named as such).
		moved := isRemoteURL(e.Key) && slices.ContainsFunc(was, func(w entry) bool { return w.Key == e.Key })
		// A branch sent to a remote the command added: the user's next
		// plain git push or pull on that branch goes to the command's
		// URL as much as a moved one would (git remote add x URL && git
		// config branch.main.remote x), or to a URL itself (a value that
		// is no remote's name: git takes it for the URL). "." is the
		// repository itself (a branch tracking a local one).
		if strings.HasPrefix(e.Key, "branch.") && strings.HasSuffix(e.Key, ".remote") && !e.NoValue && e.Value != "." {
			url := "remote." + e.Value + ".url"
			added := !slices.ContainsFunc(was, func(w entry) bool { return w.Key == url }) && slices.ContainsFunc(now, func(n entry) bool { return n.Key == url })
			moved = moved || added || strings.ContainsAny(e.Value, "/:")
		}
		if inert(e, gitDir, project) && !moved {
			continue
		}
		out = append(out, e.Key)
	}
	return out, nil
}

// isRemoteURL reports whether key is a remote's URL (remote.NAME.url).
func isRemoteURL(key string) bool {
	return strings.HasPrefix(key, "remote.") && strings.HasSuffix(key, ".url")
}
