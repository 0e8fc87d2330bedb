// Package walk turns a shell command line into the simple commands it would
// run: it parses with mvdan.cc/sh (bash dialect), visits every executed
// position, evaluates words statically, unwraps wrappers such as sudo, env and
// xargs, and recurses into code strings (bash -c, eval, find -exec…). It
// decides nothing: package shellguard classifies what Walk returns.
//
// What Walk cannot know it marks rather than guesses: a word with an unknown
// part is Dynamic, a code string it cannot read is an Issue. The zero Result
// (no commands, no issues) only comes from an empty input.
package walk

// Span is a byte range [Start, End) in the top-level input. Commands found
// inside code strings carry the span of the top-level word that held them.
type Span struct{ Start, End int }

// Word is one argument after static evaluation (quote removal, escapes,
// ANSI-C strings, brace expansion, tilde, ${IFS}, variables assigned earlier
// in the same input).
type Word struct {
	// Value is the evaluated text. For a Dynamic word it holds the parts that
	// are known, with each unknown part left out.
	Value string
	// Dynamic is set when any part of the value is unknown ($UNSET, $(…),
	// $((…)) with unknowns, an unknown variable split by IFS…).
	Dynamic bool
	// Prefix is the literal text before the first unknown part of a Dynamic
	// word (e.g. "/" for "/$X"; "" for "$X/"), so that callers can judge
	// what it could expand to.
	Prefix string
	// Glob is set when the word has unquoted *, ? or [ (no globbing is done).
	Glob   bool
	Quoted bool
	// Splits is set on a Dynamic word with an unknown part outside double
	// quotes: bash splits what it expands to, which may be several words.
	Splits bool
	// Shape is a Dynamic word's text with each unknown part written as
	// ${WARDEN_INPUT}, an unknown variable, so that code written around
	// values only known at run time can still be read.
	Shape string
	// Input is set on a Dynamic word that is exactly one item of the input
	// xargs or parallel reads from its stdin (their -I string standing
	// alone, or the argument they append), or find's {} standing alone:
	// the path the command is given is the one the producer printed.
	Input bool
	// Template is set on a word that is Dynamic only because it holds
	// find's {} or xargs -I's string: its text with each of them written
	// as ${WARDEN_INPUT}, an unknown variable, so that code in it
	// (xargs -I{} sh -c 'echo {} > {}.txt') can still be read.
	Template string
	// TempName is set on a Dynamic word whose every unknown part is the
	// name mktemp made in the temporary directory (d=$(mktemp -d); "$d",
	// "$d/x"): one path segment, never "." or "..". Shape then says
	// where: the temporary directory, the name, what follows.
	TempName bool
	// FedBy is set on a Dynamic word that is exactly one whole item a
	// process substitution printed, each item ending with NUL (mapfile -d
	// '' a < <(find … -print0); "${a[@]}"): the substitution's span. The
	// caller may judge it by what that producer prints.
	FedBy Span
	Span  Span
	// Raw is the word's text as written, for a word inside a code string
	// (bash -c, a heredoc a shell reads), whose Span is the top-level
	// word's that held the code; "" at the top level, where Span gives it.
	Raw string
}

// Redirect is one redirection of a command.
type Redirect struct {
	Op string // ">", ">>", "<", "<>", ">|", "&>", "&>>", ">&", "<&", "<<", "<<-", "<<<"
	Fd string // the explicit file descriptor ("2" in 2>file), or ""
	// Target is the file (or fd) for file redirections; for here-strings and
	// heredocs it is empty.
	Target Word
	// Body is the text of a heredoc or here-string, evaluated when the
	// delimiter is unquoted; BodyDynamic marks an unknown part.
	Body        string
	BodyDynamic bool
	IsBody      bool // this is a heredoc or here-string
}

// Command is one simple command that the input would (or may) run.
type Command struct {
	// Argv is the command after unwrapping wrappers; Argv[0] is the program.
	//
	// Argv is empty for a statement that runs no program: a bare
	// redirection ("> file", with the redirection in Redirects) or bare
	// assignments ("X=1", in Assigns). For [[ … ]], (( … )) and let, Argv
	// holds only the keyword ("[[", "((", "let"); the commands in their
	// expansions are reported on their own. A call to a function defined in
	// the input is not reported itself: its body's commands are, with Via
	// "function NAME" (a recursive call is reported as the call).
	Argv []Word
	// Assigns are the NAME=VALUE prefixes of the command (X=1 cmd), in order.
	Assigns []Assign
	// Wrappers names the wrappers unwrapped to reach Argv, outermost first
	// (e.g. "sudo", "env", "timeout").
	Wrappers []string
	// Privileged is set when a privilege wrapper (sudo, doas, su -c, pkexec,
	// runuser…) ran the command.
	Privileged bool
	// Remote is set when the command runs elsewhere (ssh host CMD, docker
	// exec/run, podman, kubectl exec).
	Remote bool
	// Depth is how many code strings deep the command was found (0: top level).
	Depth int
	// Via says how the command was reached beyond plain sequencing: "" at the
	// top level, else e.g. "bash -c", "eval", "$()", "<()", "find -exec",
	// "xargs", "heredoc", "base64|sh", "function f".
	//
	// The full set: "SHELL -c" (sh, bash…; also for xargs/find running a
	// shell), "eval", "source <()" / "SHELL <()", "$()", "<()", ">()",
	// "heredoc" (a heredoc or here-string read by a shell), "PRODUCER|SHELL"
	// for a literal pipe ("echo|sh", "printf|bash"), "DECODERS|SHELL" for a
	// decoded one ("base64|sh", "xxd|bash", "rev|sh", "base64|rev|sh"),
	// "function NAME", "find -exec" (-execdir, -ok, -okdir), "xargs",
	// "parallel", "git alias", "git core.sshcommand" (and the other git
	// settings that run a command, lower-cased), "tar --to-command",
	// "tar -I", "tar --use-compress-program", "tar --checkpoint-action=exec",
	// "sed e", "awk", "rg --pre", "trap", "alias NAME", and the name of a
	// wrapper that runs a code string ("ssh", "su", "runuser", "script",
	// "watch", "flock", "npx", "npm exec", "parallel", or a privilege
	// wrapper for "sudo -s CMD").
	Via string
	// Span locates the command (or the top-level word that held it).
	Span      Span
	Redirects []Redirect
	// Pipeline identifies the pipeline the command belongs to (unique within
	// one Walk); PipePos is its 0-based position and PipeLen the pipeline's
	// length (1 for a command that is not piped).
	Pipeline, PipePos, PipeLen int
	// Background is set for cmd & and coprocesses.
	Background bool
	// Conditional is set when the command may not run (after && or ||, in an
	// if/while/case branch, in a function body never called…).
	Conditional bool
	// Cwd is the directory the command runs in, as far as Walk knows: the
	// Options.Cwd changed by earlier cd/pushd in the same input. CwdDynamic is
	// set when a cd went somewhere unknown.
	Cwd        string
	CwdDynamic bool
	// CwdAlts are the other directories it may run in, each known, when an
	// earlier cd may not have run (mkdir -p d && cd d; then this command).
	CwdAlts []string
	// CwdVar is the variable an earlier cd went to (d, for cd "$d") when
	// that is why the directory is not known.
	CwdVar string
	// Stdin is literal text fed to the command (heredoc, here-string, or a
	// pipe from a literal producer such as echo/printf, after any literal
	// decoding), when known; StdinKnown says whether it is.
	Stdin      string
	StdinKnown bool
	// NulFed is set on a command xargs feeds items ending with NUL (-0,
	// --null): one a path, whatever bytes its name holds.
	NulFed bool
}

// Assign is one NAME=VALUE prefix.
type Assign struct {
	Name  string
	Value Word
	// elems are an array assignment's known elements (NAME=(…)), nil
	// when not known or not an array.
	elems []string
	// tempDir is the temporary directory when the value is only a name
	// mktemp makes there (NAME=$(mktemp -d)).
	tempDir string
	// tempElems is the temporary directory every element of an array
	// value is such a name in (NAME+=("$d")), or "".
	tempElems string
}

// IssueKind classifies what Walk could not do.
type IssueKind string

const (
	ParseError     IssueKind = "parse_error"     // bash would not run this either
	BudgetExceeded IssueKind = "budget_exceeded" // too deep, too large, too many nodes
	DynamicCode    IssueKind = "dynamic_code"    // a code string whose text is unknown (bash -c "$X")
	DynamicCommand IssueKind = "dynamic_command" // a program name that is unknown ($c args)
	// PlaceholderCode is a code string read with the input xargs or find
	// fills in (their {}) as an unknown variable: bash reads that input as
	// code too, so what it adds is code the guard cannot see.
	PlaceholderCode IssueKind = "placeholder_code"
	// ValueCode is a code string written in the line with values only
	// known at run time put in it (bash -c "…/$port"), read with each as
	// an unknown variable: bash reads those values as code too.
	ValueCode IssueKind = "value_code"
	Internal  IssueKind = "internal" // a recovered panic
)

// Issue is something Walk could not see through. Callers must not allow a
// command line with issues they do not understand.
type Issue struct {
	Kind    IssueKind
	Message string
	Span    Span
	// Raw is the text of the word the issue is about inside a code
	// string (Word.Raw), or "".
	Raw string
	// EnvAssigns marks a DynamicCommand issue about env's words known only
	// at run time before a plain program (env $(cat .env) ./app), taken
	// for assignments: only a word that is none would change the program.
	EnvAssigns bool
	// FileName is, for a DynamicCommand issue, the program's file name
	// when only its directory is unknown (Word.FileName), or "".
	FileName string
}

// Options are the facts Walk may assume. Zero values mean unknown.
type Options struct {
	Cwd string // working directory
	// Top is the top of the git work tree Cwd lies in, when the caller
	// knows it: what git rev-parse --show-toplevel prints from a
	// directory the walk knows is in it.
	Top  string
	Home string            // $HOME, for ~ and $HOME
	Tmp  string            // $TMPDIR
	Env  map[string]string // other variables known to the caller
	// Unset, when set, reports a name the environment the line runs with
	// does not set: ${NAME:-word} (and ${NAME-word}, :=, =, :+, +) of an
	// environment variable the line has not assigned then expands as
	// bash expands it for an unset name. Bash's own variables are not
	// asked about.
	Unset func(name string) bool
	// Budgets; zero means the default (depth 8, 64 KiB, 20,000 nodes).
	MaxDepth, MaxBytes, MaxNodes int
}

// Result is what Walk found.
type Result struct {
	Commands []Command
	Issues   []Issue
}
