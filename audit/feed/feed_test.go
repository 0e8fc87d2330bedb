package feed_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit/feed"
)

func seqs(items []feed.Item) []int64 {
	out := make([]int64, len(items))
	for i, it := range items {
		out[i] = it.Seq
	}
	return out
}

// seqRange returns from, from+1, …, to.
func seqRange(from, to int64) []int64 {
	var out []int64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

func TestTrimToHalf(t *testing.T) {
	f := feed.New(0)
	for i := range 5000 {
		f.Add(feed.Item{Kind: feed.KindEvent, Type: "t", Severity: "info", TimeMs: int64(i + 1)})
	}
	if f.Len() != 5000 {
		t.Fatalf("Len after 5000 adds = %d, want 5000", f.Len())
	}
	if got := f.List(feed.Filter{Limit: feed.MaxLimit}); got[0].Seq != 1 || got[len(got)-1].Seq != 5000 {
		t.Fatalf("List = seq %d…%d, want 1…5000", got[0].Seq, got[len(got)-1].Seq)
	}

	if it := f.Add(feed.Item{Type: "t"}); it.Seq != 5001 {
		t.Errorf("Add #5001 got Seq %d", it.Seq)
	}
	if f.Len() != 2501 {
		t.Fatalf("Len after the 5001st add = %d, want 2501", f.Len())
	}
	if got := seqs(f.List(feed.Filter{Limit: feed.MaxLimit})); !slices.Equal(got, seqRange(2501, 5001)) {
		t.Errorf("after trimming, List = seq %d…%d (%d items), want 2501…5001", got[0], got[len(got)-1], len(got))
	}

	for range 2499 {
		f.Add(feed.Item{Type: "t"})
	}
	if f.Len() != 5000 {
		t.Fatalf("Len = %d, want 5000", f.Len())
	}
	if it := f.Add(feed.Item{Type: "t"}); it.Seq != 7501 || f.Len() != 2501 {
		t.Errorf("second trim: Seq %d, Len %d; want 7501, 2501", it.Seq, f.Len())
	}
}

func TestTrimSmallCapacity(t *testing.T) {
	tests := []struct {
		capacity, adds int
		want           []int64
	}{
		{capacity: 1, adds: 3, want: []int64{3}},
		{capacity: 2, adds: 3, want: []int64{2, 3}},
		{capacity: 5, adds: 5, want: []int64{1, 2, 3, 4, 5}},
		{capacity: 5, adds: 6, want: []int64{4, 5, 6}},
		{capacity: 4, adds: 5, want: []int64{3, 4, 5}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("capacity %d adds %d", tt.capacity, tt.adds), func(t *testing.T) {
			f := feed.New(tt.capacity)
			for range tt.adds {
				f.Add(feed.Item{})
			}
			if got := seqs(f.List(feed.Filter{})); !slices.Equal(got, tt.want) {
				t.Errorf("List = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAddSetsTime(t *testing.T) {
	f := feed.New(0)
	before := time.Now().UnixMilli()
	it := f.Add(feed.Item{Type: "t"})
	after := time.Now().UnixMilli()
	if it.TimeMs < before || it.TimeMs > after {
		t.Errorf("Add set TimeMs %d, want between %d and %d", it.TimeMs, before, after)
	}
	if it := f.Add(feed.Item{TimeMs: 42}); it.TimeMs != 42 {
		t.Errorf("Add changed TimeMs 42 to %d", it.TimeMs)
	}
}

func TestList(t *testing.T) {
	f := feed.New(0)
	for _, it := range []feed.Item{ // the comment is the Seq Add assigns
		{Type: "allow", Severity: "info", TimeMs: 1000},              // 1
		{Type: "deny", Severity: "warn", TimeMs: 2000},               // 2
		{Type: "kill_switch_on", Severity: "critical", TimeMs: 3000}, // 3
		{Type: "deny", Severity: "warn", TimeMs: 4000},               // 4
		{Type: "config_invalid", Severity: "error", TimeMs: 5000},    // 5
		{Type: "allow", Severity: "info", TimeMs: 6000},              // 6
		{Type: "odd", Severity: "bogus", TimeMs: 7000},               // 7: unknown severity
		{Type: "ask", Severity: "info", TimeMs: 3500},                // 8: out of time order
	} {
		f.Add(it)
	}
	tests := []struct {
		name string
		flt  feed.Filter
		want []int64
	}{
		{"everything", feed.Filter{}, seqRange(1, 8)},
		{"type", feed.Filter{Type: "deny"}, []int64{2, 4}},
		{"unknown type", feed.Filter{Type: "nope"}, []int64{}},
		{"severity info", feed.Filter{Severity: "info"}, seqRange(1, 8)},
		{"severity warn", feed.Filter{Severity: "warn"}, []int64{2, 3, 4, 5, 7}},
		{"severity error", feed.Filter{Severity: "error"}, []int64{3, 5, 7}},
		{"severity critical", feed.Filter{Severity: "critical"}, []int64{3, 7}},
		{"unknown severity filters nothing", feed.Filter{Severity: "loud"}, seqRange(1, 8)},
		{"since", feed.Filter{SinceMs: 4000}, []int64{4, 5, 6, 7}},
		{"since, inclusive", feed.Filter{SinceMs: 3500}, []int64{4, 5, 6, 7, 8}},
		{"after seq", feed.Filter{AfterSeq: 5}, []int64{6, 7, 8}},
		{"after the last seq", feed.Filter{AfterSeq: 8}, []int64{}},
		{"limit keeps the newest", feed.Filter{Limit: 3}, []int64{6, 7, 8}},
		{"limit after filtering", feed.Filter{Type: "deny", Limit: 1}, []int64{4}},
		{"limit with after seq", feed.Filter{AfterSeq: 2, Limit: 2}, []int64{7, 8}},
		{"combined", feed.Filter{Severity: "warn", SinceMs: 3000, AfterSeq: 3}, []int64{4, 5, 7}},
		{"negative limit means default", feed.Filter{Limit: -1}, seqRange(1, 8)},
	}
	all := f.List(feed.Filter{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := f.List(tt.flt)
			if got == nil {
				t.Fatalf("List(%+v) = nil, want a non-nil slice", tt.flt)
			}
			if s := seqs(got); !slices.Equal(s, tt.want) {
				t.Errorf("List(%+v) = %v, want %v", tt.flt, s, tt.want)
			}
			if tt.flt.Limit != 0 {
				return
			}
			var matched []int64
			for _, it := range all {
				if tt.flt.Match(it) {
					matched = append(matched, it.Seq)
				}
			}
			if !slices.Equal(matched, tt.want) && len(matched)+len(tt.want) > 0 {
				t.Errorf("Match(%+v) selects %v, want %v as List does", tt.flt, matched, tt.want)
			}
		})
	}
}

func TestListLimits(t *testing.T) {
	f := feed.New(0)
	for range 5000 {
		f.Add(feed.Item{Type: "t"})
	}
	tests := []struct {
		limit int
		want  []int64
	}{
		{0, seqRange(4901, 5000)},
		{1, []int64{5000}},
		{5000, seqRange(1, 5000)},
		{1 << 30, seqRange(1, 5000)},
	}
	for _, tt := range tests {
		if got := seqs(f.List(feed.Filter{Limit: tt.limit})); !slices.Equal(got, tt.want) {
			t.Errorf("List(Limit: %d) = %d items, want %d", tt.limit, len(got), len(tt.want))
		}
	}
	g := feed.New(6000)
	for range 6000 {
		g.Add(feed.Item{})
	}
	if got := g.List(feed.Filter{Limit: 6000}); len(got) != feed.MaxLimit || got[0].Seq != 1001 {
		t.Errorf("List(Limit: 6000) = %d items from seq %d, want %d from 1001", len(got), got[0].Seq, feed.MaxLimit)
	}
}

func TestListReturnsCopies(t *testing.T) {
	f := feed.New(0)
	f.Add(feed.Item{Type: "deny", Summary: "x"})
	got := f.List(feed.Filter{})
	got[0].Type = "allow"
	if again := f.List(feed.Filter{}); again[0].Type != "deny" {
		t.Errorf("changing a listed item changed the feed: Type = %q", again[0].Type)
	}
}

func TestFromEntry(t *testing.T) {
	created := time.UnixMilli(1_700_000_000_123).UTC()
	tests := []struct {
		name         string
		entry        warden.AuditEntry
		wantType     string
		wantSeverity string
		wantSummary  string
	}{
		{
			name:         "deny",
			entry:        warden.AuditEntry{Verdict: warden.Deny, Capability: "shell", Action: "exec", Resource: "rm -rf /", Rule: "shell.destructive"},
			wantType:     "deny",
			wantSeverity: "warn",
			wantSummary:  "deny shell exec: rm -rf / (shell.destructive)",
		},
		{
			name:         "allow",
			entry:        warden.AuditEntry{Verdict: warden.Allow, Capability: "fs", Action: "read", Resource: "/src/main.go", Rule: "fs.read"},
			wantType:     "allow",
			wantSeverity: "info",
			wantSummary:  "allow fs read: /src/main.go (fs.read)",
		},
		{
			name:         "ask",
			entry:        warden.AuditEntry{Verdict: warden.Ask, Capability: "net", Action: "fetch", Resource: "example.com"},
			wantType:     "ask",
			wantSeverity: "info",
			wantSummary:  "ask net fetch: example.com",
		},
		{
			name:         "sandbox",
			entry:        warden.AuditEntry{Verdict: warden.Sandbox, Capability: "shell", Action: "exec", Rule: "shell.sandbox"},
			wantType:     "sandbox",
			wantSeverity: "info",
			wantSummary:  "sandbox shell exec (shell.sandbox)",
		},
		{
			name:         "multi-line resource",
			entry:        warden.AuditEntry{Verdict: warden.Deny, Capability: "shell", Action: "exec", Resource: "echo a\nrm -rf /\r\t", Rule: "r"},
			wantType:     "deny",
			wantSeverity: "warn",
			wantSummary:  "deny shell exec: echo a rm -rf /   (r)",
		},
		{
			name:         "empty",
			entry:        warden.AuditEntry{},
			wantType:     "deny",
			wantSeverity: "warn",
			wantSummary:  "deny",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.entry
			e.ID, e.TraceID, e.CreatedAt, e.Tier = "a1", "tr-1", created, warden.TierReadOnly
			it := feed.FromEntry(&e)
			if it.Kind != feed.KindDecision || it.Type != tt.wantType || it.Severity != tt.wantSeverity {
				t.Errorf("FromEntry = kind %q type %q severity %q, want decision %q %q", it.Kind, it.Type, it.Severity, tt.wantType, tt.wantSeverity)
			}
			if it.Summary != tt.wantSummary {
				t.Errorf("Summary = %q, want %q", it.Summary, tt.wantSummary)
			}
			if it.TimeMs != 1_700_000_000_123 || it.TraceID != "tr-1" || it.Seq != 0 {
				t.Errorf("FromEntry = time %d trace %q seq %d, want 1700000000123 tr-1 0", it.TimeMs, it.TraceID, it.Seq)
			}
			var back warden.AuditEntry
			if err := json.Unmarshal(it.Data, &back); err != nil {
				t.Fatalf("Data does not decode: %v", err)
			}
			if back.ID != "a1" || back.Verdict != e.Verdict || back.Resource != e.Resource {
				t.Errorf("Data decodes to %+v, want the entry", back)
			}
		})
	}
}

func TestFromEntryLongResource(t *testing.T) {
	e := warden.AuditEntry{Verdict: warden.Deny, Capability: "shell", Action: "exec", Resource: strings.Repeat("é", 1000)}
	it := feed.FromEntry(&e)
	if n := len([]rune(it.Summary)); n > 301 || !strings.HasSuffix(it.Summary, "…") {
		t.Errorf("summary of a long resource has %d runes, ends %q; want at most 301 ending in …", n, it.Summary[len(it.Summary)-6:])
	}
}

func TestFromEntryUnknownVerdict(t *testing.T) {
	it := feed.FromEntry(&warden.AuditEntry{Verdict: warden.Verdict(9), Tier: warden.TierReadOnly})
	if it.Severity != "warn" || it.Data != nil {
		t.Errorf("FromEntry(verdict 9) = severity %q, data %s; want warn and no data (it does not encode)", it.Severity, it.Data)
	}
}

func TestFromEntryZeroTime(t *testing.T) {
	f := feed.New(0)
	it := f.Add(feed.FromEntry(&warden.AuditEntry{Verdict: warden.Allow}))
	if it.TimeMs <= 0 {
		t.Errorf("an entry without CreatedAt got TimeMs %d, want now", it.TimeMs)
	}
}

func TestFromEvent(t *testing.T) {
	ev := warden.SecurityEvent{
		ID:        "e1",
		TraceID:   "tr-2",
		CreatedAt: time.UnixMilli(1_700_000_000_456),
		Type:      warden.EventKillSwitchOn,
		Severity:  warden.SevCritical,
		Summary:   "kill switch on\nby operator",
		Metadata:  json.RawMessage(`{"by":"operator"}`),
	}
	it := feed.FromEvent(&ev)
	want := feed.Item{
		Kind:     feed.KindEvent,
		Type:     "kill_switch_on",
		Severity: "critical",
		TimeMs:   1_700_000_000_456,
		TraceID:  "tr-2",
		Summary:  "kill switch on by operator",
	}
	data := it.Data
	it.Data = nil
	if fmt.Sprint(it) != fmt.Sprint(want) {
		t.Errorf("FromEvent = %+v, want %+v", it, want)
	}
	var back warden.SecurityEvent
	if err := json.Unmarshal(data, &back); err != nil || back.ID != "e1" || string(back.Metadata) != `{"by":"operator"}` {
		t.Errorf("Data = %s (%v), want the event", data, err)
	}
}

func TestItemJSON(t *testing.T) {
	it := feed.Item{Seq: 7, Kind: "event", Type: "t", Severity: "warn", TimeMs: 5, Summary: "s"}
	b, err := json.Marshal(it)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"seq":7,"kind":"event","type":"t","severity":"warn","time_ms":5,"summary":"s"}`
	if string(b) != want {
		t.Errorf("json = %s, want %s", b, want)
	}
}

func TestSubscribeInOrder(t *testing.T) {
	f := feed.New(0)
	f.Add(feed.Item{Type: "before"})
	ch, cancel := f.Subscribe(100)
	defer cancel()
	for i := range 50 {
		f.Add(feed.Item{Type: fmt.Sprint(i)})
	}
	for i := range 50 {
		it := <-ch
		if it.Seq != int64(i+2) || it.Type != fmt.Sprint(i) {
			t.Fatalf("item %d = seq %d type %q, want seq %d type %q", i, it.Seq, it.Type, i+2, fmt.Sprint(i))
		}
	}
	select {
	case it := <-ch:
		t.Errorf("unexpected item %+v", it)
	default:
	}
}

func TestSlowSubscriberDropped(t *testing.T) {
	f := feed.New(0)
	slow, cancelSlow := f.Subscribe(2)
	defer cancelSlow()
	fast, cancelFast := f.Subscribe(1000)
	defer cancelFast()

	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			f.Add(feed.Item{Type: "t"})
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Add blocked on a subscriber that does not read")
	}

	var got []int64
	for it := range slow {
		got = append(got, it.Seq)
	}
	if !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("slow subscriber got %v then its channel closed, want [1 2]", got)
	}
	for i := range 100 {
		if it := <-fast; it.Seq != int64(i+1) {
			t.Fatalf("fast subscriber item %d = seq %d", i, it.Seq)
		}
	}
	cancelSlow() // after being dropped: no panic
}

func TestCancelIdempotent(t *testing.T) {
	f := feed.New(0)
	ch, cancel := f.Subscribe(0)
	cancel()
	cancel()
	if _, ok := <-ch; ok {
		t.Error("channel open after cancel")
	}
	f.Add(feed.Item{}) // must not send on the closed channel
}

func TestConcurrent(t *testing.T) {
	f := feed.New(500)
	var wg, writing sync.WaitGroup
	const writers, perWriter = 8, 1000
	for w := range writers {
		writing.Go(func() {
			for i := range perWriter {
				f.Add(feed.Item{Type: fmt.Sprint(w), Severity: []string{"info", "warn", "error"}[i%3]})
			}
		})
	}
	stop := make(chan struct{})
	go func() { writing.Wait(); close(stop) }()
	for range 4 {
		wg.Go(func() {
			for range 200 {
				got := f.List(feed.Filter{Severity: "warn", Limit: 50})
				if !slices.IsSortedFunc(got, func(a, b feed.Item) int { return int(a.Seq - b.Seq) }) {
					t.Error("List out of order")
					return
				}
				f.Len()
			}
		})
	}
	for range 4 {
		wg.Go(func() {
			for range 20 {
				ch, cancel := f.Subscribe(8)
				last := int64(0)
			read:
				for range 5 {
					select {
					case it, ok := <-ch:
						if !ok {
							break read // dropped for being slow
						}
						if it.Seq <= last {
							t.Errorf("subscriber got seq %d after %d", it.Seq, last)
						}
						last = it.Seq
					case <-stop:
						break read
					}
				}
				cancel()
			}
		})
	}
	writing.Wait()
	wg.Wait()
	if it := f.Add(feed.Item{}); it.Seq != writers*perWriter+1 {
		t.Errorf("after %d adds the next Seq is %d", writers*perWriter, it.Seq)
	}
}

func BenchmarkAdd(b *testing.B) {
	e := warden.AuditEntry{ID: "a1", TraceID: "tr", Verdict: warden.Deny, Capability: "shell", Action: "exec", Resource: "rm -rf /", Rule: "shell.destructive"}
	it := feed.FromEntry(&e)
	for _, subs := range []int{0, 10} {
		b.Run(fmt.Sprintf("%d subscribers", subs), func(b *testing.B) {
			f := feed.New(0)
			var wg sync.WaitGroup
			var cancels []func()
			for range subs {
				ch, cancel := f.Subscribe(1 << 16)
				cancels = append(cancels, cancel)
				wg.Go(func() {
					for range ch {
					}
				})
			}
			for b.Loop() {
				f.Add(it)
			}
			for _, c := range cancels {
				c()
			}
			wg.Wait()
		})
	}
}

func BenchmarkFromEntry(b *testing.B) {
	e := warden.AuditEntry{ID: "a1", TraceID: "tr", Verdict: warden.Deny, Capability: "shell", Action: "exec", Resource: "rm -rf /", Rule: "shell.destructive"}
	for b.Loop() {
		feed.FromEntry(&e)
	}
}
