package egress

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/netguard"
)

// marshalled is the request log as it was built before meta and summary
// wrote it directly: a map through json.Marshal, and fmt.
func marshalled(p *Proxy, e *entry, host string, port uint16, ms int64) (json.RawMessage, string) {
	m := map[string]any{
		"trace_id":   e.v.TraceID,
		"agent":      p.Identity.Agent,
		"session":    p.Identity.Session,
		"method":     e.method,
		"host":       host,
		"port":       port,
		"path_hash":  p.pathHash(e.target.Path),
		"status":     e.status,
		"bytes_up":   e.up.Load(),
		"bytes_down": e.down.Load(),
		"verdict":    e.v.Verdict.String(),
		"rule":       e.v.Rule,
		"ms":         ms,
	}
	if e.v.pinned.IsValid() {
		m["address"] = e.v.pinned.String()
	}
	if e.note != "" {
		m["note"] = e.note
	}
	b, _ := json.Marshal(m)
	return b, fmt.Sprintf("%s %s:%d %s, status %d, %d bytes up, %d down", e.method, host, port, e.v.Verdict, e.status, e.up.Load(), e.down.Load())
}

func checkRequestLog(t *testing.T, host, note, agent, path string, pinned bool, status int, up, down int64) {
	t.Helper()
	p := &Proxy{Identity: Identity{Agent: agent, Session: "egress-1"}}
	p.init()
	e := &entry{start: time.Now().Add(time.Hour), method: "GET", note: note, status: status}
	e.target = netguard.Target{Host: host, Port: 8080, Path: path}
	e.v.Verdict, e.v.Rule, e.v.TraceID = warden.Allow, "network.allowed", "0193a2b4-0001-7abc-8def-000000000001"
	if pinned {
		e.v.pinned = netip.MustParseAddrPort("127.0.0.1:8080")
	}
	e.up.Store(up)
	e.down.Store(down)
	// start is in the future: ms is negative and the same in both.
	ms := time.Since(e.start).Milliseconds()
	wantMeta, wantSummary := marshalled(p, e, host, 8080, ms)
	if got := e.meta(p, host, 8080, up, down); !bytes.Equal(got, wantMeta) && !sameButMS(got, wantMeta) {
		t.Errorf("meta = %s, want %s", got, wantMeta)
	}
	if got := e.summary(host, 8080, up, down); got != wantSummary {
		t.Errorf("summary = %q, want %q", got, wantSummary)
	}
}

// sameButMS reports whether a and b differ only in "ms" (a millisecond may
// pass between the two encodings).
func sameButMS(a, b []byte) bool {
	var x, y map[string]any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	delete(x, "ms")
	delete(y, "ms")
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// TestRequestLogMetaIsMarshalled: the request log's metadata and summary,
// written directly, are byte for byte what json.Marshal of a map and fmt
// made of them, for text that needs escaping too.
func TestRequestLogMetaIsMarshalled(t *testing.T) {
	cases := []struct {
		name, host, note, agent, path string
		pinned                        bool
		status                        int
		up, down                      int64
	}{
		{name: "plain", host: "example.com", agent: "agent", path: "/a", pinned: true, status: 200, down: 16},
		{name: "no path, no address", host: "example.com", agent: "sandbox", status: 403},
		{name: "note with quotes", host: "example.com", note: `dial tcp: "refused" \ <x> & y`, agent: "agent", status: 502},
		{name: "control and unicode", host: "ex\x01ample.com", note: "naïve\u2028line\nnext", agent: "skill:ünï", status: 200, up: 1 << 40},
		{name: "invalid utf-8", host: "a\xffb", note: "\xc3", agent: "a", status: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkRequestLog(t, c.host, c.note, c.agent, c.path, c.pinned, c.status, c.up, c.down)
		})
	}
}

func FuzzRequestLogMeta(f *testing.F) {
	f.Add("example.com", "", "agent", "/", 200, int64(0), int64(16))
	f.Add("a\"b", "x\\y<z>&", "sk\x00ill", "/p?q", 502, int64(-1), int64(1<<62))
	f.Fuzz(func(t *testing.T, host, note, agent, path string, status int, up, down int64) {
		checkRequestLog(t, host, note, agent, path, true, status, up, down)
	})
}

// queuedEvent is one event a test's Queue took.
type queuedEvent struct {
	sev     warden.Severity
	summary string
	meta    json.RawMessage
}

// groupingProxy is a proxy whose request log goes to the returned channel,
// gathering lines for delay.
func groupingProxy(delay time.Duration) (*Proxy, chan queuedEvent) {
	got := make(chan queuedEvent, 4*maxLogGroup)
	p := &Proxy{Queue: func(_ context.Context, typ string, sev warden.Severity, summary string, meta json.RawMessage) func() error {
		if typ != warden.EventEgressRequest {
			panic("queued a " + typ + " event")
		}
		got <- queuedEvent{sev, summary, meta}
		return func() error { return nil }
	}}
	p.init()
	p.logs.delay = delay
	return p, got
}

func line(i int, sev warden.Severity) logLine {
	return logLine{sev: sev, summary: fmt.Sprintf("GET example.com:80 allow, status 200, 0 bytes up, %d down", i), meta: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}
}

// lines returns the request-log lines an event carries: itself when it is
// one line, else each under "requests".
func lines(t *testing.T, ev queuedEvent) []map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(ev.meta, &m); err != nil {
		t.Fatalf("event meta %s: %v", ev.meta, err)
	}
	rs, ok := m["requests"].([]any)
	if !ok {
		return []map[string]any{m}
	}
	out := make([]map[string]any, len(rs))
	for i, r := range rs {
		out[i] = r.(map[string]any)
	}
	return out
}

// TestRequestLogGroups: answered requests' lines are written as one event
// for a group, in order, cut at maxLogGroup lines; a group of one is the
// line itself; Close writes what is gathered, and a line after Close is
// written at once.
func TestRequestLogGroups(t *testing.T) {
	p, got := groupingProxy(time.Hour) // only the cut and Close write
	for i := range maxLogGroup + 2 {
		p.group(line(i, warden.SevInfo))
	}
	ev := <-got
	ls := lines(t, ev)
	if len(ls) != maxLogGroup {
		t.Fatalf("the first group has %d lines, want %d", len(ls), maxLogGroup)
	}
	for i, l := range ls {
		if l["n"] != float64(i) {
			t.Fatalf("line %d of the group is %v, want n=%d (in order)", i, l, i)
		}
	}
	if want := fmt.Sprintf("%d requests: GET example.com:80 allow, status 200, 0 bytes up, 0 down; …", maxLogGroup); ev.summary != want || ev.sev != warden.SevInfo {
		t.Errorf("group = %s %q, want info %q", ev.sev, ev.summary, want)
	}
	select {
	case ev := <-got:
		t.Fatalf("a group of %d lines was written before the delay or Close", len(lines(t, ev)))
	default:
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if ls := lines(t, <-got); len(ls) != 2 || ls[0]["n"] != float64(maxLogGroup) || ls[1]["n"] != float64(maxLogGroup+1) {
		t.Fatalf("Close wrote %v, want the two lines gathered", ls)
	}
	p.group(line(7, warden.SevWarn))
	select {
	case ev := <-got:
		if string(ev.meta) != `{"n":7}` || ev.sev != warden.SevWarn || ev.summary != line(7, warden.SevInfo).summary {
			t.Errorf("a line after Close = %s %q %s, want the line itself", ev.sev, ev.summary, ev.meta)
		}
	default:
		t.Fatal("a line after Close was not written at once")
	}
}

// TestRequestLogGroupWaitsAtMostTheDelay: a line is written within the
// delay without any other line or Close, and a group with a line that is
// not allowed warns and says how many.
func TestRequestLogGroupWaitsAtMostTheDelay(t *testing.T) {
	p, got := groupingProxy(0) // logGroupDelay
	defer p.Close()
	start := time.Now()
	p.group(line(1, warden.SevInfo))
	select {
	case ev := <-got:
		if string(ev.meta) != `{"n":1}` {
			t.Errorf("a lone line was written as %s, want itself", ev.meta)
		}
		if took := time.Since(start); took < logGroupDelay {
			t.Errorf("a lone line was written after %v, before the group's delay %v", took, logGroupDelay)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a lone line was never written")
	}
	sev, summary, meta := groupEvent([]logLine{line(1, warden.SevInfo), line(2, warden.SevWarn), line(3, warden.SevInfo)})
	if sev != warden.SevWarn || summary != "3 requests (1 not allowed): "+line(1, warden.SevInfo).summary+"; …" || string(meta) != `{"requests":[{"n":1},{"n":2},{"n":3}]}` {
		t.Errorf("groupEvent = %s %q %s", sev, summary, meta)
	}
}

// TestCloseWaitsForAGroupBeingWritten: a group that the delay's timer has
// taken from the gathered lines, but not yet queued, when Close runs is
// still stored before Close returns (Close returned without it, and the
// caller then closed the store under it).
func TestCloseWaitsForAGroupBeingWritten(t *testing.T) {
	for round := range 20 {
		p, got := groupingProxy(time.Millisecond)
		// Holding the proxy's lock stops the timer's write between taking
		// the lines and counting the group in.
		p.mu.Lock()
		p.group(line(round, warden.SevInfo))
		for deadline := time.Now().Add(5 * time.Second); ; {
			p.logs.mu.Lock()
			taken := len(p.logs.lines) == 0 && !p.logs.armed
			p.logs.mu.Unlock()
			if taken {
				break
			}
			if time.Now().After(deadline) {
				p.mu.Unlock()
				t.Fatal("the group's timer never took the line")
			}
			time.Sleep(100 * time.Microsecond)
		}
		p.mu.Unlock()
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-got:
			if string(ev.meta) != string(line(round, warden.SevInfo).meta) {
				t.Fatalf("round %d: stored %s, want the line", round, ev.meta)
			}
		default:
			t.Fatalf("round %d: Close returned before the group its timer had taken was queued", round)
		}
	}
}
