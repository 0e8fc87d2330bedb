package egress

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentwarden/warden"
)

// meta is the request log's metadata: the JSON object json.Marshal makes of
// a map of these keys (sorted, as it sorts them), written directly. Building
// the map and marshalling it cost more than the rest of the event
// (docs/benchmarks.md, issue 26); TestRequestLogMetaIsMarshalled holds the
// two byte for byte equal.
func (e *entry) meta(p *Proxy, host string, port uint16, up, down int64) json.RawMessage {
	b := make([]byte, 0, 320+len(host)+len(e.note)+len(p.Identity.Agent)+len(p.Identity.Session))
	b = append(b, '{')
	if e.v.pinned.IsValid() {
		b = appendKey(b, "address")
		b = appendJSONString(b, e.v.pinned.String())
		b = append(b, ',')
	}
	b = appendKey(b, "agent")
	b = appendJSONString(b, p.Identity.Agent)
	b = append(b, `,"bytes_down":`...)
	b = strconv.AppendInt(b, down, 10)
	b = append(b, `,"bytes_up":`...)
	b = strconv.AppendInt(b, up, 10)
	b = append(b, ',')
	b = appendKey(b, "host")
	b = appendJSONString(b, host)
	b = append(b, ',')
	b = appendKey(b, "method")
	b = appendJSONString(b, e.method)
	b = append(b, `,"ms":`...)
	b = strconv.AppendInt(b, time.Since(e.start).Milliseconds(), 10)
	if e.note != "" {
		b = append(b, ',')
		b = appendKey(b, "note")
		b = appendJSONString(b, e.note)
	}
	b = append(b, ',')
	b = appendKey(b, "path_hash")
	b = appendJSONString(b, p.pathHash(e.target.Path))
	b = append(b, `,"port":`...)
	b = strconv.AppendUint(b, uint64(port), 10)
	b = append(b, ',')
	b = appendKey(b, "rule")
	b = appendJSONString(b, e.v.Rule)
	b = append(b, ',')
	b = appendKey(b, "session")
	b = appendJSONString(b, p.Identity.Session)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(e.status), 10)
	b = append(b, ',')
	b = appendKey(b, "trace_id")
	b = appendJSONString(b, e.v.TraceID)
	b = append(b, ',')
	b = appendKey(b, "verdict")
	b = appendJSONString(b, e.v.Verdict.String())
	return append(b, '}')
}

// summary is the request log's one line: "GET example.com:80 allow, status
// 200, 0 bytes up, 16 down".
func (e *entry) summary(host string, port uint16, up, down int64) string {
	b := make([]byte, 0, 64+len(e.method)+len(host))
	b = append(b, e.method...)
	b = append(b, ' ')
	b = append(b, host...)
	b = append(b, ':')
	b = strconv.AppendUint(b, uint64(port), 10)
	b = append(b, ' ')
	b = append(b, e.v.Verdict.String()...)
	b = append(b, ", status "...)
	b = strconv.AppendInt(b, int64(e.status), 10)
	b = append(b, ", "...)
	b = strconv.AppendInt(b, up, 10)
	b = append(b, " bytes up, "...)
	b = strconv.AppendInt(b, down, 10)
	b = append(b, " down"...)
	return string(b)
}

func appendKey(b []byte, k string) []byte {
	b = append(b, '"')
	b = append(b, k...)
	return append(b, '"', ':')
}

// appendJSONString appends s as encoding/json writes a string: as is when
// no byte of it needs escaping (the common case: a host, a rule, a trace
// id), else through json.Marshal itself.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// The request log of answered requests is written in groups. Each answered
// request's line waits up to logGroupDelay for others, and the lines
// gathered go to the store as one egress_request event: one line alone in
// the form it always had, two or more as {"requests": [line, …]} with a
// summary counting them. A row costs the same whether it carries one line or
// thirty, and one row a request was about 40 µs of the proxy's CPU, a
// quarter of it (docs/benchmarks.md, issue 26). A group is cut at
// maxLogGroup lines, and Close writes what is gathered.
//
// What is durable before an answer does not change: the request's decision
// (the gate's audit row). A line waits in memory for at most logGroupDelay
// and a commit, as it waited for a commit before.
const (
	logGroupDelay = 5 * time.Millisecond
	maxLogGroup   = 64
)

// logLine is one answered request's line of the request log.
type logLine struct {
	sev     warden.Severity
	summary string
	meta    json.RawMessage
}

// logGroup gathers lines until it is written.
type logGroup struct {
	mu     sync.Mutex
	lines  []logLine
	timer  *time.Timer
	armed  bool
	delay  time.Duration // logGroupDelay unless a test sets it
	closed atomic.Bool   // the proxy is closing: a line is written alone, at once
	// writing counts the groups taken from lines (by the timer or a cut)
	// and not yet queued: closeGroups waits for them, so Close cannot
	// return while a group it did not see is on its way to the store.
	writing sync.WaitGroup
}

// group adds an answered request's line to the request log's next group.
func (p *Proxy) group(l logLine) {
	g := &p.logs
	g.mu.Lock()
	if g.closed.Load() {
		// Checked under the lock: a line added before closeGroups took
		// the lines is written with them, one after is written here.
		g.mu.Unlock()
		p.writeGroup([]logLine{l})
		return
	}
	g.lines = append(g.lines, l)
	if len(g.lines) >= maxLogGroup {
		lines := g.lines
		g.lines = nil
		g.writing.Add(1)
		g.mu.Unlock()
		defer g.writing.Done()
		p.writeGroup(lines)
		return
	}
	if !g.armed {
		g.armed = true
		delay := g.delay
		if delay == 0 {
			delay = logGroupDelay
		}
		if g.timer == nil {
			g.timer = time.AfterFunc(delay, p.flushGroup)
		} else {
			g.timer.Reset(delay)
		}
	}
	g.mu.Unlock()
}

// closeGroups writes the lines gathered so far, and each later line at
// once (Close), and waits until every group taken before is queued. No
// group is taken after: a line that finds closed set under the lock is
// written alone, by its own request.
func (p *Proxy) closeGroups() {
	p.logs.closed.Store(true)
	p.flushGroup()
	p.logs.writing.Wait()
}

// flushGroup writes the lines gathered so far, if any.
func (p *Proxy) flushGroup() {
	g := &p.logs
	g.mu.Lock()
	lines := g.lines
	g.lines, g.armed = nil, false
	if len(lines) == 0 {
		g.mu.Unlock()
		return
	}
	g.writing.Add(1)
	g.mu.Unlock()
	defer g.writing.Done()
	p.writeGroup(lines)
}

// writeGroup queues one event for lines and waits for it off the clients'
// path (Close waits for it).
func (p *Proxy) writeGroup(lines []logLine) {
	sev, summary, meta := groupEvent(lines)
	p.queued(func() func() error {
		return p.Queue(context.Background(), warden.EventEgressRequest, sev, summary, meta)
	})
}

// groupEvent is the event of a group of lines: a lone line as it is, else
// the lines under "requests", warn when any line warns, and a summary that
// counts them and shows the first.
func groupEvent(lines []logLine) (warden.Severity, string, json.RawMessage) {
	if len(lines) == 1 {
		return lines[0].sev, lines[0].summary, lines[0].meta
	}
	sev, n := warden.SevInfo, 0
	size := 16
	for _, l := range lines {
		size += len(l.meta) + 1
		if l.sev != warden.SevInfo {
			sev, n = warden.SevWarn, n+1
		}
	}
	b := make([]byte, 0, size)
	b = append(b, `{"requests":[`...)
	for i, l := range lines {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, l.meta...)
	}
	b = append(b, "]}"...)
	s := strconv.Itoa(len(lines)) + " requests"
	if n > 0 {
		s += " (" + strconv.Itoa(n) + " not allowed)"
	}
	return sev, s + ": " + lines[0].summary + "; …", b
}
