package cli

import (
	"errors"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden"
)

// Exit statuses. A decision is not an error: `warden check` exits 0 when it
// decided, and with --exit-code encodes the verdict. Every error exits 1 and
// prints nothing on stdout that could be read as a decision.
const (
	exitOK      = 0
	exitError   = 1
	exitDeny    = 2
	exitAsk     = 3
	exitSandbox = 4
	// exitInjection is `warden scan` flagging its input as an injection.
	exitInjection = 3
	exitBroken    = 2 // audit verify: the chain is broken
	// exitUnknownCommand is a command line naming no command warden has (a
	// mistyped one), as shells and most tools report a misused command.
	exitUnknownCommand = 2
	// exitHookBlocked is any failure of `warden hook`: every host treats exit 2
	// as "block this tool call", while some let a call through on exit 1.
	exitHookBlocked = 2
)

// verdictStatus maps a verdict to its --exit-code status.
func verdictStatus(v warden.Verdict) int {
	switch v {
	case warden.Allow:
		return exitOK
	case warden.Ask:
		return exitAsk
	case warden.Sandbox:
		return exitSandbox
	default:
		return exitDeny
	}
}

// errorStatus annotates a command whose errors exit with a status of its
// own rather than exitError: a hook must exit 2 to block the host's call,
// and warden exec keeps 1 for the command it runs.
const errorStatus = "warden.error-status"

// exitStatusOf maps an error from command cmd to the process status.
func exitStatusOf(cmd *cobra.Command, err error) int {
	if cmd != nil {
		if s, ok := cmd.Annotations[errorStatus]; ok {
			if n, convErr := strconv.Atoi(s); convErr == nil {
				return n
			}
		}
	}
	return exitStatus(err)
}

// errorStatusIs annotates a command so that its errors exit with status.
func errorStatusIs(status int) map[string]string {
	return map[string]string{errorStatus: strconv.Itoa(status)}
}

// exitStatus maps an error to the process status.
func exitStatus(err error) int {
	if errors.Is(err, errVerifyFailed) {
		return exitBroken
	}
	if errors.Is(err, errUnknownCommand) {
		return exitUnknownCommand
	}
	return exitError
}
