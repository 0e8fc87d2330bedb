package shellguard

import (
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/shellguard/walk"
)

// wardenReadOnly lists the warden subcommands that only decide or read: an
// agent may run them. Everything else changes warden itself (its policy, its
// hooks, its emergency stop, its home) and is a human's job.
var wardenReadOnly = map[string]bool{
	"check": true, "audit": true, "hook": true, "help": true, "completion": true,
	// Turning the emergency stop on only takes power away from agents.
	"kill": true,
}

// wardenConfigReadOnly lists the `warden config` subcommands that only read.
var wardenConfigReadOnly = map[string]bool{"list": true, "get": true, "validate": true}

// hWarden keeps an agent from changing its own guard: `warden config set`,
// `unkill`, `install`, `uninstall`, `init` and any subcommand warden does not
// know to be read-only are denied; deciding and reading are allowed.
func hWarden(cc *cmdCtx) {
	sub, rest, dynamic := wardenSubcommand(cc.args)
	deny := func(what string) {
		cc.say(warden.Deny, "shell.self_protect",
			"an agent may not change its own guard ("+what+"); a human must run it").destructive = true
	}
	switch {
	case dynamic:
		deny("warden with a subcommand only known at run time")
	case sub == "" || sub == "--help" || sub == "-h":
	case sub == "config":
		if len(rest) == 0 || rest[0] == "--help" || rest[0] == "-h" {
			return
		}
		if rest[0] == "" || !wardenConfigReadOnly[rest[0]] {
			deny("warden config " + rest[0])
		}
	case !wardenReadOnly[sub]:
		deny("warden " + sub)
	}
}

// hWardenExec denies warden-exec: only warden's hooks write it, in front of
// the warden exec they contain a host's command in; an agent that runs it
// itself asks warden to run a command as the hook would have.
func hWardenExec(cc *cmdCtx) {
	cc.say(warden.Deny, "shell.self_protect",
		"an agent may not run warden-exec, which only warden's hooks write; run the command itself").destructive = true
}

// wardenSubcommand finds the subcommand after warden's global flags (--home
// DIR, --home=DIR) and returns the words after it. dynamic is set when a word
// it needs is not known statically.
func wardenSubcommand(args []walk.Word) (sub string, rest []string, dynamic bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.Dynamic {
			return "", nil, true
		}
		switch {
		case a.Value == "--home":
			i++ // its value
		case strings.HasPrefix(a.Value, "--home="):
		default:
			for _, r := range args[i+1:] {
				if r.Dynamic {
					return a.Value, nil, true
				}
				rest = append(rest, r.Value)
			}
			return a.Value, rest, false
		}
	}
	return "", nil, false
}
