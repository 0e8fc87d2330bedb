package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/approval"
)

func approvalsCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "approvals",
		Short: "List and answer the requests waiting for a human",
		Long: `List and answer approvals: requests the policy asks a human about.

Answers: once (approve this one run), deny, session (this exact input for
the rest of its session), always (this exact input from now on, written as
a rule into the policy file), host (a shell command only: run it once on
the host, outside the sandbox, for commands that need the host such as git
push over SSH, docker, or gh with its stored login; recorded as an
escalation). A tier 4 request takes only once or host, from a person at a
terminal, the web console or Telegram. Approving re-checks the request
against the current policy: with the kill switch on it stays denied.

When a daemon serves this home, answers go through it; otherwise straight
to the database.`,
	}
	var all bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List pending approvals (--all: every approval)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return e.withApprover(c.Context(), func(ap app.Approver) error {
				as, err := ap.Approvals(c.Context(), !all)
				if err != nil {
					return err
				}
				if e.asJSON {
					return writeApprovalsJSON(e.stdout, as)
				}
				if len(as) == 0 {
					fmt.Fprintln(e.stdout, "no pending approvals")
					return nil
				}
				for _, a := range as {
					fmt.Fprintf(e.stdout, "%s  %-8s tier %d  %s  (%s)\n", a.ID, a.State, a.Decision.Tier,
						oneLine(approval.Describe(&a.Request)), oneLine(a.Decision.Reason))
					for _, d := range approvalDetails(&a.Request) {
						fmt.Fprintf(e.stdout, "    %s\n", oneLine(d))
					}
				}
				return nil
			})
		},
	}
	list.Flags().BoolVar(&all, "all", false, "list answered and expired approvals too")
	list.Flags().BoolVar(&e.asJSON, "json", false, "one JSON object per approval, one per line")
	var (
		answer string
		host   bool
	)
	approve := &cobra.Command{
		Use:   "approve ID",
		Short: "Approve a pending request (--answer once|session|always, or --host)",
		Args:  rangeArgs(1, 1, "one approval id"),
		RunE: func(c *cobra.Command, args []string) error {
			if host {
				if c.Flags().Changed("answer") && answer != string(warden.AnswerHost) {
					return usageError(c, "--host is the answer host; drop --answer "+answer)
				}
				answer = string(warden.AnswerHost)
			}
			ans, err := warden.ParseAnswer(answer)
			if err != nil || ans == warden.AnswerDeny {
				return usageError(c, "--answer is once, session, always or host")
			}
			return e.answer(c.Context(), args[0], ans)
		},
	}
	approve.Flags().StringVar(&answer, "answer", "once", "once, session, always, or host (a shell command: run it once on the host)")
	approve.Flags().BoolVar(&host, "host", false, "run the shell command once on the host, outside the sandbox (audited as an escalation); same as --answer host")
	deny := &cobra.Command{
		Use:   "deny ID",
		Short: "Deny a pending request",
		Args:  rangeArgs(1, 1, "one approval id"),
		RunE: func(c *cobra.Command, args []string) error {
			return e.answer(c.Context(), args[0], warden.AnswerDeny)
		},
	}
	watch := &cobra.Command{
		Use:   "watch",
		Short: "Show each new approval and answer it with one key, until interrupted",
		Long: `Show each pending approval in a box (action, command or path, reason, size)
and read the answer from the terminal:
  [y] approve once  [n] deny  [a] always  [s] session  [v] view the content
and, for a shell command, [h] run it once on the host, outside the sandbox,
without Enter. It needs a terminal: an answer piped in is not a human's.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			tty, err := openTerminal()
			if err != nil {
				return warden.Errorf(warden.EConflict, "approvals watch needs a human at a terminal, and there is none").Wrap(err).
					WithHint("run it in an interactive terminal, or answer with `warden approvals approve|deny ID`")
			}
			defer tty.Close()
			defer keyAtATime(tty)()
			return e.withApprover(c.Context(), func(ap app.Approver) error {
				return watchApprovals(c.Context(), ap, tty, tty)
			})
		},
	}
	c.AddCommand(list, approve, deny, watch)
	return c
}

func (e *env) withApprover(ctx context.Context, fn func(app.Approver) error) error {
	a, err := e.openServing(ctx)
	if err != nil {
		return err
	}
	defer a.Close()
	return fn(a.Approver(ctx))
}

func (e *env) answer(ctx context.Context, id string, ans warden.Answer) error {
	return e.withApprover(ctx, func(ap app.Approver) error {
		a, err := ap.Answer(ctx, id, ans, "terminal", currentUser())
		if err != nil {
			return err
		}
		msg := fmt.Sprintf("approval %s is %s", a.ID, a.State)
		if a.State == warden.ApprovalApproved && a.Answer == warden.AnswerHost {
			msg += ": it runs once on the host, outside the sandbox (recorded as an escalation)"
		}
		if a.Note != "" {
			msg += ": " + a.Note
		}
		fmt.Fprintln(e.stdout, msg)
		if a.State != warden.ApprovalApproved && ans.Approves() {
			e.status = exitDeny
		}
		return nil
	})
}

// watchApprovals polls for pending approvals and asks about each in turn.
func watchApprovals(ctx context.Context, ap app.Approver, in io.Reader, out io.Writer) error {
	r := bufio.NewReader(in)
	seen := map[string]bool{}
	fmt.Fprintln(out, "watching for approvals; Ctrl-C stops")
	for {
		as, err := ap.Approvals(ctx, true)
		if err != nil {
			return err
		}
		for i := len(as) - 1; i >= 0; i-- { // oldest first
			a := as[i]
			if seen[a.ID] {
				continue
			}
			seen[a.ID] = true
			if err := askOne(ctx, ap, a, r, out); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// askOne shows a in a box and reads answers until one settles it.
func askOne(ctx context.Context, ap app.Approver, a warden.Approval, r *bufio.Reader, out io.Writer) error {
	fmt.Fprint(out, box(a))
	keys := "[y] approve  [n] deny  [a] always  [s] session  [v] view"
	if a.Decision.ManualOnly {
		keys = "[y] approve once  [n] deny  [v] view   (tier 4: once only)"
	}
	onHost := warden.RunsOnHost(&a.Request)
	if onHost {
		keys = strings.Replace(keys, "  [v] view", "  [h] run on host  [v] view", 1)
	}
	prompt := true
	for {
		if prompt {
			fmt.Fprintf(out, "%s > ", keys)
		}
		prompt = true
		key, _, err := r.ReadRune() // one key: the terminal is in cbreak mode
		if err != nil {
			return err
		}
		var ans warden.Answer
		switch k := strings.ToLower(string(key)); k {
		case "\n", "\r", " ":
			prompt = false // the Enter of a line-mode answer, or a stray space
			continue
		case "y", "n", "a", "s", "h", "v":
			fmt.Fprintln(out, k) // the key, echoed
		}
		switch strings.ToLower(string(key)) {
		case "y":
			ans = warden.AnswerOnce
		case "n":
			ans = warden.AnswerDeny
		case "a":
			ans = warden.AnswerAlways
		case "s":
			ans = warden.AnswerSession
		case "h":
			if !onHost {
				fmt.Fprintln(out, "only a shell command can run on the host; answer y, n, a, s or v")
				continue
			}
			ans = warden.AnswerHost
		case "v":
			fmt.Fprintln(out, terminalText(approval.Content(&a), true))
			if d := writeDiff(&a.Request); d != "" {
				fmt.Fprint(out, terminalText(d, true))
			}
			continue
		default:
			if onHost {
				fmt.Fprintln(out, "answer y, n, a, s, h or v")
			} else {
				fmt.Fprintln(out, "answer y, n, a, s or v")
			}
			continue
		}
		got, err := ap.Answer(ctx, a.ID, ans, "terminal", currentUser())
		if err != nil {
			fmt.Fprintln(out, "warden: "+warden.UserMessage(err))
			if warden.ErrorCodeOf(err) == warden.EInvalid {
				continue // e.g. session on a tier 4 request: ask again
			}
			return nil
		}
		if got.State == warden.ApprovalApproved && got.Answer == warden.AnswerHost {
			fmt.Fprintf(out, "approval %s: %s, to run once on the host (recorded as an escalation)\n\n", got.ID, got.State)
			return nil
		}
		fmt.Fprintf(out, "approval %s: %s\n\n", got.ID, got.State)
		return nil
	}
}

// box draws an approval for the terminal.
func box(a warden.Approval) string {
	res := a.Request.Resource
	size := fmt.Sprintf("%d bytes", len(res))
	if r := []rune(res); len(r) > 300 {
		res = string(r[:300]) + "…"
	}
	lines := []string{
		fmt.Sprintf("approval %s  (tier %d, expires %s)", a.ID, a.Decision.Tier, a.ExpiresAt.Local().Format("15:04:05")),
		"action:   " + a.Request.Capability + " " + a.Request.Action,
		"resource: " + oneLine(res),
		"reason:   " + oneLine(a.Decision.Reason),
	}
	for _, d := range approvalDetails(&a.Request) {
		lines = append(lines, oneLine(d))
	}
	if a.Request.Capability != "filesystem" || a.Request.Params["bytes"] == nil {
		lines = append(lines, "size:     "+size)
	}
	if a.Request.Session != "" {
		lines = append(lines, "session:  "+a.Request.Session)
	}
	w := 0
	for _, l := range lines {
		w = max(w, len([]rune(l)))
	}
	var b strings.Builder
	b.WriteString("┌" + strings.Repeat("─", w+2) + "┐\n")
	for _, l := range lines {
		b.WriteString("│ " + l + strings.Repeat(" ", w-len([]rune(l))) + " │\n")
	}
	b.WriteString("└" + strings.Repeat("─", w+2) + "┘\n")
	return b.String()
}

// oneLine keeps text on one line and inert: an agent cannot draw its own
// lines inside the box, nor send the terminal a control sequence.
func oneLine(s string) string { return terminalText(s, false) }

// terminalText returns s with everything a terminal would act on instead of
// print made visible as ␣: C0 controls (newline and tab kept when
// keepLines), DEL, C1 controls (U+0080 to U+009F: U+009B starts a control
// sequence on many terminals) and the bidirectional overrides and isolates,
// which reorder what follows them. Bytes that are not UTF-8 become U+FFFD.
// What an agent asks about reaches the operator's terminal only through it.
func terminalText(s string, keepLines bool) string {
	return strings.Map(func(r rune) rune {
		switch {
		case keepLines && (r == '\n' || r == '\t'):
			return r
		case r < 0x20, r >= 0x7f && r <= 0x9f,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return '␣'
		}
		return r
	}, s)
}
