package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/clip"
)

// auditFlags are the filters shared by `audit`, `audit export` and `audit tail`.
type auditFlags struct {
	since, until, capability, tool, verdict, requestedBy, trace string
	blocked                                                     string
	limit                                                       int
}

func (f *auditFlags) register(c *cobra.Command, defaultLimit int) {
	fl := c.Flags()
	fl.StringVar(&f.since, "since", "", "only rows at or after this time: a duration ago (30m, 24h, 7d), a date (2026-11-20) or RFC 3339")
	fl.StringVar(&f.until, "until", "", "only rows before this time (same forms as --since)")
	fl.StringVar(&f.capability, "capability", "", "only this capability (shell, filesystem, network, trade, sign, tool)")
	fl.StringVar(&f.tool, "tool", "", "only this tool name")
	fl.StringVar(&f.verdict, "verdict", "", "only this verdict (allow, sandbox, ask, deny)")
	fl.StringVar(&f.blocked, "blocked", "", "true: only denied requests; false: only the others")
	fl.Lookup("blocked").NoOptDefVal = "true"
	fl.StringVar(&f.requestedBy, "requested-by", "", "only requests made by this requester (agent, skill:NAME, cron:JOB…)")
	fl.StringVar(&f.trace, "trace", "", "only this trace id")
	fl.IntVar(&f.limit, "limit", defaultLimit, "at most this many rows, the newest (0: no limit)")
}

func (f *auditFlags) filter(c *cobra.Command, now time.Time) (warden.AuditFilter, error) {
	af := warden.AuditFilter{Capability: f.capability, Tool: f.tool, RequestedBy: f.requestedBy, TraceID: f.trace, Limit: f.limit}
	var err error
	if af.Since, err = parseWhen(f.since, now); err != nil {
		return af, usageError(c, "--since: "+err.Error())
	}
	if af.Until, err = parseWhen(f.until, now); err != nil {
		return af, usageError(c, "--until: "+err.Error())
	}
	if f.verdict != "" {
		if _, err := warden.ParseVerdict(f.verdict); err != nil {
			return af, usageError(c, "--verdict: "+err.Error())
		}
		af.Verdict = f.verdict
	}
	if f.blocked != "" {
		b, err := strconv.ParseBool(f.blocked)
		if err != nil {
			return af, usageError(c, "--blocked takes true or false")
		}
		af.Blocked = &b
	}
	if f.limit < 0 {
		return af, usageError(c, "--limit must be 0 or more")
	}
	return af, nil
}

// parseWhen reads a point in time: empty (none), a duration before now (90s,
// 30m, 24h, 7d), a date, or RFC 3339.
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if days, err := strconv.Atoi(n); err == nil && days >= 0 {
			return now.AddDate(0, 0, -days), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if t, err := time.ParseInLocation("2006-01-02", s, time.Local); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not a time; use a duration like 24h or 7d, a date like 2026-11-20, or RFC 3339", s)
}

func auditCmd(e *env) *cobra.Command {
	var (
		f      auditFlags
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "audit",
		Short: "Show the audit log (filters: --since --until --capability --tool --verdict --blocked --requested-by --trace --limit)",
		Example: `  warden audit --since 24h --blocked
  warden audit --capability trade --verdict deny --json
  warden audit verify`,
		Args: rangeArgs(0, 0, "no arguments; see the subcommands"),
		RunE: func(c *cobra.Command, _ []string) error {
			rows, _, s, err := e.entries(c, &f)
			if err != nil {
				return err
			}
			defer s.Close()
			if asJSON {
				return writeJSONLines(e.stdout, rows)
			}
			return writeTable(e.stdout, rows)
		},
	}
	f.register(c, 50)
	c.Flags().BoolVar(&asJSON, "json", false, "one JSON object per row instead of a table")
	c.AddCommand(auditExportCmd(e), auditTailCmd(e), auditVerifyCmd(e), auditEventsCmd(e))
	return c
}

func auditExportCmd(e *env) *cobra.Command {
	var (
		f      auditFlags
		format string
	)
	c := &cobra.Command{
		Use:   "export",
		Short: "Export audit rows with their stage answers as JSON lines or one JSON array",
		Args:  rangeArgs(0, 0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			if format != "jsonl" && format != "json" {
				return usageError(c, "--format must be jsonl or json")
			}
			rows, _, s, err := e.entries(c, &f)
			if err != nil {
				return err
			}
			defer s.Close()
			if format == "jsonl" {
				return writeJSONLines(e.stdout, rows)
			}
			if rows == nil {
				rows = []warden.AuditEntry{}
			}
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(rows)
		},
	}
	f.register(c, 0)
	c.Flags().StringVar(&format, "format", "jsonl", "jsonl (one object per line) or json (one array)")
	return c
}

func auditTailCmd(e *env) *cobra.Command {
	var (
		f       auditFlags
		follow  bool
		asJSON  bool
		every   time.Duration
		maxWait time.Duration
	)
	c := &cobra.Command{
		Use:   "tail",
		Short: "Show the newest audit rows; with -f keep printing new ones as they are recorded",
		Args:  rangeArgs(0, 0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			rows, af, s, err := e.entries(c, &f)
			if err != nil {
				return err
			}
			defer s.Close()
			print := func(rows []warden.AuditEntry) error {
				if asJSON {
					return writeJSONLines(e.stdout, rows)
				}
				return writeRows(e.stdout, rows)
			}
			if !asJSON {
				writeHeader(e.stdout)
			}
			if err := print(rows); err != nil {
				return err
			}
			if !follow {
				return nil
			}
			last := int64(0)
			if len(rows) > 0 {
				last = rows[len(rows)-1].Seq
			} else if newest, err := s.Entries(c.Context(), warden.AuditFilter{Limit: 1}); err == nil && len(newest) > 0 {
				last = newest[0].Seq
			}
			af.Limit, af.Since = 0, time.Time{}
			tick := time.NewTicker(every)
			defer tick.Stop()
			var deadline <-chan time.Time
			if maxWait > 0 {
				deadline = time.After(maxWait)
			}
			for {
				select {
				case <-c.Context().Done():
					return nil
				case <-deadline:
					return nil
				case <-tick.C:
				}
				af.AfterSeq = last
				rows, err := s.Entries(c.Context(), af)
				if err != nil {
					return warden.Errorf(warden.EUnavailable, "read the audit log").Wrap(err)
				}
				if len(rows) == 0 {
					continue
				}
				if err := print(rows); err != nil {
					return err
				}
				last = rows[len(rows)-1].Seq
			}
		},
	}
	f.register(c, 10)
	c.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new rows as they are recorded")
	c.Flags().BoolVar(&asJSON, "json", false, "one JSON object per row")
	c.Flags().DurationVar(&every, "interval", 200*time.Millisecond, "how often to look for new rows with -f")
	c.Flags().DurationVar(&maxWait, "for", 0, "with -f, stop after this long (0: until interrupted)")
	return c
}

func auditVerifyCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "verify",
		Short: "Walk the hash chains of the audit log and name the first broken row",
		Args:  rangeArgs(0, 0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			s, err := e.store(c.Context())
			if err != nil {
				return err
			}
			defer s.Close()
			rep, err := s.Verify(c.Context())
			if err != nil {
				return warden.Errorf(warden.EUnavailable, "verify the audit log").Wrap(err)
			}
			if b := rep.FirstBreak; b != nil {
				fmt.Fprintf(e.stdout, "BROKEN: %s row seq %d (id %s", b.Table, b.Seq, b.ID)
				if b.TraceID != "" {
					fmt.Fprintf(e.stdout, ", trace %s", b.TraceID)
				}
				fmt.Fprintf(e.stdout, "): %s\n", b.Why)
				return warden.Errorf(warden.EConflict, "the audit log has been altered at %s row %d", b.Table, b.Seq).Wrap(errVerifyFailed).
					WithHint("rows before it verify; keep a copy of warden.db for investigation")
			}
			fmt.Fprintf(e.stdout, "ok: %d audit rows and %d security events verify\n", rep.AuditRows, rep.EventRows)
			return nil
		},
	}
}

func auditEventsCmd(e *env) *cobra.Command {
	var (
		since, typ, severity string
		limit                int
		asJSON               bool
	)
	c := &cobra.Command{
		Use:   "events",
		Short: "Show security events (kill switch, config problems…)",
		Args:  rangeArgs(0, 0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			t, err := parseWhen(since, time.Now())
			if err != nil {
				return usageError(c, "--since: "+err.Error())
			}
			if severity != "" && !warden.Severity(severity).Valid() {
				return usageError(c, "--severity must be info, warn, error or critical")
			}
			s, err := e.store(c.Context())
			if err != nil {
				return err
			}
			defer s.Close()
			evs, err := s.Events(c.Context(), warden.EventFilter{Since: t, Type: typ, MinSeverity: warden.Severity(severity), Limit: limit})
			if err != nil {
				return warden.Errorf(warden.EUnavailable, "read security events").Wrap(err)
			}
			if asJSON {
				return writeJSONLines(e.stdout, evs)
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tSEVERITY\tTYPE\tSUMMARY")
			for _, ev := range evs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", ev.CreatedAt.Local().Format(time.DateTime), ev.Severity, ev.Type, cell(ev.Summary, 100))
			}
			return tw.Flush()
		},
	}
	c.Flags().StringVar(&since, "since", "", "only events at or after this time")
	c.Flags().StringVar(&typ, "type", "", "only this event type, e.g. kill_switch_on, config_invalid")
	c.Flags().StringVar(&severity, "severity", "", "only this severity or worse")
	c.Flags().IntVar(&limit, "limit", 50, "at most this many events, the newest")
	c.Flags().BoolVar(&asJSON, "json", false, "one JSON object per event")
	return c
}

func writeJSONLines[T any](w io.Writer, rows []T) error {
	enc := json.NewEncoder(w)
	for i := range rows {
		if err := enc.Encode(&rows[i]); err != nil {
			return err
		}
	}
	return nil
}

const tableHeader = "TIME\tVERDICT\tCAPABILITY\tACTION\tRESOURCE\tTIER\tRULE\tTRACE"

func writeHeader(w io.Writer) { fmt.Fprintln(w, strings.ReplaceAll(tableHeader, "\t", "  ")) }

func writeTable(w io.Writer, rows []warden.AuditEntry) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, tableHeader)
	for i := range rows {
		writeRow(tw, &rows[i])
	}
	return tw.Flush()
}

func writeRows(w io.Writer, rows []warden.AuditEntry) error {
	for i := range rows {
		r := &rows[i]
		fmt.Fprintf(w, "%s  %s  %s  %s  %s  %d  %s  %s\n", r.CreatedAt.Local().Format(time.DateTime), r.Verdict, r.Capability, r.Action, cell(r.Resource, 40), r.Tier, r.Rule, r.TraceID)
	}
	return nil
}

func writeRow(w io.Writer, r *warden.AuditEntry) {
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", r.CreatedAt.Local().Format(time.DateTime), r.Verdict, r.Capability, r.Action, cell(r.Resource, 40), r.Tier, r.Rule, r.TraceID)
}

// cell shortens s to n runes, "…" included, for a table cell, on one line.
func cell(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return clip.String(s, n-1)
}
