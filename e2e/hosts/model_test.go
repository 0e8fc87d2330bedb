package hosts

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// A call is one tool call the scripted model asks for, in the host's own
// terms: its tool name and arguments.
type call struct {
	Tool string
	Args map[string]any
}

// A toolResult is what a host sent back to the model for one tool call.
type toolResult struct {
	Tool  string // the tool's name, where the wire says it
	Text  string // the result as the model reads it (flattened)
	Error bool   // the host marked it as an error
}

// A turn is one request the host made to the model.
type turn struct {
	Tools   []string // the tools the host offered
	Results []toolResult
	Raw     string
}

// wire is one host's model protocol: how a request names its tools and
// results, and how a reply carrying a tool call or a final text is written.
type wire interface {
	// parse reads a request body.
	parse(body []byte) (turn, error)
	// reply writes the model's answer: c, or the final text when c is nil.
	// step numbers the call, for unique call ids.
	reply(w http.ResponseWriter, r *http.Request, step int, c *call, text string)
}

// A model is a scripted model server. It is stateless as the hosts see it:
// a request already carrying N tool results is answered with the script's
// step N, and with a final text once the script is played. A request that
// offers no tools (a host's side request: a title, a summary) gets the text.
type model struct {
	t      *testing.T
	wire   wire
	script []call
	srv    *httptest.Server

	mu sync.Mutex
	// before, when set, runs before step N ≥ 1 is played, with the results
	// so far: a test answers an approval there, as the user would before the
	// agent retries. Set it with setBefore.
	before func(step int, results []toolResult)
	turns  []turn
	paths  []string
	played map[int]bool
}

const finalText = "scripted model: done"

func newModel(t *testing.T, w wire, script ...call) *model {
	m := &model{t: t, wire: w, script: script, played: map[int]bool{}}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *model) url() string { return m.srv.URL }

func (m *model) setBefore(f func(step int, results []toolResult)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.before = f
}

func (m *model) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.paths = append(m.paths, r.Method+" "+r.URL.Path)
	m.mu.Unlock()
	if r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	tr, err := m.wire.parse(body)
	if err != nil {
		m.t.Errorf("model server: %s %s: %v\n%s", r.Method, r.URL, err, body)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	tr.Raw = string(body)
	if len(tr.Tools) == 0 {
		m.wire.reply(w, r, 0, nil, finalText)
		return
	}
	m.mu.Lock()
	m.turns = append(m.turns, tr)
	step := len(tr.Results)
	first := !m.played[step]
	m.played[step] = true
	m.mu.Unlock()
	if step >= len(m.script) {
		m.wire.reply(w, r, step, nil, finalText)
		return
	}
	m.mu.Lock()
	before := m.before
	m.mu.Unlock()
	if step > 0 && first && before != nil {
		before(step, tr.Results)
	}
	c := m.script[step]
	m.wire.reply(w, r, step, &c, "")
}

// results returns the tool results of the host's last request that offered
// tools: what reached the model in the end.
func (m *model) results() []toolResult {
	m.mu.Lock()
	defer m.mu.Unlock()
	var last []toolResult
	for _, tr := range m.turns {
		if len(tr.Results) >= len(last) {
			last = tr.Results
		}
	}
	return last
}

// offered returns the tools of the host's first request that offered any.
func (m *model) offered() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.turns) == 0 {
		return nil
	}
	return m.turns[0].Tools
}

// requests describes what the server received, for failure messages.
func (m *model) requests() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "%d requests: %s\n", len(m.paths), strings.Join(m.paths, ", "))
	for i, tr := range m.turns {
		fmt.Fprintf(&b, "turn %d: %d tools, %d results\n", i, len(tr.Tools), len(tr.Results))
		for j, r := range tr.Results {
			fmt.Fprintf(&b, "  result %d (%s, error %v): %s\n", j, r.Tool, r.Error, clip(r.Text, 600))
		}
	}
	return b.String()
}

// sse writes one server-sent event; event may be empty.
func sse(w http.ResponseWriter, event string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

// flatten turns a tool result's content (a string, an array of text blocks,
// or any JSON) into text.
func flatten(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		var parts []string
		for _, b := range blocks {
			if b.Text != "" {
				parts = append(parts, b.Text)
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, "\n")
		}
	}
	return string(raw)
}

func mustMarshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
