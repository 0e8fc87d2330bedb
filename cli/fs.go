package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/fstools"
)

// fsFlags are the flags every `warden fs` verb shares.
type fsFlags struct {
	root   string
	req    warden.Request
	noWait bool
}

func fsCmd(e *env) *cobra.Command {
	var f fsFlags
	c := &cobra.Command{
		Use:   "fs VERB PATH…",
		Short: "File tools for agents that cannot leave their root",
		Long: `File tools for agents, rooted at the workspace (or --root). Every call is
decided by the gate and audited (path, action, bytes, outcome; never contents)
before it touches anything, and opens files so that a symlink or directory
swapped in between cannot lead outside the root. Writes are atomic.

When the policy asks a human, the call opens an approval, says on stderr
where to answer it, and waits for the answer (until the approval expires);
with --no-wait it exits 3 at once instead. A call the policy does not allow
exits 2 (denied, or the approval was denied or expired), with the reason on
stderr; any other error exits 1.`,
		Example: `  warden fs read notes.txt
  echo hello | warden fs write notes.txt
  warden fs list .
  git diff | warden fs patch src/main.go
  warden fs search 'TODO' src`,
	}
	pf := c.PersistentFlags()
	pf.StringVar(&f.root, "root", "", "directory the tools work in (default: the policy's workspace)")
	pf.StringVar(&f.req.Session, "session", "", "session id")
	pf.StringVar(&f.req.RequestedBy, "requested-by", "", "who asks: agent, skill:NAME, cron:JOB")
	pf.BoolVar(&f.req.Autonomous, "autonomous", false, "no human is in the loop this turn")
	pf.StringVar(&f.req.Context, "context", "", "why the agent wants this")
	pf.BoolVar(&f.noWait, "no-wait", false, "when a human must approve, exit 3 at once instead of waiting for the answer")

	data := func(t *app.FileTools) ([]byte, error) {
		limit := t.Limits().MaxWrite
		b, err := io.ReadAll(io.LimitReader(e.stdin, limit+1))
		if err != nil {
			return nil, warden.Errorf(warden.EInvalid, "read the contents from stdin").Wrap(err)
		}
		if int64(len(b)) > limit {
			return nil, warden.Errorf(warden.EInvalid, "the contents on stdin are larger than the write limit of %d bytes", limit).
				WithHint("write smaller files, or split the write into appends")
		}
		return b, nil
	}
	verb := func(use, short string, args cobra.PositionalArgs, run func(ctx context.Context, t *app.FileTools, args []string) error) *cobra.Command {
		return &cobra.Command{Use: use, Short: short, Args: args, RunE: func(c *cobra.Command, args []string) error {
			a, err := e.open(c.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			t, err := a.FileTools(f.root, f.req)
			if err != nil {
				return err
			}
			defer t.Close()
			if !f.noWait {
				t.Wait = e.askWait("fs")
			}
			err = run(c.Context(), t, args)
			var refused *app.Refused
			if errors.As(err, &refused) {
				fmt.Fprintf(e.stderr, "warden: %s\n", refused.Error())
				e.status = verdictStatus(refused.Decision.Verdict)
				return nil
			}
			return err
		}}
	}
	one := rangeArgs(1, 1, "PATH")
	c.AddCommand(
		verb("read PATH", "Print a file", one, func(ctx context.Context, t *app.FileTools, args []string) error {
			b, err := t.Read(ctx, args[0])
			if err == nil {
				_, err = e.stdout.Write(b)
			}
			return err
		}),
		verb("write PATH", "Replace a file with stdin, atomically", one, func(ctx context.Context, t *app.FileTools, args []string) error {
			b, err := data(t)
			if err != nil {
				return err
			}
			return t.Write(ctx, args[0], b)
		}),
		verb("append PATH", "Append stdin to a file", one, func(ctx context.Context, t *app.FileTools, args []string) error {
			b, err := data(t)
			if err != nil {
				return err
			}
			return t.Append(ctx, args[0], b)
		}),
		verb("list [PATH]", "List a directory as JSON", rangeArgs(0, 1, "[PATH]"), func(ctx context.Context, t *app.FileTools, args []string) error {
			name := "."
			if len(args) == 1 {
				name = args[0]
			}
			entries, err := t.List(ctx, name)
			if err != nil {
				return err
			}
			if entries == nil {
				entries = []fstools.Entry{}
			}
			return e.printJSON(entries)
		}),
		verb("stat PATH", "Describe one entry as JSON", one, func(ctx context.Context, t *app.FileTools, args []string) error {
			entry, err := t.Stat(ctx, args[0])
			if err != nil {
				return err
			}
			return e.printJSON(entry)
		}),
		verb("delete PATH", "Delete a file, a symlink or an empty directory", one, func(ctx context.Context, t *app.FileTools, args []string) error {
			return t.Delete(ctx, args[0])
		}),
		verb("mkdir PATH", "Create a directory and its parents", one, func(ctx context.Context, t *app.FileTools, args []string) error {
			return t.Mkdir(ctx, args[0])
		}),
		verb("patch PATH", "Apply the unified diff on stdin to one file, atomically", one, func(ctx context.Context, t *app.FileTools, args []string) error {
			b, err := data(t)
			if err != nil {
				return err
			}
			res, err := t.Patch(ctx, args[0], b)
			if err != nil {
				return err
			}
			return e.printJSON(res)
		}),
		verb("search PATTERN [DIR]", "Search files for a regular expression (JSON)", rangeArgs(1, 2, "PATTERN [DIR]"), func(ctx context.Context, t *app.FileTools, args []string) error {
			re, err := regexp.Compile(args[0])
			if err != nil {
				return warden.Errorf(warden.EInvalid, "%q is not a regular expression: %v", args[0], err).
					WithHint("use Go (RE2) syntax, e.g. 'func \\w+\\('")
			}
			dir := "."
			if len(args) == 2 {
				dir = args[1]
			}
			matches, truncated, err := t.Search(ctx, dir, re)
			if err != nil {
				return err
			}
			if matches == nil {
				matches = []fstools.Match{}
			}
			return e.printJSON(struct {
				Matches   []fstools.Match `json:"matches"`
				Truncated bool            `json:"truncated"`
			}{matches, truncated})
		}),
	)
	return c
}

// printJSON writes v as one JSON line on stdout.
func (e *env) printJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return warden.Errorf(warden.EInternal, "encode the result").Wrap(err)
	}
	if _, err := e.stdout.Write(append(b, '\n')); err != nil {
		return warden.Errorf(warden.EUnavailable, "write the result").Wrap(err)
	}
	return nil
}
