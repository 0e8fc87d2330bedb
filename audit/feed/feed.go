// Package feed is the daemon's in-memory live audit feed: the most recent
// decisions and security events, as one stream of Items, for the web console's
// list and its server-sent events.
//
// It holds only a recent window (by default the last 5,000 items; when full it
// drops the oldest half). The audit store keeps everything; read history from
// there. A Feed never blocks the gate: a subscriber that falls behind is
// dropped, not waited for.
//
// To follow the feed without a gap, Subscribe first, then List with AfterSeq
// and skip streamed items whose Seq the list already returned.
package feed

import (
	"encoding/json"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/agentwarden/warden"
)

// DefaultCapacity is the number of items a Feed holds when New is given 0.
const DefaultCapacity = 5000

// DefaultLimit and MaxLimit bound how many items List returns.
const (
	DefaultLimit = 100
	MaxLimit     = 5000
)

// DefaultBuffer is a subscriber's channel buffer when Subscribe is given 0.
const DefaultBuffer = 256

// maxSummary is the most runes of a summary.
const maxSummary = 300

// Kinds of item.
const (
	KindDecision = "decision"
	KindEvent    = "event"
)

// Item is one decision or security event in the feed.
type Item struct {
	Seq      int64           `json:"seq"`                // assigned by Feed.Add, increasing from 1
	Kind     string          `json:"kind"`               // KindDecision or KindEvent
	Type     string          `json:"type"`               // a decision's verdict (allow, deny, ask, sandbox), an event's type
	Severity string          `json:"severity"`           // info, warn, error or critical
	TimeMs   int64           `json:"time_ms"`            // unix milliseconds
	TraceID  string          `json:"trace_id,omitempty"` // links a decision to its events
	Summary  string          `json:"summary"`            // one line
	Data     json.RawMessage `json:"data,omitempty"`     // the entry or event as JSON; shared, do not modify
}

// FromEntry returns the item for an audit entry, summarised like
// "deny shell exec: rm -rf / (shell.destructive)". Allow, sandbox and ask are
// info; deny (and a verdict not understood, which the gate treats as deny) is a
// warning. Data is e as JSON, or empty if e does not encode.
func FromEntry(e *warden.AuditEntry) Item {
	sev := warden.SevWarn
	switch e.Verdict {
	case warden.Allow, warden.Sandbox, warden.Ask:
		sev = warden.SevInfo
	}
	var b strings.Builder
	b.WriteString(e.Verdict.String())
	for _, w := range []string{e.Capability, e.Action} {
		if w != "" {
			b.WriteByte(' ')
			b.WriteString(w)
		}
	}
	if e.Resource != "" {
		b.WriteString(": ")
		b.WriteString(e.Resource)
	}
	if e.Rule != "" {
		b.WriteString(" (")
		b.WriteString(e.Rule)
		b.WriteByte(')')
	}
	return Item{
		Kind:     KindDecision,
		Type:     e.Verdict.String(),
		Severity: string(sev),
		TimeMs:   unixMilli(e.CreatedAt),
		TraceID:  e.TraceID,
		Summary:  oneLine(b.String()),
		Data:     marshal(e),
	}
}

// FromEvent returns the item for a security event, with the event's type,
// severity and summary. Data is ev as JSON, or empty if ev does not encode.
func FromEvent(ev *warden.SecurityEvent) Item {
	return Item{
		Kind:     KindEvent,
		Type:     ev.Type,
		Severity: string(ev.Severity),
		TimeMs:   unixMilli(ev.CreatedAt),
		TraceID:  ev.TraceID,
		Summary:  oneLine(ev.Summary),
		Data:     marshal(ev),
	}
}

func unixMilli(t time.Time) int64 {
	if t.IsZero() {
		return 0 // Add fills it in
	}
	return t.UnixMilli()
}

func marshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// oneLine replaces control characters (newlines included) with spaces and cuts
// s to maxSummary runes.
func oneLine(s string) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == maxSummary {
			b.WriteString("…")
			break
		}
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			r = ' '
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// severityRank orders severities; an unknown severity ranks above critical, so
// a minimum never hides an item whose severity is not understood.
func severityRank(s string) int {
	switch warden.Severity(s) {
	case warden.SevInfo:
		return 0
	case warden.SevWarn:
		return 1
	case warden.SevError:
		return 2
	case warden.SevCritical:
		return 3
	}
	return 4
}

// Feed is the recent window of items. Use New; a Feed is safe for concurrent
// use.
type Feed struct {
	capacity int
	now      func() time.Time

	mu    sync.Mutex
	items []Item // oldest first, Seq increasing
	seq   int64
	subs  map[*subscriber]struct{}
}

type subscriber struct {
	ch chan Item
}

// New returns an empty feed holding up to capacity items; capacity ≤ 0 means
// DefaultCapacity. Adding to a full feed first drops its oldest half.
func New(capacity int) *Feed {
	if capacity <= 0 {
		capacity = DefaultCapacity
	}
	return &Feed{
		capacity: capacity,
		now:      time.Now,
		items:    make([]Item, 0, min(capacity, 1024)),
		subs:     make(map[*subscriber]struct{}),
	}
}

// Add stores it with the next Seq (and the current time if TimeMs is zero),
// sends it to every subscriber, and returns it as stored. It never blocks on a
// subscriber: one whose buffer is full is dropped and its channel closed.
func (f *Feed) Add(it Item) Item {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	it.Seq = f.seq
	if it.TimeMs == 0 {
		it.TimeMs = f.now().UnixMilli()
	}
	if len(f.items) >= f.capacity {
		drop := len(f.items) - len(f.items)/2
		n := copy(f.items, f.items[drop:])
		clear(f.items[n:]) // let dropped Data be collected
		f.items = f.items[:n]
	}
	f.items = append(f.items, it)
	for s := range f.subs {
		select {
		case s.ch <- it:
		default:
			delete(f.subs, s)
			close(s.ch)
		}
	}
	return it
}

// Filter selects items for List. Zero fields do not filter.
type Filter struct {
	Type     string // only items of this Type
	Severity string // only items of at least this severity (info < warn < error < critical); an unknown value filters nothing
	SinceMs  int64  // only items with TimeMs ≥ SinceMs
	AfterSeq int64  // only items with Seq > AfterSeq
	Limit    int    // the newest Limit matching items; ≤ 0 means DefaultLimit, at most MaxLimit
}

// Match reports whether it passes every field of flt but Limit; use it on
// items from Subscribe.
func (flt Filter) Match(it Item) bool {
	return it.Seq > flt.AfterSeq && flt.matchFields(&it, flt.minSeverity())
}

func (flt Filter) minSeverity() int {
	if r := severityRank(flt.Severity); r <= 3 {
		return r
	}
	return 0
}

func (flt Filter) matchFields(it *Item, minSev int) bool {
	return (flt.Type == "" || it.Type == flt.Type) &&
		severityRank(it.Severity) >= minSev &&
		it.TimeMs >= flt.SinceMs
}

// List returns the newest flt.Limit items that match flt, oldest first. It
// never returns nil.
func (f *Feed) List(flt Filter) []Item {
	limit := flt.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	minSev := flt.minSeverity()

	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Item, 0, min(limit, len(f.items)))
	for i := len(f.items) - 1; i >= 0 && len(out) < limit; i-- {
		it := &f.items[i]
		if it.Seq <= flt.AfterSeq {
			break // Seq only decreases from here
		}
		if flt.matchFields(it, minSev) {
			out = append(out, *it)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// Subscribe returns a channel that receives every item added from now on, in
// Seq order, and a cancel func that stops it and closes the channel; cancel may
// be called any number of times. buffer ≤ 0 means DefaultBuffer. If the
// channel's buffer fills up, the subscriber is dropped: the channel is closed
// early, and the reader should List from its last Seq and subscribe again.
func (f *Feed) Subscribe(buffer int) (ch <-chan Item, cancel func()) {
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	s := &subscriber{ch: make(chan Item, buffer)}
	f.mu.Lock()
	f.subs[s] = struct{}{}
	f.mu.Unlock()
	return s.ch, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if _, ok := f.subs[s]; ok {
			delete(f.subs, s)
			close(s.ch)
		}
	}
}

// Len returns the number of items held.
func (f *Feed) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.items)
}
