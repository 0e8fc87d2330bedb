package audit

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentwarden/warden"
)

// NormalizeEntry prepares e to be hashed and stored, the same way in every
// store: a zero CreatedAt becomes now; CreatedAt is reduced to Timestamp's
// precision; Output is cut by Truncate; empty JSON fields become nil; bytes of
// a stage answer's text that are not UTF-8 become U+FFFD (stores keep stage
// answers as JSON, which holds only UTF-8). It refuses
// (changing nothing) an entry whose verdicts are not valid or whose Args, Raw or
// Result are not valid JSON, because such a row could not be read back or
// queried as it was meant. It does not assign ID, Seq, PrevHash or Hash.
func NormalizeEntry(e *warden.AuditEntry, now time.Time) error {
	if !validVerdict(e.Verdict) {
		return fmt.Errorf("audit entry: invalid verdict %d", uint8(e.Verdict))
	}
	for i := range e.Stages {
		if !validVerdict(e.Stages[i].Verdict) {
			return fmt.Errorf("audit entry: stage %d (%q): invalid verdict %d", i, e.Stages[i].Stage, uint8(e.Stages[i].Verdict))
		}
	}
	for _, f := range []struct {
		name string
		v    json.RawMessage
	}{{"args", e.Args}, {"raw", e.Raw}, {"result", e.Result}} {
		if len(f.v) > 0 && !json.Valid(f.v) {
			return fmt.Errorf("audit entry: %s is not valid JSON", f.name)
		}
	}
	if e.CreatedAt.IsZero() {
		e.CreatedAt = now
	}
	e.CreatedAt = Timestamp(e.CreatedAt)
	e.Output = Truncate(e.Output)
	e.Args = nilIfEmpty(e.Args)
	e.Raw = nilIfEmpty(e.Raw)
	e.Result = nilIfEmpty(e.Result)
	for i := range e.Stages {
		a := &e.Stages[i]
		a.Stage, a.Reason, a.Rule, a.Error = validUTF8(a.Stage), validUTF8(a.Reason), validUTF8(a.Rule), validUTF8(a.Error)
	}
	return nil
}

// validUTF8 returns s with every byte that is not part of a UTF-8 sequence
// replaced by U+FFFD; a valid s is returned as it is, without copying.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// NormalizeEvent prepares ev to be hashed and stored as NormalizeEntry does for
// entries. It refuses (changing nothing) an event without a type, with a
// severity other than the four warden defines, or with Metadata that is not
// valid JSON. It does not assign ID, Seq, PrevHash or Hash.
func NormalizeEvent(ev *warden.SecurityEvent, now time.Time) error {
	if ev.Type == "" {
		return fmt.Errorf("security event: empty type")
	}
	if !ev.Severity.Valid() {
		return fmt.Errorf("security event %s: invalid severity %q (want info, warn, error or critical)", ev.Type, ev.Severity)
	}
	if len(ev.Metadata) > 0 && !json.Valid(ev.Metadata) {
		return fmt.Errorf("security event %s: metadata is not valid JSON", ev.Type)
	}
	if ev.CreatedAt.IsZero() {
		ev.CreatedAt = now
	}
	ev.CreatedAt = Timestamp(ev.CreatedAt)
	ev.Metadata = nilIfEmpty(ev.Metadata)
	return nil
}

// SeverityAtLeast returns the severities ranked at or above min, lowest first:
// the set an EventFilter.MinSeverity selects. An empty min selects all four; an
// unknown one is an error.
func SeverityAtLeast(min warden.Severity) ([]warden.Severity, error) {
	all := []warden.Severity{warden.SevInfo, warden.SevWarn, warden.SevError, warden.SevCritical}
	if min == "" {
		return all, nil
	}
	for i, s := range all {
		if s == min {
			return all[i:], nil
		}
	}
	return nil, fmt.Errorf("invalid minimum severity %q (want info, warn, error or critical)", min)
}

func validVerdict(v warden.Verdict) bool { return v <= warden.Ask }

func nilIfEmpty(m json.RawMessage) json.RawMessage {
	if len(m) == 0 {
		return nil
	}
	return m
}
