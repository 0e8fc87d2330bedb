package shellguard

import (
	"strings"

	"github.com/agentwarden/warden/shellguard/walk"
)

// hEditor: an editor edits interactively, which an agent has no terminal
// for. Given commands to run (vim -c, +CMD, --cmd, -S FILE, -s SCRIPTIN,
// or ex mode, which reads them from its input; emacs --batch, --eval, -l,
// -f) it runs code the guard cannot see, as a script does: editor
// commands, which may write any file or start a shell. That code runs in
// the workspace sandbox (cc.unseen; with no sandbox it asks), and the
// files the editor is named to edit, or to record keys in (-w), are judged
// as written, as a redirection's target is.
func hEditor(cc *cmdCtx) {
	var commands bool
	var writes []walk.Word
	switch cc.name {
	case "vim", "vi", "nvim", "ex", "view", "vimdiff":
		commands, writes = vimArgs(cc.name, cc.args)
	case "emacs":
		commands, writes = emacsArgs(cc.args)
	default:
		// nano, code, open and xdg-open take no commands; a word that
		// looks like one is left to the sandbox all the same.
		for _, a := range cc.args {
			if strings.HasPrefix(a.Value, "-c") || strings.HasPrefix(a.Value, "+") || a.Value == "--cmd" || a.Value == "--eval" || a.Value == "-S" {
				commands = true
			}
		}
	}
	if !commands {
		return
	}
	for _, w := range writes {
		cc.effect(EffWrite, w)
	}
	cc.unseen("shell.editor_command", cc.name+" is given commands to run, which the guard cannot see")
}

// vimValued are the options of vim (vi, nvim, ex) that take the next word
// as their value, when it is not attached ("-cwq"); -s does only outside
// ex mode, where it is a script of keys to type rather than silence.
var vimValued = setOf("-c", "-S", "--cmd", "-s", "-w", "-W", "-u", "-U", "-i", "-T", "-t", "-q", "--startuptime", "--servername", "--log", "--listen")

// vimArgs reads vim's arguments (name is how it was started): whether it
// is given commands to run, and the files it would write: the files it
// edits and -w's or -W's record of the keys typed. A word only known at
// run time may be an option that gives commands.
func vimArgs(name string, args []walk.Word) (commands bool, writes []walk.Word) {
	exMode := name == "ex"
	for _, a := range args {
		switch a.Value {
		case "-e", "-E", "-es", "-Es":
			exMode = true
		}
	}
	commands = exMode
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.Value
		switch {
		case a.Dynamic && (a.Prefix == "" || strings.HasPrefix(a.Prefix, "-") || strings.HasPrefix(a.Prefix, "+")):
			commands = true
			writes = append(writes, a)
		case v == "--":
			writes = append(writes, args[i+1:]...)
			return commands, writes
		case strings.HasPrefix(v, "+"):
			commands = true
		case v == "-s" && exMode:
			// silent
		case vimValued.has(v) || len(v) > 2 && v[0] == '-' && v[1] != '-' && vimValued.has(v[:2]):
			opt, val := v[:2], walk.Word{}
			if vimValued.has(v) {
				opt = v
				if i+1 < len(args) {
					i++
					val = args[i]
				}
			} else {
				val = walk.Word{Value: v[2:], Dynamic: a.Dynamic}
			}
			switch opt {
			case "-c", "--cmd", "-S", "-s":
				commands = true
			case "-w", "-W":
				writes = append(writes, val)
			}
		case strings.HasPrefix(v, "-"):
			// a flag (-n, -R, -es, --clean, -o2…)
		default:
			writes = append(writes, a)
		}
	}
	return commands, writes
}

// emacsCode are the options that make emacs run Lisp code (evaluated,
// loaded or called) or run in batch mode, where what its other arguments
// do is code; emacsValued the options that take the next word as their
// value.
var (
	emacsCode   = setOf("--batch", "-batch", "--eval", "-eval", "--execute", "-execute", "-l", "--load", "-load", "-f", "--funcall", "-funcall", "--script", "-script", "-x", "--insert", "-insert")
	emacsValued = setOf("--eval", "-eval", "--execute", "-execute", "-l", "--load", "-load", "-f", "--funcall", "-funcall", "--script", "-script", "-L", "--directory", "--chdir", "-t", "--terminal", "-d", "--display", "-u", "--user", "--init-directory", "--insert", "-insert", "--dump-file")
)

// emacsArgs reads emacs's arguments: whether it is given code to run, and
// the files it visits, which that code may write. +LINE is a position.
func emacsArgs(args []walk.Word) (commands bool, writes []walk.Word) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, attached := strings.Cut(a.Value, "=")
		switch {
		case a.Dynamic && (a.Prefix == "" || strings.HasPrefix(a.Prefix, "-")):
			commands = true
			writes = append(writes, a)
		case a.Value == "--":
			writes = append(writes, args[i+1:]...)
			return commands, writes
		case strings.HasPrefix(a.Value, "-"):
			commands = commands || emacsCode.has(name)
			if emacsValued.has(name) && !attached {
				i++
			}
		case strings.HasPrefix(a.Value, "+"):
		default:
			writes = append(writes, a)
		}
	}
	return commands, writes
}
