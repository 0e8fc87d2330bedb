package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
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
			limit := f.limit
			if limit > 0 {
				f.limit++ // one more, to know whether the list is cut
			}
			rows, _, s, err := e.entries(c, &f)
			f.limit = limit
			if err != nil {
				return err
			}
			defer s.Close()
			cut := limit > 0 && len(rows) > limit
			if cut {
				rows = rows[len(rows)-limit:]
			}
			if !e.forPeople(asJSON) {
				if cut {
					fmt.Fprintf(e.stderr, "warden: showing the newest %d rows; older ones match too (raise --limit, 0 for all, or narrow with --since or a filter)\n", limit)
				}
				return writeJSONLines(e.stdout, rows)
			}
			return writeAuditForPeople(e.stdout, rows, f.trace, cut, colour())
		},
	}
	f.register(c, 50)
	c.Flags().BoolVar(&asJSON, "json", false, "one JSON object per row at a terminal too (it always is when piped)")
	c.AddCommand(auditExportCmd(e), auditTailCmd(e), auditVerifyCmd(e), auditRecoverCmd(e), auditEventsCmd(e))
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
			people := e.forPeople(asJSON)
			print := func(rows []warden.AuditEntry) error {
				if !people {
					return writeJSONLines(e.stdout, rows)
				}
				return writeRows(e.stdout, rows, colour())
			}
			if people {
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
	c.Flags().BoolVar(&asJSON, "json", false, "one JSON object per row at a terminal too (it always is when piped)")
	c.Flags().DurationVar(&every, "interval", 200*time.Millisecond, "how often to look for new rows with -f")
	c.Flags().DurationVar(&maxWait, "for", 0, "with -f, stop after this long (0: until interrupted)")
	return c
}

func auditVerifyCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "verify",
		Short: "Check the audit log: its hash chains, keyed checkpoints, chain anchor and spool; name the first broken row and what is missing",
		Args:  rangeArgs(0, 0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			home, err := e.homeDir()
			if err != nil {
				return err
			}
			rep, err := app.VerifyAuditWith(c.Context(), home, e.storeDSN)
			if err != nil {
				return err
			}
			for _, m := range rep.Missing {
				fmt.Fprintf(e.stdout, "MISSING: %s\n", m)
			}
			if b := rep.FirstBreak; b != nil {
				fmt.Fprintf(e.stdout, "BROKEN: %s row seq %d", b.Table, b.Seq)
				if b.ID != "" {
					fmt.Fprintf(e.stdout, " (id %s", b.ID)
					if b.TraceID != "" {
						fmt.Fprintf(e.stdout, ", trace %s", b.TraceID)
					}
					fmt.Fprint(e.stdout, ")")
				}
				fmt.Fprintf(e.stdout, ": %s\n", b.Why)
			}
			switch {
			case rep.FirstBreak != nil && len(rep.Missing) == 0:
				b := rep.FirstBreak
				return warden.Errorf(warden.EConflict, "the audit log has been altered at %s row %d", b.Table, b.Seq).Wrap(errVerifyFailed).
					WithHint("rows before it verify; keep a copy of warden.db for investigation; `warden audit recover --yes` keeps it aside and starts a new chain")
			case !rep.OK():
				return warden.Errorf(warden.EConflict, "the audit log is missing what this home recorded (%s)", problems(rep)).Wrap(errVerifyFailed).
					WithHint("look into it first (who could write warden's home?); then `warden audit recover --yes` keeps what is left aside and starts a new chain that records the loss")
			}
			fmt.Fprintf(e.stdout, "ok: %d audit rows and %d security events verify, through %d keyed checkpoints and the chain anchor\n", rep.AuditRows, rep.EventRows, rep.Checkpoints)
			return nil
		},
	}
}

// problems counts what a verify report found wrong.
func problems(rep warden.VerifyReport) string {
	n := len(rep.Missing)
	if rep.FirstBreak != nil {
		n++
	}
	if n == 1 {
		return "1 problem"
	}
	return strconv.Itoa(n) + " problems"
}

func auditRecoverCmd(e *env) *cobra.Command {
	var yes bool
	c := &cobra.Command{
		Use:   "recover",
		Short: "Bring back a home whose audit log lost rows or was replaced: keep what is left aside, start a new chain that records the loss",
		Long: `warden refuses to decide while the audit log is not what its chain anchor recorded
(a deleted, cut-short or replaced warden.db, a rewritten chain, a spool that lost its tail).
recover is the only way back besides 'warden init' in a new home. It refuses a log that
verifies. When only the spool lost its tail, the loss is recorded and the chain goes on;
otherwise warden.db (with its -wal and -shm) and the anchor are renamed NAME.lost-TIME and
a new chain starts whose first rows record what was lost and the anchor the old chain had.
It needs a human: at a terminal, or --yes.`,
		Args: rangeArgs(0, 0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			home, err := e.homeDir()
			if err != nil {
				return err
			}
			by := "warden audit recover --yes"
			if !yes {
				ok, err := confirmAtTerminal(e, "Start a new audit chain for "+home.Abs()+" (what is left of the old one is kept aside)? Type 'recover' to confirm: ", "recover")
				if err != nil {
					return warden.Errorf(warden.EConflict, "warden audit recover needs a human's confirmation at a terminal").Wrap(err).
						WithHint("run it in an interactive terminal, or add --yes if you mean it")
				}
				if !ok {
					fmt.Fprintln(e.stdout, "not confirmed: nothing was changed")
					return nil
				}
				by = "warden audit recover (confirmed at a terminal)"
			}
			res, err := app.RecoverAudit(c.Context(), home, by, time.Now())
			if err != nil {
				return err
			}
			for _, m := range res.Report.Missing {
				fmt.Fprintf(e.stdout, "lost: %s\n", m)
			}
			if b := res.Report.FirstBreak; b != nil {
				fmt.Fprintf(e.stdout, "differed: %s row %d: %s\n", b.Table, b.Seq, b.Why)
			}
			for _, k := range res.Kept {
				fmt.Fprintf(e.stdout, "kept %s\n", k)
			}
			if res.NewChain {
				fmt.Fprintln(e.stdout, "started a new audit chain; its first rows record the loss (warden audit events --type audit_log_recovered)")
			} else {
				fmt.Fprintln(e.stdout, "recorded the loss; the chain goes on (warden audit events --type audit_log_recovered)")
			}
			return nil
		},
	}
	c.Flags().BoolVar(&yes, "yes", false, "do not ask at a terminal")
	return c
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
			if limit < 0 {
				return usageError(c, "--limit must be 0 (every event) or more")
			}
			ask := limit
			if limit > 0 {
				ask = limit + 1 // one more, to know whether the list is cut
			}
			evs, err := s.Events(c.Context(), warden.EventFilter{Since: t, Type: typ, MinSeverity: warden.Severity(severity), Limit: ask})
			if err != nil {
				return warden.Errorf(warden.EUnavailable, "read security events").Wrap(err)
			}
			if limit > 0 && len(evs) > limit {
				evs = evs[len(evs)-limit:] // the newest limit, in log order
				fmt.Fprintf(e.stderr, "warden: showing the newest %d events; older ones match too (raise --limit, 0 for all, or narrow with --since, --type or --severity)\n", limit)
			}
			// By time: a spooled event enters the log when the spool is
			// drained, after events recorded later.
			slices.SortStableFunc(evs, func(a, b warden.SecurityEvent) int { return a.CreatedAt.Compare(b.CreatedAt) })
			if !e.forPeople(asJSON) {
				return writeJSONLines(e.stdout, evs)
			}
			return writeEventsForPeople(e.stdout, evs, colour())
		},
	}
	c.Flags().StringVar(&since, "since", "", "only events at or after this time")
	c.Flags().StringVar(&typ, "type", "", "only this event type, e.g. kill_switch_on, config_invalid")
	c.Flags().StringVar(&severity, "severity", "", "only this severity or worse")
	c.Flags().IntVar(&limit, "limit", 50, "at most this many events, the newest (0: all); stderr says when there are more")
	c.Flags().BoolVar(&asJSON, "json", false, "one JSON object per event at a terminal too (it always is when piped)")
	return c
}

// writeJSONLines writes rows one JSON object a line, <, > and & as they
// are (a command reads as written).
func writeJSONLines[T any](w io.Writer, rows []T) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range rows {
		if err := enc.Encode(&rows[i]); err != nil {
			return err
		}
	}
	return nil
}

const tableHeader = "TIME\tVERDICT\tCAPABILITY\tACTION\tRESOURCE\tTIER\tRULE\tTRACE"

func writeHeader(w io.Writer) { fmt.Fprintln(w, strings.ReplaceAll(tableHeader, "\t", "  ")) }

// writeRows writes rows as `audit tail` shows them at a terminal, one line
// each as they come, the verdict coloured when colour is on.
func writeRows(w io.Writer, rows []warden.AuditEntry, colour bool) error {
	for i := range rows {
		cells := auditCells(&rows[i])
		cells[1] = paintVerdict(cells[1], colour)
		if _, err := fmt.Fprintln(w, strings.Join(cells, "  ")); err != nil {
			return err
		}
	}
	return nil
}

// cell shortens s to n runes, "…" included, for a table cell, on one line.
func cell(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return clip.String(s, n-1)
}
