package audit

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

func TestNormalizeEntry(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 123_456_789, time.Local)
	e := warden.AuditEntry{Output: strings.Repeat("x", 5000), Args: json.RawMessage{}, Raw: json.RawMessage(`{"a":1}`)}
	if err := NormalizeEntry(&e, now); err != nil {
		t.Fatal(err)
	}
	if !e.CreatedAt.Equal(now.Truncate(time.Millisecond)) || e.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt = %v, want %v in UTC", e.CreatedAt, now.Truncate(time.Millisecond))
	}
	if len(e.Output) > warden.OutputLimit {
		t.Errorf("Output has %d bytes, want at most %d", len(e.Output), warden.OutputLimit)
	}
	if e.Args != nil || string(e.Raw) != `{"a":1}` {
		t.Errorf("Args = %q, Raw = %q; want nil and unchanged", e.Args, e.Raw)
	}

	given := time.Date(2024, 1, 2, 3, 4, 5, 6_999_999, time.UTC)
	e = warden.AuditEntry{CreatedAt: given}
	if err := NormalizeEntry(&e, now); err != nil {
		t.Fatal(err)
	}
	if !e.CreatedAt.Equal(given.Truncate(time.Millisecond)) {
		t.Errorf("CreatedAt = %v, want the given time at millisecond precision", e.CreatedAt)
	}
}

func TestNormalizeEntryRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    warden.AuditEntry
	}{
		{name: "bad verdict", e: warden.AuditEntry{Verdict: 9}},
		{name: "bad stage verdict", e: warden.AuditEntry{Stages: []warden.StageAnswer{{Stage: "x", Verdict: 7}}}},
		{name: "bad args", e: warden.AuditEntry{Args: json.RawMessage(`{`)}},
		{name: "bad raw", e: warden.AuditEntry{Raw: json.RawMessage(`nope`)}},
		{name: "bad result", e: warden.AuditEntry{Result: json.RawMessage(`[1,`)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.e
			if err := NormalizeEntry(&e, time.Now()); err == nil {
				t.Errorf("NormalizeEntry(%s) = nil, want an error", tc.name)
			}
			if !e.CreatedAt.IsZero() {
				t.Errorf("NormalizeEntry changed a refused entry")
			}
		})
	}
}

func TestNormalizeEvent(t *testing.T) {
	for _, tc := range []struct {
		name string
		ev   warden.SecurityEvent
		ok   bool
	}{
		{name: "ok", ev: warden.SecurityEvent{Type: "t", Severity: warden.SevWarn}, ok: true},
		{name: "no type", ev: warden.SecurityEvent{Severity: warden.SevWarn}},
		{name: "bad severity", ev: warden.SecurityEvent{Type: "t", Severity: "fatal"}},
		{name: "empty severity", ev: warden.SecurityEvent{Type: "t"}},
		{name: "bad metadata", ev: warden.SecurityEvent{Type: "t", Severity: warden.SevInfo, Metadata: json.RawMessage(`{`)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := tc.ev
			err := NormalizeEvent(&ev, time.Now())
			if (err == nil) != tc.ok {
				t.Errorf("NormalizeEvent(%s) = %v, want ok=%v", tc.name, err, tc.ok)
			}
		})
	}
}

func TestSeverityAtLeast(t *testing.T) {
	for _, tc := range []struct {
		min  warden.Severity
		want string
	}{
		{"", "info,warn,error,critical"},
		{warden.SevInfo, "info,warn,error,critical"},
		{warden.SevWarn, "warn,error,critical"},
		{warden.SevCritical, "critical"},
	} {
		got, err := SeverityAtLeast(tc.min)
		var names []string
		for _, s := range got {
			names = append(names, string(s))
		}
		if err != nil || strings.Join(names, ",") != tc.want {
			t.Errorf("SeverityAtLeast(%q) = %v, %v; want %s", tc.min, got, err, tc.want)
		}
	}
	if _, err := SeverityAtLeast("fatal"); err == nil {
		t.Errorf("SeverityAtLeast(%q) = nil error, want one", "fatal")
	}
}
