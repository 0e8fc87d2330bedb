package shellguard

import (
	"slices"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/shellguard/walk"
)

// markSecretRead records that a command reads secrets (env, ~/.ssh keys,
// .env files); dataflow denies the line if they can reach the network.
func (c *ctx) markSecretRead(cmd *walk.Command) {
	c.trace = append(c.trace, "secret read at "+spanString(cmd.Span))
	c.secretReads = append(c.secretReads, cmd)
}

func spanString(s walk.Span) string {
	return strings.Join([]string{itoa(s.Start), itoa(s.End)}, "-")
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	neg := i < 0
	if neg {
		i = -i
	}
	var b [20]byte
	n := len(b)
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	if neg {
		n--
		b[n] = '-'
	}
	return string(b[n:])
}

// fedByPipe reports a command whose arguments come from its stdin.
func fedByPipe(cmd *walk.Command) bool {
	for _, w := range cmd.Wrappers {
		if w == "xargs" || w == "parallel" {
			return true
		}
	}
	return len(cmd.Argv) > 0 && (cmd.Argv[0].Value == "xargs" || cmd.Argv[0].Value == "parallel")
}

func wrappedBy(cmd *walk.Command, name string) bool {
	for _, w := range cmd.Wrappers {
		if w == name {
			return true
		}
	}
	return false
}

// producerTargets are the paths a producer prints: find's start paths,
// echo's operands, printf's with a format that prints each as it is, ls's
// (listing names only), grep -l's and rg -l's. Nil when it may print
// anything else: a path it was not given (locate, find -L's targets are
// not, but find -printf, -ls and -exec print what they like, ls -l prints
// where symlinks point) or text from a file or stdin (grep --label).
func producerTargets(cmd *walk.Command) []walk.Word {
	args := cmd.Argv[1:]
	switch progName(cmd.Argv[0].Value) {
	case "find":
		starts, i := findStarts(args)
		for _, w := range args[i:] {
			if w.Dynamic || findPrints.has(w.Value) {
				return nil
			}
		}
		return starts
	case "ls":
		var out []walk.Word
		for _, w := range args {
			switch {
			case w.Dynamic || !strings.HasPrefix(w.Value, "-") || w.Value == "-":
				out = append(out, w)
			case strings.HasPrefix(w.Value, "--"):
				if !lsNamesOnly.has(w.Value) {
					return nil
				}
			case strings.Trim(w.Value[1:], "1aAdrRtSUXv") != "":
				return nil // -l, -g, -o, -n print more than names
			}
		}
		if len(out) == 0 {
			out = append(out, walk.Word{Value: "."})
		}
		return out
	case "echo":
		var out []walk.Word
		for _, w := range args {
			if !strings.HasPrefix(w.Value, "-") {
				out = append(out, w)
			}
		}
		return out
	case "printf":
		if len(args) == 0 || args[0].Dynamic || !plainFormats.has(args[0].Value) {
			return nil // printf '%c%s' . ./.bashrc prints ../.bashrc
		}
		return args[1:]
	case "grep", "egrep", "fgrep", "rg":
		return listedMatches(cmd)
	case "git":
		if gitListsTrackedPaths(args) {
			// Paths of the work tree, never of .git (git ls-files, git
			// grep -l, git diff --name-only): its files, as find .'s.
			return []walk.Word{{Value: "."}}
		}
	}
	return nil
}

// passesLines reports whether cmd, in a pipeline, prints only whole lines
// it read from its stdin, picked, ordered or copied but never changed: sort,
// uniq, head and tail with options that compare, count or order only (not
// uniq -c, head -c, sort -o, nor a file operand, whose lines would join
// the input), tee (its files are writes, judged as such), cat with nothing
// given, and grep selecting lines by a pattern given in the line (not -o,
// -n, -c, context lines, a file operand or recursion). A word only known
// at run time may be any option: none is allowed but grep's -e pattern.
// With nul, items end with NUL (xargs -0), and each filter must read them
// so (-z), but tee and cat, which copy bytes.
func passesLines(cmd *walk.Command, nul bool) bool {
	if len(cmd.Argv) == 0 || cmd.Argv[0].Dynamic || len(cmd.Wrappers) > 0 || len(cmd.Redirects) > 0 {
		return false
	}
	name, args := progName(cmd.Argv[0].Value), cmd.Argv[1:]
	opts, ok := passesLinesOpts[name]
	if !ok {
		return false
	}
	zero, patterned := false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if a.Dynamic {
			return false
		}
		switch {
		case name == "tee" && !strings.HasPrefix(v, "-"):
			continue // a file it writes
		case name == "grep" && !patterned && !strings.HasPrefix(v, "-"):
			patterned = true // the pattern
			continue
		case v == "-" && name != "grep" && name != "tee":
			continue // stdin
		case !strings.HasPrefix(v, "-") || v == "-" || v == "--":
			return false // a file operand (or what follows --)
		case v == "-z" || v == "--zero-terminated" || v == "--null-data":
			zero = true
			continue
		case name == "grep" && (v == "-e" || v == "--regexp"):
			if i+1 >= len(args) {
				return false
			}
			i++ // its value, known or not, is a pattern
			patterned = true
			continue
		case name == "grep" && strings.HasPrefix(v, "--regexp="):
			patterned = true
			continue
		}
		flag, value, hasValue := strings.Cut(v, "=")
		if strings.HasPrefix(flag, "--") {
			takes, known := opts.long[flag]
			if !known || hasValue != takes && !(takes && i+1 < len(args)) {
				return false
			}
			if takes && !hasValue {
				if args[i+1].Dynamic {
					return false
				}
				i++
			}
			_ = value
			continue
		}
		// A cluster of short options; one that takes a value ends it.
		for k := 1; k < len(v); k++ {
			ch := v[k]
			if ch >= '0' && ch <= '9' && opts.digits {
				continue // head -20
			}
			if ch == 'z' {
				zero = true
				continue
			}
			if strings.IndexByte(opts.flags, ch) >= 0 {
				continue
			}
			if strings.IndexByte(opts.valued, ch) < 0 {
				return false
			}
			if k == len(v)-1 {
				if i+1 >= len(args) || args[i+1].Dynamic {
					return false
				}
				i++
			}
			break
		}
	}
	if name == "grep" && !patterned {
		return false
	}
	return !nul || zero || name == "tee" || name == "cat"
}

// passesLinesOpts are the options passesLines lets through, per filter:
// short flags, short options taking a value, long options (true: takes a
// value), and whether a bare number is a count (head -20).
var passesLinesOpts = map[string]struct {
	flags, valued string
	long          map[string]bool
	digits        bool
}{
	"sort": {flags: "bdfghiMnRrsuV", valued: "ktS", long: map[string]bool{
		"--unique": false, "--reverse": false, "--numeric-sort": false, "--version-sort": false, "--ignore-case": false,
		"--general-numeric-sort": false, "--human-numeric-sort": false, "--month-sort": false, "--random-sort": false,
		"--stable": false, "--ignore-leading-blanks": false, "--dictionary-order": false, "--key": true,
		"--field-separator": true, "--buffer-size": true, "--parallel": true,
	}},
	"uniq": {flags: "diuD", valued: "fsw", long: map[string]bool{
		"--repeated": false, "--unique": false, "--ignore-case": false, "--skip-fields": true, "--skip-chars": true, "--check-chars": true,
	}},
	"head": {flags: "q", valued: "n", long: map[string]bool{"--lines": true, "--quiet": false, "--silent": false}, digits: true},
	"tail": {flags: "q", valued: "n", long: map[string]bool{"--lines": true, "--quiet": false, "--silent": false}, digits: true},
	"tee":  {flags: "aip", long: map[string]bool{"--append": false, "--ignore-interrupts": false}},
	"cat":  {},
	"grep": {flags: "vixwFEGsqU", long: map[string]bool{
		"--invert-match": false, "--ignore-case": false, "--line-regexp": false, "--word-regexp": false,
		"--fixed-strings": false, "--extended-regexp": false, "--basic-regexp": false, "--no-messages": false, "--quiet": false, "--silent": false,
	}},
}

// gitListsTrackedPaths reports whether git with args prints only paths of
// the work tree it runs in, one a line: ls-files (no -s, -t, -v, --format,
// --debug, -u: those print more than the name), grep -l or -L, diff
// --name-only. Not with -C, --git-dir or --work-tree, which lead it
// elsewhere, nor with a word only known at run time.
func gitListsTrackedPaths(args []walk.Word) bool {
	sub, i := "", 0
	for ; i < len(args) && sub == ""; i++ {
		a := args[i]
		switch {
		case a.Dynamic:
			return false
		case a.Value == "-c":
			i++
		case a.Value == "--no-pager" || a.Value == "--literal-pathspecs" || a.Value == "--no-optional-locks":
		case strings.HasPrefix(a.Value, "-"):
			return false // -C, --git-dir, --work-tree and the rest
		default:
			sub = a.Value
		}
	}
	rest := args[i:]
	has := func(names ...string) bool {
		for _, a := range rest {
			if a.Dynamic {
				continue
			}
			for _, n := range names {
				if a.Value == n || strings.HasPrefix(n, "--") && strings.HasPrefix(a.Value, n+"=") {
					return true
				}
			}
		}
		return false
	}
	for _, a := range rest {
		if a.Dynamic && strings.HasPrefix(a.Value, "-") {
			return false
		}
	}
	switch sub {
	case "ls-files":
		return !has("-s", "--stage", "-t", "-v", "-f", "--format", "--debug", "-u", "--unmerged", "--eol", "--resolve-undo") && !slices.ContainsFunc(rest, func(a walk.Word) bool {
			return !a.Dynamic && len(a.Value) > 2 && a.Value[0] == '-' && a.Value[1] != '-' && strings.ContainsAny(a.Value[1:], "stvfu")
		})
	case "grep":
		return has("-l", "--files-with-matches", "-L", "--files-without-match", "--name-only")
	case "diff":
		return has("--name-only")
	}
	return false
}

// reachesGitDir reports whether a producer, started from the project's
// root, lists the files inside its .git too (refs, objects, config):
// find, unless its expression selects only files of one extension (-name
// '*.go'); grep -r, -R or -d recurse, unless it is given
// --exclude-dir=.git or includes only such files (--include='*.py'); rg with --hidden, -. or -uu (it skips hidden
// directories otherwise). A word it cannot place counts as reaching it.
// prunesGitDir reports whether a find expression starts by pruning the
// .git directory (-path ./.git -prune -o …, -name .git -prune -o …, the
// same in parentheses): what the rest prints lies outside it.
func prunesGitDir(expr []walk.Word) bool {
	var vals []string
	for _, w := range expr {
		if w.Dynamic {
			return false
		}
		vals = append(vals, w.Value)
	}
	if len(vals) > 0 && (vals[0] == "(" || vals[0] == "\\(") {
		if len(vals) < 5 || vals[4] != ")" && vals[4] != "\\)" {
			return false
		}
		vals = append(vals[1:4], vals[5:]...)
	}
	if len(vals) < 4 || vals[2] != "-prune" || vals[3] != "-o" && vals[3] != "-or" {
		return false
	}
	switch vals[0] {
	case "-path", "-wholename":
		return vals[1] == "./.git" || vals[1] == "*/.git"
	case "-name":
		return vals[1] == ".git"
	}
	return false
}

func reachesGitDir(cmd *walk.Command) bool {
	args := cmd.Argv[1:]
	switch progName(cmd.Argv[0].Value) {
	case "find":
		_, i := findStarts(args)
		expr, ext := args[i:], false
		if prunesGitDir(expr) {
			return false // find . -path ./.git -prune -o …: nothing of .git is printed
		}
		for k, w := range expr {
			switch w.Value {
			case "-o", "-or", ",", "(", "\\(":
				return true
			case "-name", "-iname":
				negated := k > 0 && (expr[k-1].Value == "!" || expr[k-1].Value == "-not")
				if k+1 < len(expr) && !negated && extensionGlob(expr[k+1]) {
					ext = true
				}
			}
		}
		return !ext
	case "grep", "egrep", "fgrep":
		rec, include, onlyExt := false, false, true
		for k, w := range args {
			v := w.Value
			next := walk.Word{}
			if k+1 < len(args) {
				next = args[k+1]
			}
			switch {
			case v == "--":
				return rec && !(include && onlyExt)
			case v == "--exclude-dir=.git" || v == "--exclude-dir" && next.Value == ".git":
				return false
			case strings.HasPrefix(v, "--include"):
				g, ok := strings.CutPrefix(v, "--include=")
				pat := walk.Word{Value: g, Dynamic: w.Dynamic}
				if !ok {
					pat = next
				}
				include, onlyExt = true, onlyExt && extensionGlob(pat)
			case v == "--recursive" || v == "--dereference-recursive" || v == "--directories=recurse" || v == "--directories" && next.Value == "recurse":
				rec = true
			case strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--"):
				rec = rec || strings.ContainsAny(v, "rR") || strings.HasSuffix(v, "d") && next.Value == "recurse" || strings.Contains(v, "drecurse")
			}
		}
		return rec && !(include && onlyExt)
	case "rg":
		for _, w := range args {
			v := w.Value
			if v == "--hidden" || v == "--unrestricted" || strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && (strings.Contains(v, ".") || strings.Count(v, "u") >= 2) {
				return true
			}
		}
	}
	return false
}

// extensionGlob reports whether a -name pattern matches only names with
// one extension (*.go, *.test.ts): no file git keeps in .git is named so.
func extensionGlob(w walk.Word) bool {
	ext, ok := strings.CutPrefix(w.Value, "*.")
	return ok && !w.Dynamic && ext != "" && strings.Trim(ext, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.") == ""
}

// findPrints are find's actions that print other text than the paths it
// finds (or run programs that may).
var findPrints = setOf("-printf", "-fprintf", "-ls", "-fls", "-exec", "-execdir", "-ok", "-okdir")

// lsNamesOnly are ls's long options that leave it printing names.
var lsNamesOnly = setOf("--", "--all", "--almost-all", "--directory", "--recursive", "--reverse")

// plainFormats are printf formats that print each argument as it is.
var plainFormats = setOf(`%s\n`, `%s\0`, `%s `, `%s\t`, "%s\n")

// listedMatches returns the paths grep -l (or -L) and rg -l (or
// --files-without-match) search, whose names they print: the operands
// after the pattern, or the working directory when none is given. A grep
// that prints lines rather than names feeds no paths (nil).
func listedMatches(cmd *walk.Command) []walk.Word {
	rg := progName(cmd.Argv[0].Value) == "rg"
	names, patternGiven := false, false
	var ops []walk.Word
	args := cmd.Argv[1:]
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case args[i].Dynamic || strings.HasPrefix(v, "--label") || rg && rgNotNames.has(strings.SplitN(v, "=", 2)[0]):
			// grep --label=NAME - prints NAME; rg --vimgrep, --json
			// and --count print lines or counts, whichever comes last
			return nil
		case v == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case v == "--files-with-matches" || v == "--files-without-match":
			names = true
		case v == "-e" || v == "-f" || v == "--regexp" || v == "--file":
			patternGiven = true
			i++
		case strings.HasPrefix(v, "--regexp=") || strings.HasPrefix(v, "--file="):
			patternGiven = true
		case strings.HasPrefix(v, "--"):
			if !strings.Contains(v, "=") && (v == "--include" || v == "--exclude" || v == "--exclude-dir" || v == "--glob" || v == "--type" || v == "--max-count" || v == "--context" || v == "--iglob" || v == "--type-not") {
				i++ // an option with a separate value
			}
		case strings.HasPrefix(v, "-") && len(v) > 1:
			// A cluster of letters; one that takes a value (-e PAT, -f
			// FILE, -m N, -A/-B/-C N, -d/-D ACTION; rg's -g, -t, -T, -r,
			// -j, -M, -E too) ends it, with its value attached or next.
			valued := "efmABCdD"
			if rg {
				valued = "efmABCgtTrjME"
			}
			for k := 1; k < len(v); k++ {
				ch := v[k]
				if ch == 'l' || ch == 'L' && !rg { // rg -L follows symlinks
					names = true
				}
				if ch == 'c' && rg {
					return nil // rg -c prints counts, not names, after -l
				}
				if strings.IndexByte(valued, ch) < 0 {
					continue
				}
				if ch == 'e' || ch == 'f' {
					patternGiven = true
				}
				if k == len(v)-1 {
					i++
				}
				break
			}
		default:
			ops = append(ops, args[i])
		}
	}
	if !names {
		return nil
	}
	if !patternGiven && len(ops) > 0 {
		ops = ops[1:]
	}
	if len(ops) == 0 {
		return []walk.Word{{Value: "."}}
	}
	for _, w := range ops {
		if w.Value == "-" {
			return nil // stdin, printed as whatever --label names
		}
	}
	return ops
}

// rgNotNames are rg's options that make it print other text than names,
// even after -l.
var rgNotNames = setOf("--vimgrep", "--json", "--count", "--count-matches", "--passthru", "--passthrough")

// netOutputFiles returns the files curl/wget write (-o, -O, --output).
func netOutputFiles(cmd *walk.Command) []string {
	var out []string
	args := cmd.Argv[1:]
	for i, a := range args {
		v := a.Value
		switch {
		case (v == "-o" || v == "--output" || v == "--output-document") && i+1 < len(args):
			if args[i+1].Value != "-" {
				out = append(out, args[i+1].Value)
			}
		case strings.HasPrefix(v, "--output=") || strings.HasPrefix(v, "--output-document="):
			_, f, _ := strings.Cut(v, "=")
			if f != "-" {
				out = append(out, f)
			}
		case v == "-O" && progName(cmd.Argv[0].Value) == "wget" && i+1 < len(args):
			if args[i+1].Value != "-" {
				out = append(out, args[i+1].Value)
			}
		}
	}
	return out
}

// netFetchStdout reports a network fetch whose body goes to stdout.
func netFetchStdout(cmd *walk.Command) bool {
	if len(cmd.Argv) == 0 {
		return false
	}
	switch progName(cmd.Argv[0].Value) {
	case "curl", "http", "xh":
		for _, a := range cmd.Argv[1:] {
			if a.Value == "-o" || a.Value == "-O" || a.Value == "--remote-name" || strings.HasPrefix(a.Value, "--output") {
				return hasArg(cmd.Argv, "-")
			}
		}
		return true
	case "wget":
		for i, a := range cmd.Argv[1:] {
			if (a.Value == "-O" || a.Value == "--output-document") && i+2 < len(cmd.Argv) && cmd.Argv[i+2].Value == "-" || a.Value == "-O-" || a.Value == "--output-document=-" || a.Value == "-qO-" {
				return true
			}
		}
		return false
	case "nc", "ncat", "netcat", "socat", "aws", "gsutil":
		return len(cmd.Argv) > 1
	}
	return false
}

// netSink reports a command that sends data to the network.
func netSink(cmd *walk.Command) bool {
	if len(cmd.Argv) == 0 {
		return false
	}
	switch progName(cmd.Argv[0].Value) {
	case "curl", "wget", "http", "xh", "nc", "ncat", "netcat", "socat", "telnet", "scp", "sftp", "ftp", "rsync", "ssh", "mail", "sendmail", "mutt":
		return true
	}
	for _, r := range cmd.Redirects {
		if strings.HasPrefix(r.Target.Value, "/dev/tcp/") || strings.HasPrefix(r.Target.Value, "/dev/udp/") {
			return true
		}
	}
	return false
}

// isExecSink reports a shell or interpreter that runs code read from stdin.
func isExecSink(cmd *walk.Command) bool {
	if len(cmd.Argv) == 0 || cmd.Argv[0].Dynamic {
		return false
	}
	n := progName(cmd.Argv[0].Value)
	if isShell(n) {
		return !shellHasCode(cmd.Argv[1:])
	}
	if isInterpreter(n) {
		return interpReadsStdin(cmd.Argv[1:])
	}
	return false
}

// dataflow checks the flows between commands of the line.
func (c *ctx) dataflow() {
	cmds := c.walk.Commands
	netByPipe := map[int]*walk.Command{}
	for i := range cmds {
		cmd := &cmds[i]
		if cmd.PipeLen > 1 && netFetchStdout(cmd) {
			if prev, ok := netByPipe[cmd.Pipeline]; !ok || prev.PipePos > cmd.PipePos {
				netByPipe[cmd.Pipeline] = cmd
			}
		}
	}
	for i := range cmds {
		cmd := &cmds[i]
		if cmd.PipeLen > 1 && cmd.PipePos > 0 && isExecSink(cmd) {
			if src, ok := netByPipe[cmd.Pipeline]; ok && src.PipePos < cmd.PipePos {
				c.netExec(cmd, src)
			}
		}
		// A file downloaded earlier in the line, then run.
		if len(cmd.Argv) > 1 && !cmd.Argv[0].Dynamic && (isShell(progName(cmd.Argv[0].Value)) || isInterpreter(progName(cmd.Argv[0].Value)) || cmd.Argv[0].Value == "source" || cmd.Argv[0].Value == ".") {
			for _, a := range cmd.Argv[1:] {
				if c.netFiles[a.Value] {
					c.netExec(cmd, nil)
				}
			}
		}
		if len(cmd.Argv) > 0 && c.netFiles[cmd.Argv[0].Value] {
			c.netExec(cmd, nil)
		}
	}
	// Secrets reaching a network sink, in a pipe or anywhere in the line.
	if len(c.secretReads) > 0 {
		for i := range cmds {
			cmd := &cmds[i]
			if !netSink(cmd) || c.ownLoopbackOnly[cmd] {
				continue
			}
			for _, s := range c.secretReads {
				if s != cmd {
					c.add(finding{v: warden.Deny, rule: "shell.exfiltration", reason: "secrets read in this command line could reach a network sink"}, cmd.Span)
					break
				}
			}
		}
	}
	c.forkBomb()
}

// netPipedInto reports whether a network fetch writing to stdout comes
// earlier in cmd's pipeline.
func (c *ctx) netPipedInto(cmd *walk.Command) bool {
	for i := range c.walk.Commands {
		src := &c.walk.Commands[i]
		if src.Pipeline == cmd.Pipeline && src.PipePos < cmd.PipePos && netFetchStdout(src) {
			return true
		}
	}
	return false
}

// decoders are programs whose output is text they decode, decompress or
// transform from an unreadable form: code they print is the shape of a
// hidden payload.
var decoders = map[string]bool{
	"base64": true, "base32": true, "basenc": true, "xxd": true, "od": true, "hexdump": true, "openssl": true,
	"gpg": true, "gpg2": true, "age": true, "uudecode": true, "rev": true, "tr": true, "iconv": true,
	"gzip": true, "gunzip": true, "zcat": true, "bzip2": true, "bunzip2": true, "bzcat": true,
	"xz": true, "unxz": true, "xzcat": true, "lzma": true, "unlzma": true, "zstd": true, "unzstd": true, "zstdcat": true,
	"lz4": true, "brotli": true, "tar": true, "unzip": true, "7z": true, "cpio": true,
}

// decodedInto reports whether a command before cmd in its pipeline is a
// decoder (decoders), or one whose name is only known at run time.
func (c *ctx) decodedInto(cmd *walk.Command) bool {
	return c.decoderIn(func(src *walk.Command) bool { return src.Pipeline == cmd.Pipeline && src.PipePos < cmd.PipePos })
}

// decoderIn reports whether a command of the line that in selects (every
// one, for nil) is a decoder, or one whose name is only known at run time.
func (c *ctx) decoderIn(in func(*walk.Command) bool) bool {
	for i := range c.walk.Commands {
		src := &c.walk.Commands[i]
		if len(src.Argv) == 0 || in != nil && !in(src) {
			continue
		}
		if src.Argv[0].Dynamic || decoders[progName(src.Argv[0].Value)] {
			return true
		}
	}
	return false
}

// netExec judges code from the network being executed.
func (c *ctx) netExec(cmd *walk.Command, src *walk.Command) {
	f := finding{v: warden.Sandbox, rule: "shell.net_exec", reason: "code downloaded from the network would be executed; it runs in the sandbox",
		suggestion: ""}
	if cmd.Privileged {
		f.v, f.rule, f.reason = warden.Deny, "shell.net_exec.privileged", "code downloaded from the network would be executed with elevated privileges"
	}
	if src != nil {
		for _, a := range src.Argv[1:] {
			if h := urlHost(a.Value); h != "" && !isASCII(h) {
				f.v, f.rule, f.reason = warden.Deny, "shell.net_exec.homograph", "code from a URL whose host has non-ASCII characters (a homograph) would be executed"
			}
		}
	}
	c.add(f, cmd.Span)
}

// forkBomb detects a function that calls itself in a background pipeline.
func (c *ctx) forkBomb() {
	for i := range c.walk.Commands {
		cmd := &c.walk.Commands[i]
		if len(cmd.Argv) == 0 || cmd.Argv[0].Dynamic {
			continue
		}
		name := cmd.Argv[0].Value
		if strings.HasPrefix(cmd.Via, "function ") && strings.TrimPrefix(cmd.Via, "function ") == name && (cmd.Background || cmd.PipeLen > 1) {
			c.add(finding{v: warden.Deny, rule: "shell.fork_bomb", reason: "a function that calls itself in the background exhausts the process table"}, cmd.Span)
			return
		}
	}
	// Lexical fallback: NAME(){ NAME|NAME& }.
	s := c.src
	if i := strings.Index(s, "(){"); i > 0 {
		j := i
		for j > 0 && s[j-1] != ' ' && s[j-1] != ';' && s[j-1] != '\n' {
			j--
		}
		name := s[j:i]
		body := s[i:]
		if name != "" && strings.Contains(body, name+"|"+name) && strings.Contains(body, "&") {
			c.add(finding{v: warden.Deny, rule: "shell.fork_bomb", reason: "a function that calls itself in the background exhausts the process table"}, walk.Span{Start: j, End: len(s)})
		}
	}
}
