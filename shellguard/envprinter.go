package shellguard

import (
	"slices"
	"sort"
	"strings"

	"github.com/agentwarden/warden/shellguard/walk"
)

// envPrinters are programs whose output is made for a shell to eval: the
// variables (and shell functions) of a tool's environment, which the
// program writes itself from its own settings, quoted. eval "$(go env)"
// and eval "$(pyenv init -)" are how people set their shell up. Each is
// the program and the words that make it print such code.
var envPrinters = map[string][][]string{
	"go":        {{"env"}},
	"pyenv":     {{"init", "-"}, {"init", "--path"}, {"virtualenv-init", "-"}},
	"rbenv":     {{"init", "-"}},
	"nodenv":    {{"init", "-"}},
	"goenv":     {{"init", "-"}},
	"ssh-agent": {{"-s"}, {"-c"}},
	"opam":      {{"env"}},
	"brew":      {{"shellenv"}},
	"conda":     {{"shell.bash", "hook"}},
	"fnm":       {{"env"}, {"env", "--shell", "bash"}},
	"mise":      {{"env"}, {"activate", "bash"}},
	"direnv":    {{"export", "bash"}},
	// Completions define a tool's shell functions, from its own code.
	"npm":     {{"completion"}},
	"kubectl": {{"completion", "bash"}},
	"helm":    {{"completion", "bash"}},
	"gh":      {{"completion", "-s", "bash"}},
}

// envFilters may follow an environment printer in the substitution: they
// only pick lines of its output (grep '^GOROOT='), so what is eval'd is
// still some of the code it printed.
var envFilters = []string{"grep", "head", "tail", "sort", "uniq"}

// envPrinted reports whether the code span holds is the output of an
// environment printer (envPrinters), whole or filtered (envFilters): one
// pipeline of commands substituted there ($(…), or <(…) for source), every
// word literal. Those
// commands are judged by their own rules; what they print sets variables
// of this shell, in the sandbox the line runs in.
func (c *ctx) envPrinted(span walk.Span) bool {
	var stages []*walk.Command
	for i := range c.walk.Commands {
		cmd := &c.walk.Commands[i]
		if cmd.Span.Start >= span.Start && cmd.Span.End <= span.End && (cmd.Via == "$()" || cmd.Via == "<()") {
			stages = append(stages, cmd)
		}
	}
	if len(stages) == 0 {
		return false
	}
	sort.Slice(stages, func(i, j int) bool { return stages[i].PipePos < stages[j].PipePos })
	for i, s := range stages {
		if s.Pipeline != stages[0].Pipeline || len(s.Argv) == 0 || len(s.Assigns) > 0 || len(s.Redirects) > 0 {
			return false
		}
		var words []string
		for _, w := range s.Argv {
			if w.Dynamic {
				return false
			}
			words = append(words, w.Value)
		}
		name := progName(words[0])
		if i > 0 {
			if !slices.Contains(envFilters, name) || !filtersStdinOnly(name, words[1:]) {
				return false
			}
			continue
		}
		forms, ok := envPrinters[name]
		if !ok || !slices.ContainsFunc(forms, func(form []string) bool {
			return len(words) == 1+len(form) && slices.Equal(words[1:], form)
		}) {
			return false
		}
	}
	return true
}

// filtersStdinOnly reports whether a filter with args reads only its
// standard input: no file operand (grep P FILE, sort FILE and tail - FILE
// would add a file's lines to what is sourced: red-team-21). grep takes one
// pattern operand, or none with -e; an option's value is not counted
// (head -n 3); a word after -- is an operand.
func filtersStdinOnly(name string, args []string) bool {
	operands := 0
	pattern := name != "grep"
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			operands += len(args) - i - 1
			i = len(args)
		case a == "-e" || a == "--regexp":
			pattern = true
			i++
		case strings.HasPrefix(a, "--regexp=") || strings.HasPrefix(a, "-e") && len(a) > 2:
			pattern = true
		case a == "-f" || strings.HasPrefix(a, "--file"):
			return false // patterns from a file: a file it reads
		case a == "-n" || a == "-c" || a == "-m" || a == "-k" || a == "-t" || a == "-A" || a == "-B" || a == "-C":
			i++ // the option's value
		case strings.HasPrefix(a, "-") && a != "-":
		default:
			operands++
		}
	}
	if name == "grep" && !pattern {
		operands-- // the pattern
	}
	return operands == 0
}
