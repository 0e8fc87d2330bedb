package cli

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentwarden/warden"
)

// The audit log for a person at a terminal: rows in aligned columns with
// the verdicts (and the events' severities) coloured unless NO_COLOR, a
// count of what the list holds and what to look at next; one trace's rows
// in full, with every stage's answer. Every text that came from a request
// goes through oneLine, so no control character reaches the terminal.
// Piped, or with --json, the same rows are JSON lines.

// auditColumns are the columns of an audit row for a person.
var auditColumns = []string{"TIME", "VERDICT", "CAPABILITY", "ACTION", "RESOURCE", "TIER", "RULE", "TRACE"}

// auditCells are r's cells, in auditColumns order, as plain text.
func auditCells(r *warden.AuditEntry) []string {
	return []string{r.CreatedAt.Local().Format(time.DateTime), strings.ToUpper(r.Verdict.String()), oneLine(r.Capability), oneLine(r.Action),
		oneLine(cell(r.Resource, 40)), fmt.Sprint(r.Tier), oneLine(r.Rule), oneLine(r.TraceID)}
}

// writeColumns writes rows (the first one the header) in columns two
// spaces apart, padded by the width a terminal shows; paint, when set,
// decorates a cell after it was padded (colour does not count).
func writeColumns(w io.Writer, rows [][]string, paint func(row, col int, padded string) string) error {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for ri, r := range rows {
		for i, c := range r {
			padded := c
			if i < len(r)-1 {
				padded += strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)) + "  "
			}
			if paint != nil {
				padded = paint(ri, i, padded)
			}
			b.WriteString(padded)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// paintVerdict colours the verdict in a padded cell, when colour is on.
func paintVerdict(padded string, colour bool) string {
	label := strings.TrimRight(padded, " ")
	v, err := warden.ParseVerdict(strings.ToLower(label))
	if err != nil || !colour {
		return padded
	}
	return verdictLabel(v, true) + padded[len(label):]
}

// writeAuditForPeople writes the rows of `warden audit` for a person: a
// table, then what it holds (cut says older rows match too) and what to
// run next; with one trace asked for, each row in full.
func writeAuditForPeople(w io.Writer, rows []warden.AuditEntry, trace string, cut bool, colour bool) error {
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "no audit rows match (widen --since, or drop a filter)")
		return err
	}
	if trace != "" {
		for i := range rows {
			if err := writeAuditRow(w, &rows[i], colour); err != nil {
				return err
			}
		}
		return nil
	}
	table := [][]string{auditColumns}
	count := map[warden.Verdict]int{}
	for i := range rows {
		table = append(table, auditCells(&rows[i]))
		count[rows[i].Verdict]++
	}
	err := writeColumns(w, table, func(row, col int, padded string) string {
		if row == 0 || col != 1 {
			return padded
		}
		return paintVerdict(padded, colour)
	})
	if err != nil {
		return err
	}
	var parts []string
	for _, v := range []warden.Verdict{warden.Allow, warden.Sandbox, warden.Ask, warden.Deny} {
		if n := count[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v))
		}
	}
	what := fmt.Sprintf("%d decisions, oldest first: %s", len(rows), strings.Join(parts, ", "))
	if len(rows) == 1 {
		what = "1 decision: " + strings.Join(parts, ", ")
	}
	if cut {
		what += "; older ones match too (raise --limit, 0 for all)"
	}
	_, err = fmt.Fprintf(w, "\n%s\nnext: `warden audit --trace TRACE` shows one with every stage's answer; --json prints every field\n", what)
	return err
}

// writeAuditRow writes one audit row in full: verdict and reason, what was
// asked, the rule and tier, every stage's answer, and who asked.
func writeAuditRow(w io.Writer, r *warden.AuditEntry, colour bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s\n", verdictLabel(r.Verdict, colour), oneLine(r.Reason))
	fmt.Fprintf(&b, "  asked   %s %s %s\n", oneLine(r.Capability), oneLine(r.Action), oneLine(cell(r.Resource, 200)))
	fmt.Fprintf(&b, "  rule    %s (tier %d)\n", oneLine(r.Rule), r.Tier)
	for _, s := range r.Stages {
		line := fmt.Sprintf("%s: %s", oneLine(s.Stage), s.Verdict)
		if s.Reason != "" {
			line += ", " + oneLine(cell(s.Reason, 160))
		}
		if s.Error != "" {
			line += " (could not decide: " + oneLine(cell(s.Error, 160)) + ")"
		}
		fmt.Fprintf(&b, "  stage   %s\n", line)
	}
	who := oneLine(r.RequestedBy)
	if r.Host != "" {
		who += " through " + oneLine(r.Host)
	}
	if r.Session != "" {
		who += ", session " + oneLine(r.Session)
	}
	if r.Autonomous {
		who += ", autonomous"
	}
	if who = strings.TrimPrefix(who, " "); who == "" {
		who = "no requester named"
	}
	fmt.Fprintf(&b, "  by      %s\n", who)
	fmt.Fprintf(&b, "  at      %s, trace %s\n", r.CreatedAt.Local().Format(time.DateTime), oneLine(r.TraceID))
	if r.Blocked && r.BlockReason != "" && r.BlockReason != r.Reason {
		fmt.Fprintf(&b, "  blocked %s\n", oneLine(r.BlockReason))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// severityLabel is sev, coloured when colour is on: critical and error
// red, warn yellow, info plain.
func severityLabel(sev warden.Severity, padded string, colour bool) string {
	if !colour {
		return padded
	}
	label := strings.TrimRight(padded, " ")
	code := map[warden.Severity]string{warden.SevCritical: "1;31", warden.SevError: "31", warden.SevWarn: "33"}[sev]
	if code == "" {
		return padded
	}
	return "\x1b[" + code + "m" + label + "\x1b[0m" + padded[len(label):]
}

// writeEventsForPeople writes security events for a person, oldest first,
// their severities coloured.
func writeEventsForPeople(w io.Writer, evs []warden.SecurityEvent, colour bool) error {
	if len(evs) == 0 {
		_, err := fmt.Fprintln(w, "no security events match")
		return err
	}
	table := [][]string{{"TIME", "SEVERITY", "TYPE", "SUMMARY"}}
	for _, ev := range evs {
		table = append(table, []string{ev.CreatedAt.Local().Format(time.DateTime), string(ev.Severity), oneLine(ev.Type), oneLine(cell(ev.Summary, 100))})
	}
	return writeColumns(w, table, func(row, col int, padded string) string {
		if row == 0 || col != 1 {
			return padded
		}
		return severityLabel(evs[row-1].Severity, padded, colour)
	})
}
