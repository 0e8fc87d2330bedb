package shellguard

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/shellguard/walk"
)

// shellNames are walk.Shells and busybox's sh.
var shellNames = append(slices.Clone(walk.Shells), "busybox_sh")

var interpreterNames = []string{"python", "python2", "python3", "node", "nodejs", "deno", "perl", "ruby", "php", "lua", "luajit", "Rscript", "osascript", "pwsh", "powershell", "tclsh", "julia"}

func isShell(n string) bool {
	for _, s := range shellNames {
		if s == n {
			return true
		}
	}
	return false
}

func isInterpreter(n string) bool {
	if strings.HasPrefix(n, "python3.") {
		return true
	}
	for _, s := range interpreterNames {
		if s == n {
			return true
		}
	}
	return false
}

// shellHasCode reports a shell given -c (its code string is walked by Walk).
func shellHasCode(args []walk.Word) bool {
	for _, a := range args {
		v := a.Value
		if v == "--" || !strings.HasPrefix(v, "-") {
			return false
		}
		if !strings.HasPrefix(v, "--") && strings.Contains(v, "c") {
			return true
		}
	}
	return false
}

// hShell: a shell with -c or fed literal code runs what Walk found inside
// (classified separately); with a script file it runs code the guard cannot
// see, which the workspace sandbox contains; code piped in from another
// command (a decoder, a generator) is the shape of an obfuscated payload
// and goes to the guard sandbox.
func hShell(cc *cmdCtx) {
	args := cc.args
	if shellHasCode(args) {
		xargsCode(cc)
		return
	}
	for i, a := range args {
		v := a.Value
		if a.Dynamic && !strings.HasPrefix(a.Prefix, "-") {
			if cc.c.netWithin(a.Span) {
				cc.say(warden.Sandbox, "shell.net_exec", cc.name+" runs code downloaded from the network; it runs in the sandbox").destructive = true
				cc.c.understand(a.Span)
				return
			}
			cc.say(warden.Ask, "shell.dynamic_script", cc.name+" runs a script whose name is only known at run time")
			return
		}
		if v == "-" || v == "-s" {
			break
		}
		if strings.HasPrefix(v, "-") && v != "--" {
			if v == "-i" || strings.HasPrefix(v, "-") && strings.Contains(v, "i") && !strings.HasPrefix(v, "--") {
				if !cc.cmd.StdinKnown && len(args) == i+1 {
					cc.say(warden.Ask, "shell.interactive", cc.name+" -i starts an interactive shell")
					return
				}
			}
			continue
		}
		if v == "--" {
			continue
		}
		cc.unseen("shell.script", fmt.Sprintf("%s runs the script %s, code the guard cannot see", cc.name, v))
		return
	}
	if cc.cmd.StdinKnown || hasBody(cc.cmd) {
		return // Walk parsed the literal code
	}
	if cc.cmd.PipePos > 0 {
		if cc.c.netPipedInto(cc.cmd) {
			return // code from the network: the dataflow's rule decides
		}
		// printf 'cat %q\n' "$f" | bash: code a local command prints,
		// from its own values and files, is code the guard cannot see, as
		// a script's or . <(…)'s (shell.dynamic_code.saved): it runs in
		// the workspace sandbox, the project saved first. What a decoder
		// prints (base64 -d, xxd -r, zcat…), or a line that fetches
		// anything, is the shape of a payload.
		if !cc.c.decodedInto(cc.cmd) && !cc.c.netWithin(walk.Span{Start: 0, End: len(cc.c.src)}) && !cc.cmd.Privileged && cc.saveProject() {
			cc.say(warden.Allow, "shell.stdin_code.saved", cc.name+" runs code a local command prints; it runs in the workspace sandbox, and warden saves the project's work tree first (`warden undo` brings it back, but for ignored files)")
			return
		}
		cc.say(warden.Sandbox, "shell.stdin_code", cc.name+" runs code piped in from another command, the shape of an obfuscated payload; it runs in the guard sandbox").destructive = true
		return
	}
	if redirectedStdin(cc.cmd) {
		cc.unseen("shell.script", cc.name+" runs code read from a file the guard cannot see")
		return
	}
	cc.say(warden.Ask, "shell.interactive", cc.name+" with no script starts an interactive shell")
}

// xargsCode judges `xargs -I{} sh -c 'CODE {}'`: the code is known except
// for the replacement string, which xargs fills from its input. Each known
// input line is substituted and the code classified.
func xargsCode(cc *cmdCtx) {
	if !fedByPipe(cc.cmd) {
		return
	}
	var code walk.Word
	found := false
	for i, a := range cc.args {
		if strings.HasPrefix(a.Value, "-") && !strings.HasPrefix(a.Value, "--") && strings.Contains(a.Value, "c") && i+1 < len(cc.args) {
			code, found = cc.args[i+1], true
			break
		}
	}
	if !found || !code.Dynamic {
		return
	}
	raw := cc.c.raw(code)
	if len(raw) < 2 || raw[0] != '\'' || raw[len(raw)-1] != '\'' || !strings.Contains(raw, "{}") {
		return
	}
	body := raw[1 : len(raw)-1]
	var inputs []string
	if cc.cmd.StdinKnown {
		inputs = strings.Fields(cc.cmd.Stdin)
	}
	if len(inputs) == 0 {
		return
	}
	worst := warden.Allow
	var last Result
	for _, in := range inputs {
		r := classifyDepth(strings.ReplaceAll(body, "{}", shellQuote(in)), *cc.c.env, cc.c.p, cc.c.depth+1)
		if r.Verdict.Stronger(worst) {
			worst, last = r.Verdict, r
		}
	}
	cc.c.understand(code.Span)
	if worst != warden.Allow {
		cc.say(worst, last.Rule, "xargs runs a command on its input: "+last.Reason).destructive = worst == warden.Deny
	}
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func hasBody(cmd *walk.Command) bool {
	for _, r := range cmd.Redirects {
		if r.IsBody {
			return true
		}
	}
	return false
}

func redirectedStdin(cmd *walk.Command) bool {
	for _, r := range cmd.Redirects {
		if r.Op == "<" && (r.Fd == "" || r.Fd == "0") {
			return true
		}
	}
	return false
}

// interpCodeFlags are the options that give an interpreter its code.
func isInterpCodeFlag(v string) bool {
	switch v {
	case "-c", "-e", "--eval", "-p", "--print", "-E", "-r":
		return true
	}
	return false
}

// interpReadsStdin reports an interpreter reading its program from stdin.
func interpReadsStdin(args []walk.Word) bool {
	for _, a := range args {
		v := a.Value
		if v == "-" {
			return true
		}
		if isInterpCodeFlag(v) {
			return false
		}
		if v == "-m" {
			return false
		}
		if !strings.HasPrefix(v, "-") {
			return false
		}
	}
	return true
}

// hInterpreter: one-liners get the lexical scan; scripts and modules are
// code the guard cannot see, which the workspace sandbox contains.
func hInterpreter(cc *cmdCtx) {
	args := cc.args
	if cc.name == "deno" {
		if sub := firstOperand(cc); sub == "publish" || sub == "deploy" {
			cc.leaves("deno " + sub + " publishes or deploys beyond this machine")
			return
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if isInterpCodeFlag(v) && !(cc.name == "ruby" && v == "-r") && !(strings.HasPrefix(cc.name, "python") && v == "-e") {
			if i+1 >= len(args) {
				return
			}
			code := args[i+1]
			if code.Dynamic {
				if cc.templateCode(code) {
					return
				}
				if codeTemplate(code) {
					scanInterp(cc, code.Value) // what it says as written still counts
				}
				cc.say(warden.Sandbox, "shell.interp.dynamic", cc.name+" runs code only known at run time; it runs in the sandbox")
				return
			}
			scanInterp(cc, code.Value)
			return
		}
		if strings.HasPrefix(v, "-e") && len(v) > 2 && (cc.name == "perl" || cc.name == "ruby") {
			scanInterp(cc, v[2:])
			return
		}
		if strings.HasPrefix(v, "-") && len(v) > 2 && strings.HasSuffix(v, "e") && (cc.name == "perl" || cc.name == "ruby") && i+1 < len(args) {
			scanInterp(cc, args[i+1].Value)
			return
		}
		if v == "-m" && i+1 < len(args) {
			switch args[i+1].Value {
			case "pytest", "unittest", "venv", "json.tool", "py_compile", "compileall", "doctest", "timeit", "pydoc", "mypy", "black", "ruff", "flake8", "pylint", "isort", "coverage", "tox", "build", "pip":
				if args[i+1].Value == "pip" {
					inner := &cmdCtx{c: cc.c, cmd: cc.cmd, name: "pip", args: args[i+2:], z: cc.z}
					hPip(inner)
					cc.out = append(cc.out, inner.out...)
					cc.args = args[i+2:] // its URLs are judged by the scan
					return
				}
				taskRunner(cc)
				return
			case "http.server":
				return
			}
			cc.unseen("shell.interp.module", fmt.Sprintf("%s -m %s runs a module the guard cannot see", cc.name, args[i+1].Value))
			return
		}
		if v == "--version" || v == "-V" || v == "--help" || v == "-h" || v == "-v" && cc.name == "node" {
			return
		}
		if (cc.name == "node" || cc.name == "nodejs") && (v == "--test" || v == "--run") {
			taskRunner(cc) // the project's tests, or a package.json script
			return
		}
		if v == "-" {
			break
		}
		if strings.HasPrefix(v, "-") {
			if (v == "-r" || v == "-I" || v == "-W" || v == "-X") && i+1 < len(args) && cc.name != "php" {
				i++
			}
			continue
		}
		// A script file.
		cc.unseen("shell.interp.script", fmt.Sprintf("%s runs %s, code the guard cannot see", cc.name, v))
		return
	}
	if cc.cmd.StdinKnown {
		scanInterp(cc, cc.cmd.Stdin)
		return
	}
	for _, r := range cc.cmd.Redirects {
		if r.IsBody {
			if r.BodyDynamic {
				cc.say(warden.Sandbox, "shell.interp.dynamic", cc.name+" runs a script only known at run time; it runs in the sandbox")
				return
			}
			scanInterp(cc, r.Body)
			return
		}
	}
	if cc.cmd.PipePos > 0 && cc.c.netPipedInto(cc.cmd) {
		return // code from the network: the dataflow's rule decides
	}
	if cc.cmd.PipePos > 0 || redirectedStdin(cc.cmd) {
		cc.say(warden.Sandbox, "shell.interp.stdin", cc.name+" runs a program read from stdin; it runs in the sandbox").destructive = true
		return
	}
	cc.say(warden.Ask, "shell.interp.repl", cc.name+" with no program starts an interactive interpreter")
}

// shellOutAPIs call a shell or run a program with their string argument.
var shellOutAPIs = []string{"os.system(", "os.popen(", "subprocess.run(", "subprocess.call(", "subprocess.check_call(",
	"subprocess.check_output(", "subprocess.Popen(", "subprocess.getoutput(", "subprocess.getstatusoutput(",
	"execSync(", "exec(", "spawnSync(", "spawn(", "execFileSync(", "execFile(", "system(", "os.execute(", "io.popen(",
	"shell_exec(", "passthru(", "popen(", "Runtime.getRuntime().exec(", "do shell script ", "IO.popen(", "Open3.",
	"os.execv(", "os.execve(", "os.execvp(", "os.execvpe(", "os.execl(", "os.execle(", "os.execlp(", "os.execlpe(",
	"os.spawnv(", "os.spawnve(", "os.spawnvp(", "os.spawnvpe(", "os.spawnl(", "os.spawnle(", "os.spawnlp(", "os.spawnlpe(",
	"os.posix_spawn(", "os.posix_spawnp(", "create_subprocess_exec(", "create_subprocess_shell("}

// notThatCall reports whether the match of a bare shell-out API (system(,
// exec(, spawn(…: one with no module in its name) at code[i] is another
// function: the end of a longer name (filesystem(, myexec()), or Python's
// platform.system(), which names the OS. That call is trusted only where
// every other use of the name platform is an import of it or a call of one
// of its functions: code that binds the name to another module or changes
// what it holds (import os as platform, platform = os, platform.system =
// os.system, setattr(platform, …), sys.modules["platform"]) may make it a
// shell-out.
func notThatCall(code string, i int, api string) bool {
	if i == 0 || strings.Contains(api, ".") || !isNameByte(api[0]) {
		return false
	}
	if isNameByte(code[i-1]) {
		return true
	}
	const mod = "platform"
	if api != "system(" || !strings.HasSuffix(code[:i], mod+".") {
		return false
	}
	if k := i - 1 - len(mod); k > 0 && (isNameByte(code[k-1]) || code[k-1] == '.') {
		return false
	}
	return onlyImportedAndCalled(code, mod)
}

// onlyImportedAndCalled reports whether every use of the name mod in
// Python code is in an import statement that binds it as itself (import
// sys, mod) or a call of one of its public functions (mod.name(…)).
func onlyImportedAndCalled(code, mod string) bool {
	for off := 0; ; {
		j := strings.Index(code[off:], mod)
		if j < 0 {
			return true
		}
		j += off
		end := j + len(mod)
		off = end
		if j > 0 && isNameByte(code[j-1]) || end < len(code) && isNameByte(code[end]) {
			continue // part of a longer name
		}
		if j > 0 && code[j-1] == '.' {
			continue // an attribute of something else (sys.platform)
		}
		if rest, ok := strings.CutPrefix(code[end:], "."); ok {
			n := 0
			for n < len(rest) && isNameByte(rest[n]) {
				n++
			}
			if n > 0 && rest[0] != '_' && n < len(rest) && rest[n] == '(' {
				continue // platform.machine()
			}
			return false
		}
		// An import statement: "import" and names since the line or
		// statement began, and nothing that renames it after.
		stmt := code[strings.LastIndexAny(code[:j], "\n;")+1 : j]
		names, ok := strings.CutPrefix(strings.TrimLeft(stmt, " \t"), "import ")
		if names = strings.TrimRight(names, " \t"); !ok || names != "" && !strings.HasSuffix(names, ",") {
			return false
		}
		for _, n := range strings.Split(strings.TrimSuffix(names, ","), ",") {
			if n = strings.Trim(n, " \t"); names != "" && (n == "" || strings.Trim(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") != "") {
				return false // import os as x, platform
			}
		}
		if after := strings.TrimLeft(code[end:], " \t"); after != "" && after[0] != '\n' && after[0] != ';' && after[0] != ',' {
			return false // import platform as …, or anything else after it
		}
	}
}

// deleteAPIs delete files; recursive ones delete trees.
var deleteAPIs = []struct {
	api string
	rec bool
}{{"shutil.rmtree(", true}, {"rmtree(", true}, {"rmSync(", false}, {"fs.rm(", false}, {"rmdirSync(", true},
	{"FileUtils.rm_rf(", true}, {"FileUtils.rm_r(", true}, {"FileUtils.remove_dir(", true}, {"FileUtils.rm(", false},
	{"os.remove(", false}, {"os.unlink(", false}, {"os.rmdir(", false}, {"unlinkSync(", false}, {"unlink(", false},
	{"File.delete(", false}, {"remove_tree(", true}, {"Deno.remove(", false}, {".unlink(", false}, {"os.removedirs(", true}}

// homeExprs are expressions for the home directory in interpreter code.
var homeExprs = []string{"expanduser('~')", "expanduser(\"~\")", "homedir()", "Dir.home", "Path.home()", "$ENV{HOME}", "os.environ['HOME']", "os.environ[\"HOME\"]", "getenv(\"HOME\")", "getenv('HOME')", "ENV['HOME']", "ENV[\"HOME\"]", "os.getenv('HOME')", "os.getenv(\"HOME\")", "process.env.HOME", "'~'", "\"~\"", "File.expand_path('~')"}

// riskyTokens mark code that does more than compute and print.
var riskyTokens = []string{"import", "require", "open(", "write", "unlink", "remove", "rmtree", "rename", "chmod", "chown",
	"socket", "urllib", "http", "fetch(", "request", "eval", "exec", "system", "spawn", "popen", "fork", "`", "%x",
	"File", "Dir", "IO.", "fs.", "os.", "sys.", "subprocess", "ctypes", "pty", "shutil", "pathlib", "__", "Deno.", "Bun.",
	"process.env", "process.exit", "child_process", "net.", "LWP", "Net::", "unlink", "<STDIN>", "kill", "getattr", "globals"}

// safeImports are Python modules that only compute.
var safeImports = setOf("sys", "json", "math", "re", "datetime", "time", "random", "string", "collections", "itertools", "functools", "decimal", "fractions", "statistics", "textwrap", "uuid", "hashlib", "base64", "platform", "struct", "enum", "typing", "dataclasses", "pprint", "calendar", "zlib", "binascii", "secrets", "operator", "heapq", "bisect", "copy", "unicodedata", "locale", "numbers", "cmath", "array")

// scanInterp is the lexical scan of interpreter code (design note §5.4).
// Code that is obfuscated, runs computed code or opens raw sockets goes to
// the guard sandbox; other code that does more than compute and print is
// code the guard cannot fully see, which the workspace sandbox contains.
// The URLs it names are judged by the network policy.
func scanInterp(cc *cmdCtx, code string) {
	if len(code) > 64<<10 {
		cc.say(warden.Sandbox, "shell.interp.large", cc.name+" runs a large program; it runs in the guard sandbox")
		return
	}
	if !interpTrivial(code) {
		for _, u := range findURLs(code, maxURLsPerWord) {
			cc.judgeURL(u, "")
		}
	}
	// Resource exhaustion.
	if strings.Contains(code, "fork") && (strings.Contains(code, "while") || strings.Contains(code, "for") || strings.Contains(code, "loop")) {
		cc.say(warden.Deny, "shell.fork_bomb", cc.name+" code forks in a loop, which exhausts the process table").destructive = true
		return
	}
	decided := false
	// Shell-outs with literal strings.
	for _, api := range shellOutAPIs {
		for off := 0; ; {
			i := strings.Index(code[off:], api)
			if i < 0 {
				break
			}
			i += off
			off = i + len(api)
			if notThatCall(code, i, api) {
				continue
			}
			lit, ok := callCommand(code[i+len(api):], strings.Contains(api, "os.exec") || strings.Contains(api, "posix_spawn"))
			if !ok {
				// Code or a command built at run time: from the network,
				// standard input or decoded strings it is suspicious (the
				// guard sandbox); built from the program's own values and
				// files (a notebook's cells, [sys.executable, "-m", mod,
				// path]) it is code the guard cannot see, which the
				// workspace sandbox contains, as a script's.
				netCode := strings.Contains(code, "urlopen") || strings.Contains(code, "requests.") || strings.Contains(code, "fetch(") || strings.Contains(code, "http") || strings.Contains(code, "socket")
				switch {
				case api == "exec(" && netCode:
					cc.say(warden.Sandbox, "shell.interp.net_exec", cc.name+" executes code fetched from the network; it runs in the sandbox")
				case netCode || readsStdin(code) || suspiciousToken(code) != "":
					if api == "exec(" {
						cc.say(warden.Sandbox, "shell.interp.exec", cc.name+" executes code computed from its input, the network or decoded strings; it runs in the sandbox")
					} else {
						cc.say(warden.Sandbox, "shell.interp.shell_out", cc.name+" runs a command computed from its input, the network or decoded strings; it runs in the sandbox")
					}
				case !cc.saveProject():
					// Nothing saves what it may delete: the guard sandbox.
					if api == "exec(" {
						cc.say(warden.Sandbox, "shell.interp.exec", cc.name+" executes computed code; it runs in the sandbox")
					} else {
						cc.say(warden.Sandbox, "shell.interp.shell_out", cc.name+" runs a command built at run time; it runs in the sandbox")
					}
				case api == "exec(":
					cc.unseen("shell.interp.exec", cc.name+" executes code it builds at run time (warden saves the project's work tree first)")
				default:
					cc.unseen("shell.interp.shell_out", cc.name+" runs a command it builds at run time (warden saves the project's work tree first)")
				}
				decided = true
				continue
			}
			cc.subShell(lit)
			decided = true
		}
	}
	// Backticks and %x{} (ruby, perl).
	if cc.name == "ruby" || cc.name == "perl" || cc.name == "php" {
		if i := strings.IndexByte(code, '`'); i >= 0 {
			if j := strings.IndexByte(code[i+1:], '`'); j >= 0 {
				cc.subShell(code[i+1 : i+1+j])
				decided = true
			}
		}
		if i := strings.Index(code, "%x{"); i >= 0 {
			if j := strings.IndexByte(code[i+3:], '}'); j >= 0 {
				cc.subShell(code[i+3 : i+3+j])
				decided = true
			}
		}
	}
	// Destructive file APIs.
	for _, d := range deleteAPIs {
		i := strings.Index(code, d.api)
		if i < 0 {
			continue
		}
		decided = true
		arg := code[i+len(d.api):]
		rec := d.rec || strings.Contains(arg, "recursive") || strings.Contains(arg, "rf")
		e := EffDelete
		if rec {
			e = EffDeleteRec
		}
		home := false
		for _, h := range homeExprs {
			if strings.Contains(code, h) {
				home = true
			}
		}
		if lit, ok := firstStringLiteral(arg); ok && !strings.HasPrefix(strings.TrimSpace(arg), "os.path.expanduser") {
			cc.effect(e, walk.Word{Value: lit})
			continue
		}
		if home {
			cc.say(warden.Deny, "shell.interp.delete_home", cc.name+" code deletes in your home directory").destructive = true
			continue
		}
		// Where it can only delete what the workspace sandbox lets it
		// write, and the project's work tree is saved first (as for rm -rf
		// of a project folder), it runs there: a temporary directory
		// cleaned up, the project's *.tmp removed.
		if cc.saveProject() {
			cc.say(warden.Allow, "shell.interp.delete_saved", cc.name+" code deletes files at paths known only at run time; it runs in the workspace sandbox, which lets it delete only in the project, the session's /tmp and the tool caches, and warden saves the project's work tree first (`warden undo` brings it back, but for ignored files)")
			continue
		}
		cc.say(warden.Sandbox, "shell.interp.delete", cc.name+" code deletes files; it runs in the sandbox")
	}
	if decided {
		return
	}
	if interpTrivial(code) {
		return
	}
	if tok := suspiciousToken(code); tok != "" {
		cc.say(warden.Sandbox, "shell.interp.obfuscated", fmt.Sprintf("%s code uses %s, the shape of obfuscated code or a raw channel; it runs in the guard sandbox", cc.name, tok))
		return
	}
	cc.unseen("shell.interp.opaque", cc.name+" code does more than compute and print")
}

// suspiciousTokens mark interpreter code that hides what it runs (decoded
// strings, names looked up at run time, character arithmetic) or opens a
// channel around the egress proxy (raw sockets, pseudo-terminals). A token
// ending in "(" is a bare call: it does not match a method of the same name
// (re.compile, struct.pack).
var suspiciousTokens = []string{"getattr(", "__import__", "__builtins__", "globals()", "locals()",
	"b64decode", "a85decode", "b32decode", "b16decode", "unhexlify", ".fromhex", "codecs.decode", "rot13", "rot_13",
	"marshal.", "pickle.loads", "fromCharCode", "atob(", "new Function", "vm.run", "decode_base64",
	"MIME::Base64", "unpack(", "pack(", "Base64.decode", `\x`, "pty.", "dup2", "chr("}

// templateCode judges interpreter code written in the line with values
// only known at run time put in it (python3 -c "… >= $n …"), and reports
// whether it did: the code as written is scanned as code is, and where the
// line fetches nothing and decodes nothing (what would make the values a
// hidden payload), it runs in the workspace sandbox, the project saved
// first. Code that is mostly values (python3 -c "$CODE") is not a
// template.
func (cc *cmdCtx) templateCode(code walk.Word) bool {
	if !codeTemplate(code) || cc.cmd.Privileged {
		return false
	}
	if cc.c.decoderIn(nil) || cc.c.netWithin(walk.Span{Start: 0, End: len(cc.c.src)}) || !cc.saveProject() {
		return false
	}
	scanInterp(cc, code.Value)
	cc.say(warden.Allow, "shell.interp.dynamic_saved", cc.name+" runs code written in the line with values only known at run time; it runs in the workspace sandbox, and warden saves the project's work tree first (`warden undo` brings it back, but for ignored files)")
	return true
}

// codeTemplate reports whether interpreter code only known at run time is
// mostly code written in the line: one word, at least 16 bytes of it known.
func codeTemplate(code walk.Word) bool {
	return len(strings.TrimSpace(code.Value)) >= 16 && !code.Splits
}

// saveProject records that warden saves the project's work tree before
// the line runs (Result.Snapshot), where the line runs in the workspace
// sandbox through warden exec from the project of a git work tree, and
// reports whether it does: code whose deletes or commands are only known
// at run time can then lose nothing there that warden undo cannot bring
// back (but ignored files).
func (cc *cmdCtx) saveProject() bool {
	tree := cc.z.ws
	if tree == "" || !cc.c.env.Snapshots || !cc.c.env.GitWorkTree || !cc.c.p.SandboxAvailable || !cc.c.p.AllowTaskRunners || cc.c.depth != 0 || !cc.z.isProject() || cc.cmd.Privileged {
		return false
	}
	cc.c.res.Snapshot = compactTrees(append(cc.c.res.Snapshot, tree))
	return true
}

// readsStdin reports whether interpreter code reads its standard input,
// which a pipe fills with whatever an earlier command fetched.
func readsStdin(code string) bool {
	for _, t := range []string{"stdin", "STDIN", "input(", "$<", "gets", "readline(", "<>"} {
		if strings.Contains(code, t) {
			return true
		}
	}
	return false
}

// suspiciousToken returns the first suspicious token in code, or "".
func suspiciousToken(code string) string {
	for _, t := range suspiciousTokens {
		if !strings.HasSuffix(t, "(") {
			if strings.Contains(code, t) {
				return t
			}
			continue
		}
		for off := 0; ; {
			i := strings.Index(code[off:], t)
			if i < 0 {
				break
			}
			i += off
			if i == 0 || !isNameByte(code[i-1]) && code[i-1] != '.' {
				return strings.TrimSuffix(t, "(")
			}
			off = i + len(t)
		}
	}
	return ""
}

// subShell classifies a literal command string found in interpreter code.
func (cc *cmdCtx) subShell(src string) {
	r := classifyDepth(src, *cc.c.env, cc.c.p, cc.c.depth+1)
	cc.c.trace = append(cc.c.trace, "interpreter shell-out: "+src)
	cc.c.trace = append(cc.c.trace, r.Trace...)
	if r.Verdict == warden.Allow {
		// A shell-out of allowed commands still runs outside the guard's view
		// of the interpreter; keep it allowed.
		return
	}
	f := cc.say(r.Verdict, r.Rule, cc.name+" runs a shell command: "+r.Reason)
	f.destructive = r.Verdict == warden.Deny || r.Verdict == warden.Ask
}

// interpTrivial reports code that only computes and prints.
func interpTrivial(code string) bool {
	rest := code
	for {
		i := strings.Index(rest, "import ")
		if i < 0 {
			break
		}
		line := rest[i+len("import "):]
		if j := strings.IndexAny(line, ";\n"); j >= 0 {
			line = line[:j]
		}
		for _, m := range strings.Split(line, ",") {
			m = strings.TrimSpace(m)
			if k := strings.IndexByte(m, ' '); k >= 0 {
				m = m[:k]
			}
			if !safeImports.has(m) {
				return false
			}
		}
		rest = rest[i+len("import "):]
	}
	stripped := code
	for {
		i := strings.Index(stripped, "import ")
		if i < 0 {
			break
		}
		stripped = stripped[:i] + stripped[i+len("import "):]
	}
	for _, t := range riskyTokens {
		if t == "import" {
			continue
		}
		if strings.Contains(stripped, t) {
			if t == "sys." && !strings.Contains(stripped, "sys.modules") && !strings.Contains(stripped, "sys.stdin") {
				continue
			}
			return false
		}
	}
	return true
}

// firstStringLiteral returns the quoted string that is the whole first
// argument of the call s starts in (after its opening parenthesis),
// parentheses around it allowed: one with anything more in the argument
// (("build") + x, "rm " + path, "ls %s" % d, "{}".format(x)) is computed,
// and so is an f-string or a template with ${…}.
func firstStringLiteral(s string) (string, bool) {
	parts, ok := callParts(s)
	if !ok {
		return "", false
	}
	lit, rest, ok := stringLiteral(unparen(strings.TrimSpace(parts[0])))
	if !ok || strings.TrimSpace(rest) != "" {
		return "", false
	}
	return lit, true
}

// stringLiteral reads the quoted string at the start of s and returns it
// and what follows; false for anything else, an f-string, or a template
// literal with a substitution.
func stringLiteral(s string) (lit, rest string, ok bool) {
	if s == "" {
		return "", "", false
	}
	q := s[0]
	if q != '"' && q != '\'' && q != '`' {
		return "", "", false // an f-string (f"…") is computed too
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case ch == q:
			out := b.String()
			if q == '`' && strings.Contains(out, "${") {
				return "", "", false
			}
			return out, s[i+1:], true
		default:
			b.WriteByte(ch)
		}
	}
	return "", "", false
}

// runtimeWord stands for an argument only known at run time in the shell
// text of a call's command: a variable no line sets, so the walker reads
// the word as dynamic.
const runtimeWord = `"${__warden_runtime_arg}"`

// interpreterSelf are the names for the running interpreter, which a
// call's argv may start with (subprocess.run([sys.executable, "-m", …])).
var interpreterSelf = map[string]string{"sys.executable": "python3", "process.execPath": "node", "process.argv[0]": "node", "$^X": "perl", "RbConfig.ruby": "ruby"}

// callCommand is the shell text of the command a shell-out call runs (s
// starts after the call's name and its opening parenthesis), and whether
// it is known. Its first argument, whole, is a string literal (a shell
// line) or a list whose first element is a literal or the interpreter
// itself and whose other elements are literals or, when computed, words
// known only at run time; a literal program may be followed by a list of
// its arguments (Node's spawn("git", ["push"])) or a computed one
// (execFile("git", args), execlp). Anything else is computed: an
// operator or a call after a literal or list ("" + cmd, ['true'] and
// [...], [...][0]), and an argument that changes which program runs or
// where (executable=, cwd=, env=, Node's {shell: …, cwd: …, argv0: …}).
//
// With argv0, the arguments after the program start with the name the
// program is given (os.execvp("git", ["git", "push"]), os.execl), which is
// not an argument.
func callCommand(s string, argv0 bool) (string, bool) {
	parts, ok := callParts(s)
	if !ok {
		return "", false
	}
	for _, a := range parts[1:] {
		if changesProgram(a) {
			return "", false
		}
	}
	first := unparen(strings.TrimSpace(parts[0]))
	if strings.HasPrefix(first, "[") {
		words, ok := listWords(first, true)
		if !ok {
			return "", false
		}
		return strings.Join(words, " "), true
	}
	lit, rest, ok := stringLiteral(first)
	if !ok || strings.TrimSpace(rest) != "" {
		return "", false
	}
	if len(parts) == 1 {
		return lit, true
	}
	// A program and then its arguments, or a keyword (shell=True) or
	// options ({stdio: …}).
	next := unparen(strings.TrimSpace(parts[1]))
	switch {
	case strings.HasPrefix(next, "["):
		words, ok := listWords(next, false)
		if !ok {
			return "", false
		}
		if argv0 && len(words) > 0 {
			words = words[1:]
		}
		return strings.Join(append([]string{shellQuote(lit)}, words...), " "), true
	case next == "" || strings.HasPrefix(next, "{") || keywordArg(next):
		return lit, true
	}
	words := []string{shellQuote(lit)}
	after := parts[1:]
	if argv0 {
		after = after[1:]
	}
	for _, a := range after {
		a = strings.TrimSpace(a)
		if keywordArg(a) || strings.HasPrefix(a, "{") {
			break
		}
		if l, r, ok := stringLiteral(a); ok && strings.TrimSpace(r) == "" {
			words = append(words, shellQuote(l))
		} else {
			words = append(words, runtimeWord)
		}
	}
	return strings.Join(words, " "), true
}

// callParts are the top-level arguments of the call whose argument list s
// opens, split at its commas; false when s opens none, or it is empty.
func callParts(s string) ([]string, bool) {
	args, ok := callArgs(s)
	if !ok {
		return nil, false
	}
	parts := topLevel(args, ',')
	return parts, len(parts) > 0
}

// callArgs returns the text of a call's arguments: s up to the
// parenthesis that closes the call (s starts inside it), quotes and
// brackets respected; false when it does not close.
func callArgs(s string) (string, bool) {
	depth := 1
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\'', '`':
			j := closingQuote(s, i)
			if j < 0 {
				return "", false
			}
			i = j
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth--; depth == 0 {
				return s[:i], c == ')'
			}
		}
	}
	return "", false
}

// closingQuote returns the index of the quote that closes the one at
// s[i], -1 when none does.
func closingQuote(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case q:
			return j
		}
	}
	return -1
}

// topLevel splits s at each sep outside quotes and brackets.
func topLevel(s string, sep byte) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\'' || c == '`':
			if j := closingQuote(s, i); j >= 0 {
				i = j
			} else {
				i = len(s)
			}
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case c == sep && depth == 0:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	if strings.TrimSpace(s[start:]) != "" || len(parts) > 0 {
		parts = append(parts, s[start:])
	}
	return parts
}

// unparen strips the parentheses that wrap s whole: ((x)) is x, (a) + (b)
// stays.
func unparen(s string) string {
	for strings.HasPrefix(s, "(") && closing(s, 0) == len(s)-1 {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	return s
}

// closing returns the index of the bracket that closes the one at s[i]
// (any of ( [ {, nested, quotes respected), -1 when none does.
func closing(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch c := s[j]; c {
		case '"', '\'', '`':
			k := closingQuote(s, j)
			if k < 0 {
				return -1
			}
			j = k
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth--; depth == 0 {
				return j
			}
		}
	}
	return -1
}

// changesProgram reports whether a call's argument changes which program
// runs or where it runs, so that the command's text says neither:
// Python's executable=, cwd=, env=, and options naming a shell, a
// directory, an environment or an argv[0] (Node's {shell: …}).
func changesProgram(arg string) bool {
	a := strings.TrimSpace(arg)
	if keywordArg(a) {
		name, _, _ := strings.Cut(a, "=")
		switch strings.TrimSpace(name) {
		case "executable", "cwd", "env", "args", "preexec_fn", "user", "group", "process_group":
			return true
		}
		return false
	}
	if strings.HasPrefix(a, "{") {
		for _, k := range []string{"shell", "cwd", "env", "argv0", "uid", "gid"} {
			if strings.Contains(a, k+":") || strings.Contains(a, k+" :") || strings.Contains(a, "\""+k+"\"") || strings.Contains(a, "'"+k+"'") {
				return true
			}
		}
	}
	return false
}

// keywordArg reports whether s starts with a keyword argument (shell=True,
// check = False).
func keywordArg(s string) bool {
	i := 0
	for i < len(s) && (s[i] == '_' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || i > 0 && s[i] >= '0' && s[i] <= '9') {
		i++
	}
	rest := strings.TrimLeft(s[i:], " \t")
	return i > 0 && strings.HasPrefix(rest, "=") && !strings.HasPrefix(rest, "==")
}

// listWords reads a list literal, whole ([…], nothing after its closing
// bracket), as shell words: literals quoted, the interpreter itself by
// name (first only), anything else a word only known at run time. With
// program, the first element must be a literal or the interpreter.
func listWords(list string, program bool) ([]string, bool) {
	if closing(list, 0) != len(list)-1 {
		return nil, false // something follows the list: [a][0], [a] + b
	}
	inner := list[1 : len(list)-1]
	var words []string
	for n, e := range topLevel(inner, ',') {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if lit, rest, ok := stringLiteral(e); ok && strings.TrimSpace(rest) == "" {
			words = append(words, shellQuote(lit))
			continue
		}
		switch {
		case n == 0 && interpreterSelf[e] != "":
			words = append(words, interpreterSelf[e])
		case n == 0 && program:
			return nil, false // the program itself is computed
		default:
			words = append(words, runtimeWord)
		}
	}
	if program && len(words) == 0 {
		return nil, false
	}
	return words, true
}
