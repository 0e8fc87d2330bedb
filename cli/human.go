package cli

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
)

// forPeople reports whether a command prints for a person: its stdout is
// a terminal and --json (asJSON) was not given. Piped or redirected, every
// command prints JSON, as scripts and agents read it.
func (e *env) forPeople(asJSON bool) bool {
	if asJSON || e.shared != nil {
		return false
	}
	f, ok := e.stdout.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// colour reports whether output for people may be coloured: not when
// NO_COLOR is set (https://no-color.org) or the terminal is dumb.
func colour() bool {
	return os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
}

// verdictLabel is the verdict in capitals, coloured when colour is on:
// allow green, sandbox cyan, ask yellow, deny red (bold).
func verdictLabel(v warden.Verdict, colour bool) string {
	label := strings.ToUpper(v.String())
	if !colour {
		return label
	}
	code := map[warden.Verdict]string{warden.Allow: "32", warden.Sandbox: "36", warden.Ask: "33", warden.Deny: "31"}[v]
	if code == "" {
		code = "31"
	}
	return "\x1b[1;" + code + "m" + label + "\x1b[0m"
}

// nextStep says what the person can do about decision d.
func nextStep(d warden.Decision) string {
	switch d.Verdict {
	case warden.Allow:
		return "go ahead: the decision is in the audit log"
	case warden.Sandbox:
		profile := d.Sandbox
		if profile == "" {
			profile = "guard"
		}
		return "run it inside the sandbox: `warden exec --profile " + profile + " -- …`"
	case warden.Ask:
		if d.ApprovalID != "" {
			return "a human answers approval " + d.ApprovalID + ": `warden approvals approve " + d.ApprovalID + "`, `warden approvals watch` or the web console"
		}
		return "a human must approve it: run again with --wait to open an approval and wait for the answer (`warden approvals watch` answers it)"
	default:
		if d.Suggestion != "" {
			return d.Suggestion
		}
		return "see the stages with `warden audit --trace " + d.TraceID + "`; change the policy (`warden config`) only if this should be allowed"
	}
}

// writeDecision writes d for a person: the verdict, the reason, the rule
// and tier, what to do next and the trace id.
func writeDecision(w io.Writer, d warden.Decision, colour bool) error {
	return writeDecisionNext(w, d, colour, nextStep(d))
}

// writeDecisionNext is writeDecision with the next step given.
func writeDecisionNext(w io.Writer, d warden.Decision, colour bool, next string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s\n", verdictLabel(d.Verdict, colour), d.Reason)
	fmt.Fprintf(&b, "  rule   %s (tier %d)\n", d.Rule, d.Tier)
	if d.Rewrite != "" {
		fmt.Fprintf(&b, "  runs   %s\n", d.Rewrite)
	}
	fmt.Fprintf(&b, "  next   %s\n", next)
	fmt.Fprintf(&b, "  trace  %s\n", d.TraceID)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTrade writes a trade's outcome for a person: its decision, then the
// fill when it executed.
func writeTrade(w io.Writer, ex finance.Execution, colour bool) error {
	next := nextStep(ex.Decision)
	switch {
	case ex.Fill != nil:
		next = "nothing: it executed; `warden portfolio` shows the holdings"
	case ex.DryRun:
		next = "nothing executed (--dry-run); run it again without --dry-run to trade"
	case ex.Decision.Verdict == warden.Ask && ex.Decision.ApprovalID != "":
		next = "once approval " + ex.Decision.ApprovalID + " is approved (`warden approvals approve " + ex.Decision.ApprovalID + "`), run the same command again; or use --wait"
	}
	if err := writeDecisionNext(w, ex.Decision, colour, next); err != nil {
		return err
	}
	if ex.Fill == nil {
		return nil
	}
	f := ex.Fill
	line := fmt.Sprintf("%s $%s", f.Action, f.ValueUSD)
	if f.InToken != "" || f.OutToken != "" {
		line += fmt.Sprintf(": paid %g %s, got %g %s", f.InAmount, f.InToken, f.OutAmount, f.OutToken)
	}
	if f.Price != 0 {
		line += fmt.Sprintf(" at %g", f.Price)
	}
	if f.Position != "" {
		line += ", position " + f.Position
	}
	_, err := fmt.Fprintf(w, "  filled %s (fill %s)\n", oneLine(line), f.ID)
	return err
}

// writePortfolio writes a portfolio for a person: its value, holdings,
// positions and exposure by asset.
func writePortfolio(w io.Writer, backend string, p *finance.Portfolio) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s backend: $%s in all, exposure $%s\n", backend, p.ValueUSD(), p.Exposure().Total)
	if len(p.Holdings) == 0 && len(p.Positions) == 0 {
		b.WriteString("  nothing held\n")
	}
	for _, h := range p.Holdings {
		fmt.Fprintf(&b, "  %-20s %14.6g  $%s\n", h.Token.Symbol+" on "+h.Token.Chain.Name, h.Amount, h.ValueUSD)
	}
	for _, ps := range p.Positions {
		fmt.Fprintf(&b, "  %-20s %s %gx, size %g at %g (mark %g), margin $%s, notional $%s  [%s]\n",
			ps.Token.Symbol+" on "+ps.Token.Chain.Name, ps.Side, ps.Leverage, ps.Size, ps.EntryPrice, ps.MarkPrice, ps.MarginUSD, ps.NotionalUSD(), ps.ID)
	}
	exp := p.Exposure()
	assets := make([]string, 0, len(exp.ByAsset))
	for a := range exp.ByAsset {
		assets = append(assets, a)
	}
	slices.Sort(assets)
	for _, a := range assets {
		fmt.Fprintf(&b, "  exposure %-12s $%s\n", a, exp.ByAsset[a])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// spinner shows msg with a spinner on stderr while long work runs, when
// stderr is a terminal; stop clears it. Elsewhere it shows nothing.
func (e *env) spinner(msg string) (stop func()) {
	f, ok := e.stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return func() {}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		frames := []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			fmt.Fprintf(f, "\r%c %s", frames[i%len(frames)], msg)
			select {
			case <-done:
				fmt.Fprintf(f, "\r\x1b[K")
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
