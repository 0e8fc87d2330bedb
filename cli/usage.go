package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden"
)

// errUnknownCommand marks a command line naming a command warden does not
// have (a mistyped one); it exits with exitUnknownCommand.
var errUnknownCommand = errors.New("unknown command")

// strictCommands makes every command in the tree under root refuse a
// command line it cannot run, instead of printing help and exiting 0:
//
//   - a command with subcommands (a group) refuses an argument that names
//     none of them, as an unknown command with the nearest names (`warden
//     sandbox strat`: did you mean start?); without a run of its own it
//     prints its help when called alone;
//   - an argument count cobra's validators refuse is a usage error (the
//     user's mistake and a hint), never an "internal error".
func strictCommands(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		orig := c.Args
		if c.HasSubCommands() {
			c.Args = func(c *cobra.Command, args []string) error {
				if len(args) > 0 {
					return unknownCommand(c, args[0])
				}
				return usageArgs(orig)(c, args)
			}
			if c.Run == nil && c.RunE == nil {
				c.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
			}
		} else if orig != nil {
			c.Args = usageArgs(orig)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// usageArgs runs the positional-argument validator v (nil accepts
// anything) and turns a plain error from it into a usage error.
func usageArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if v == nil {
			return nil
		}
		err := v(c, args)
		var we *warden.Error
		if err == nil || errors.As(err, &we) {
			return err
		}
		msg := c.CommandPath() + ": " + err.Error()
		if strings.HasPrefix(err.Error(), "unknown command") {
			msg = fmt.Sprintf("%s takes no arguments, and got %q", c.CommandPath(), args[0])
		}
		return usageError(c, msg)
	}
}

// unknownCommand is the error for name, which is not a subcommand of c: it
// names the nearest subcommands (a prefix of name's, or the fewest edits
// away, at most two).
func unknownCommand(c *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, c.CommandPath())
	if s := nearest(c, name); len(s) > 0 {
		q := make([]string, len(s))
		for i, n := range s {
			q[i] = "`" + c.CommandPath() + " " + n + "`"
		}
		msg += "; did you mean " + strings.Join(q, " or ") + "?"
	}
	return warden.Errorf(warden.EInvalid, "%s", msg).Wrap(errUnknownCommand).
		WithHint("see `" + c.CommandPath() + " --help` for its commands")
}

// nearest returns the names of c's visible subcommands nearest to name.
func nearest(c *cobra.Command, name string) []string {
	const most = 2
	best, out := most+1, []string(nil)
	name = strings.ToLower(name)
	for _, sub := range c.Commands() {
		if !sub.IsAvailableCommand() {
			continue
		}
		for _, n := range append([]string{sub.Name()}, sub.Aliases...) {
			d := editDistance(name, strings.ToLower(n))
			if len(name) > 1 && strings.HasPrefix(n, name) {
				d = 0
			}
			switch {
			case d < best:
				best, out = d, []string{sub.Name()}
			case d == best && !slices.Contains(out, sub.Name()):
				out = append(out, sub.Name())
			}
		}
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
