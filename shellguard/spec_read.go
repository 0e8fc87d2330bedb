package shellguard

import (
	"path"
	"slices"
	"strings"

	"github.com/agentwarden/warden/shellguard/walk"
)

// Programs that read files. Each file operand is judged as a read against
// the filesystem policy's denied paths, and one in the home's secret zone
// marks the line as reading secrets (a network sink in it is then an
// exfiltration). A program that reads a whole tree (tar c, cp -r, grep -r,
// rg) is also asked about when a denied path lies inside the tree: it would
// read that path as surely as naming it.

// contentReaders print, compare, hash or pack what their file operands hold
// (for grep, rg, awk and sed, the operands readOperands finds). Only a
// program the guard already knows, as read-only or by a handler of its own,
// gets the check: being listed here never makes a program known, so gpg or
// zip stay unknown programs.
var contentReaders = []string{
	"cat", "tac", "head", "tail", "less", "more", "most", "bat", "batcat", "nl", "cut", "paste", "join", "comm",
	"uniq", "fold", "fmt", "column", "expand", "unexpand", "rev", "look", "iconv", "sort", "awk", "sed",
	"grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "zcat", "bzcat", "xzcat", "zless", "lz4cat",
	"diff", "diff3", "sdiff", "cmp", "md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "cksum", "sum",
	"jq", "yq", "gojq", "xq", "fx", "jless", "glow", "mdcat", "od", "hexdump", "xxd", "strings", "base32", "base64",
	"gpg", "openssl", "gzip", "bzip2", "xz", "zip", "tar", "source", ".",
}

// copiers read every operand but the last (the destination).
var copiers = []string{"cp", "mv", "scp", "rsync"}

// readHandlers wraps the handlers of the programs that read files with the
// read checks. It runs after every other handler is set.
func readHandlers(t map[string]handler) {
	known := map[string]bool{}
	for _, n := range strings.Fields(readOnlyPrograms) {
		known[n] = true // a name ending in "_" is not read-only, and matches no program
	}
	for _, n := range contentReaders {
		prev := t[n]
		if prev == nil && !known[n] {
			continue // a program the guard does not know stays unknown
		}
		t[n] = func(cc *cmdCtx) {
			if prev != nil {
				prev(cc)
			}
			for _, a := range readOperands(cc) {
				if strings.HasPrefix(a.Value, "-") || cc.deniedPath(a, "read") {
					continue
				}
				if cc.zone(a) == ZoneHomeSensitive {
					cc.c.markSecretRead(cc.cmd)
				}
			}
			cc.treeReads()
		}
	}
	for _, n := range copiers {
		t[n] = readSources(t[n])
	}
}

// patternReaders are the content readers whose first operand is a pattern
// or a program, not a file (grep PATTERN FILE…, awk PROGRAM FILE…, sed
// SCRIPT FILE…), unless an option gave it (grep -e/-f, awk -f/-e, sed
// -e/-f). Each maps to its grammar, the options that give the pattern, and
// the options whose value is a file it reads (grep -f FILE, awk -f FILE).
var patternReaders = map[string]struct{ grammar, given, files string }{
	"grep":  {"grep", "regexp file", "file exclude-from"},
	"egrep": {"grep", "regexp file", "file exclude-from"},
	"fgrep": {"grep", "regexp file", "file exclude-from"},
	"zgrep": {"grep", "regexp file", "file exclude-from"},
	"rg":    {"rg", "regexp file", "file ignore-file"},
	"awk":   {"awk", "file exec source W", "file exec include load"},
	"sed":   {"sed", "expression file", "file"},
}

// readOperands returns the words cc reads as files: its operands, and for
// a pattern reader (see patternReaders) the files its options name and its
// operands without the pattern or program. A pattern is not a file
// (grep -n '/usr/include' Makefile reads only Makefile); a word that may be
// an option only known at run time (grep $FLAGS x f) keeps every operand.
func readOperands(cc *cmdCtx) []walk.Word {
	pr, ok := patternReaders[cc.name]
	if !ok {
		return operands(cc.args)
	}
	p, files := patternOperands(cc, pr.grammar, pr.given)
	for _, o := range strings.Fields(pr.files) {
		files = append(files, p.words[o]...)
	}
	return files
}

// patternOperands parses cc's arguments by grammar and returns them with
// the operands that are files: all of them when an option of given gave
// the pattern or program, or a word may be an option, else all but the
// first.
func patternOperands(cc *cmdCtx, grammar, given string) (parsed, []walk.Word) {
	p := parseArgs(gram(grammar), cc.args, false)
	ops := p.operands
	if !p.has(strings.Fields(given)...) && !p.dynamicOpt && len(ops) > 0 {
		ops = ops[1:]
	}
	return p, slices.Clip(ops)
}

// readSources wraps the handler of a copying program: every operand but the
// last is a source it reads.
func readSources(h handler) handler {
	return func(cc *cmdCtx) {
		if ops := operands(cc.args); len(ops) > 1 {
			for _, a := range ops[:len(ops)-1] {
				cc.deniedPath(a, "read")
			}
		}
		cc.treeReads()
		if h != nil {
			h(cc)
		}
	}
}

// treeReads asks about each operand the command reads as a whole tree that
// holds a denied path.
func (cc *cmdCtx) treeReads() {
	for _, w := range treeOperands(cc) {
		if cc.deniedWithin(w) {
			return // one question is enough
		}
	}
}

// readsTrees reports whether program name, given args, reads whole trees:
// grep -r (and egrep, fgrep, zgrep), rg, ag and ack, tar creating an archive,
// and a recursive cp, rsync or scp.
func readsTrees(name string, args []walk.Word) bool {
	switch name {
	case "grep", "egrep", "fgrep", "zgrep":
		return hasFlag(args, "rR", "--recursive", "--dereference-recursive", "--directories=recurse")
	case "rg", "ag", "ack":
		return true
	case "cp", "rsync":
		return hasFlag(args, "rRa", "--recursive", "--archive")
	case "scp":
		return hasFlag(args, "r", "--recursive")
	case "tar":
		return tarCreates(args)
	}
	return false
}

// treeOperands returns the operands cc reads as whole trees (see
// readsTrees): a grep's or rg's files and directories, without its pattern
// (the working directory when it names none), tar's (relative to its -C
// directory), and the sources of a copy.
func treeOperands(cc *cmdCtx) []walk.Word {
	if !readsTrees(cc.name, cc.args) {
		return nil
	}
	if pr, ok := patternReaders[cc.name]; ok {
		_, files := patternOperands(cc, pr.grammar, pr.given)
		return orWorkingDir(files, 0)
	}
	ops := operands(cc.args)
	switch cc.name {
	case "cp", "rsync", "scp":
		if len(ops) < 2 {
			return nil
		}
		return local(ops[:len(ops)-1])
	case "tar":
		return tarSources(cc.args)
	}
	return orWorkingDir(ops, 1)
}

// operands returns the words of args that are not options.
func operands(args []walk.Word) []walk.Word {
	var ops []walk.Word
	for _, a := range args {
		if !strings.HasPrefix(a.Value, "-") {
			ops = append(ops, a)
		}
	}
	return ops
}

// hasFlag reports whether args hold one of the long options, or a short
// option cluster ("-rn") with one of the letters in short.
func hasFlag(args []walk.Word, short string, long ...string) bool {
	for _, a := range args {
		v := a.Value
		switch {
		case strings.HasPrefix(v, "--"):
			for _, l := range long {
				if v == l {
					return true
				}
			}
		case strings.HasPrefix(v, "-") && strings.ContainsAny(v[1:], short):
			return true
		}
	}
	return false
}

// orWorkingDir is ops, or the working directory when ops has no more than
// the n leading operands that are not paths (a pattern).
func orWorkingDir(ops []walk.Word, n int) []walk.Word {
	if len(ops) <= n {
		return append(ops, walk.Word{Value: "."})
	}
	return ops
}

// local drops the remote operands (host:path) of a copy.
func local(ops []walk.Word) []walk.Word {
	var out []walk.Word
	for _, w := range ops {
		if w.Dynamic || !strings.Contains(w.Value, ":") {
			out = append(out, w)
		}
	}
	return out
}

// tarCreates reports whether tar's args create an archive: c, -c or
// --create.
func tarCreates(args []walk.Word) bool {
	for i, a := range args {
		v := a.Value
		switch {
		case v == "--create":
			return true
		case strings.HasPrefix(v, "--"):
		case strings.HasPrefix(v, "-") && strings.ContainsRune(v[1:], 'c'):
			return true
		case i == 0 && strings.ContainsRune(v, 'c'):
			return true // the old form: "czf"
		}
	}
	return false
}

// tarSources returns what tar archives, each relative operand joined to the
// -C directory before it. The archive's own name is among them; as a tree it
// is harmless to judge.
func tarSources(args []walk.Word) []walk.Word {
	var out []walk.Word
	dir := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.Value
		switch {
		case v == "-C" || v == "--directory":
			if i+1 < len(args) {
				i++
				dir = args[i].Value
				if args[i].Dynamic {
					dir = ""
				}
			}
		case strings.HasPrefix(v, "--directory="):
			dir = strings.TrimPrefix(v, "--directory=")
		case strings.HasPrefix(v, "-"), i == 0:
			// an option, or the old form's letters
		default:
			if dir != "" && !a.Dynamic && !path.IsAbs(v) {
				a.Value = path.Join(dir, v)
			}
			out = append(out, a)
		}
	}
	return out
}
