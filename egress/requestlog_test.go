package egress

import (
	"bytes"
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
