package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/inject"
)

// Pins keeps, per server, the hash of each tool's definition as the user
// first saw it (trust on first use). An error from Load means the record
// cannot be trusted: every tool of the server then asks.
type Pins interface {
	Load(server string) (map[string]string, error)
	Save(server string, pins map[string]string) error
}

// MemoryPins keeps pins in memory. The zero value is ready to use.
type MemoryPins struct {
	mu sync.Mutex
	m  map[string]map[string]string
}

// Load returns a copy of server's pins (nil for none); it never fails.
func (m *MemoryPins) Load(server string) (map[string]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.m[server]), nil
}

// Save keeps a copy of pins for server; it never fails.
func (m *MemoryPins) Save(server string, pins map[string]string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]map[string]string{}
	}
	m.m[server] = maps.Clone(pins)
	return nil
}

// ToolName is the name warden judges an MCP tool by: mcp__SERVER__TOOL,
// the name Claude Code and Codex give it, so a policy entry covers the tool
// whether the proxy or a host's hook sees the call.
func ToolName(server, tool string) string { return "mcp__" + server + "__" + tool }

// tool is the part of a tool definition the proxy reads.
type tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Annotations  json.RawMessage `json:"annotations"`
}

// hash is the definition's fingerprint: everything the model reads or a
// client acts on, canonically encoded.
func (t *tool) hash() string {
	canon := func(raw json.RawMessage) any {
		var v any
		if len(raw) > 0 && json.Unmarshal(raw, &v) == nil {
			return v
		}
		return nil
	}
	b, _ := json.Marshal(map[string]any{
		"name": t.Name, "title": t.Title, "description": t.Description,
		"inputSchema": canon(t.InputSchema), "outputSchema": canon(t.OutputSchema), "annotations": canon(t.Annotations),
	})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// text is what the model reads of the definition: title, description and
// every string in the schemas (property descriptions, enums, defaults).
func (t *tool) text() string {
	var b strings.Builder
	b.WriteString(t.Title + "\n" + t.Description + "\n")
	for _, raw := range []json.RawMessage{t.InputSchema, t.OutputSchema} {
		var v any
		if len(raw) > 0 && json.Unmarshal(raw, &v) == nil {
			b.WriteString(inject.StringsOf(v, maxScanned-b.Len()))
		}
	}
	return b.String()
}

// state is what the proxy knows of one listed tool.
type state struct {
	hash     string
	distrust *Distrust
}

// definitions are the server's tools as last listed, and their pins.
type definitions struct {
	p         *Proxy
	mu        sync.Mutex
	loaded    bool
	pins      map[string]string
	pinsErr   error
	tools     map[string]state
	told      map[string]bool // events already recorded, by kind and hash
	ownListed bool            // the proxy's own listing read every page
	listErr   error           // the proxy's own listing failed
}

// checked reports whether a call to tool name can be judged on what the
// session knows: the tool was listed, or the proxy's own listing read
// them all (or failed: then every tool not listed asks). A listing of the
// client's is not enough: it may have stopped at a page before the tool.
func (d *definitions) checked(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.tools[name]
	return ok || d.ownListed || d.listErr != nil
}

// listedAll records that the proxy's own listing read every page.
func (d *definitions) listedAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ownListed = true
}

// unverified records that the tools could not be listed: every call asks.
func (d *definitions) unverified(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.listErr = err
}

func newDefinitions(p *Proxy) *definitions {
	if p.Pins == nil {
		p.Pins = &MemoryPins{}
	}
	return &definitions{p: p, tools: map[string]state{}, told: map[string]bool{}}
}

func (d *definitions) load() {
	if d.loaded {
		return
	}
	d.loaded = true
	d.pins, d.pinsErr = d.p.Pins.Load(d.p.Server)
	if d.pins == nil {
		d.pins = map[string]string{}
	}
}

// distrust is what the proxy holds against tool name, nil for nothing.
func (d *definitions) distrust(name string) *Distrust {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.load()
	if st, ok := d.tools[name]; ok {
		return st.distrust
	}
	if d.listErr != nil {
		// The proxy's own listing failed, maybe after some pages: a
		// tool not in them was never checked.
		return &Distrust{Rule: "mcp.tool_unverified", Verdict: warden.Ask, Reason: d.listErr.Error() + ", so its definition cannot be checked"}
	}
	if d.pinsErr != nil {
		return &Distrust{Rule: "mcp.tool_unverified", Verdict: warden.Ask,
			Reason: fmt.Sprintf("the record of %s's tool definitions could not be read (%v), so no tool of it can be checked for changes", d.p.Server, d.pinsErr)}
	}
	return nil
}

// accept pins tool name's current definition: a human approved a call to
// it after it changed.
func (d *definitions) accept(ctx context.Context, name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	st, ok := d.tools[name]
	if !ok || st.distrust == nil || st.distrust.Rule != "mcp.tool_changed" {
		return
	}
	d.pins[name] = st.hash
	st.distrust = nil
	d.tools[name] = st
	if err := d.p.Pins.Save(d.p.Server, d.pins); err != nil {
		d.p.Log.Warn("mcp: could not record the approved tool definition", "tool", name, "error", err)
	}
}

// filterTools reads a tools/list result: it hides the tools the policy
// denies outright and the poisoned ones, pins the new ones, and marks the
// changed ones. A result it cannot read is refused, never passed on.
func (s *session) filterTools(ctx context.Context, m *jsonrpc.Response) *jsonrpc.Response {
	out, err := s.defs.filter(ctx, m.Result)
	if err != nil {
		s.p.Log.Warn("mcp: refused a tools/list result", "error", err)
		return errorResponse(m.ID, jsonrpc.CodeInternalError, "warden: the MCP server's tool list could not be read ("+err.Error()+"), so no tool of it is offered")
	}
	return &jsonrpc.Response{ID: m.ID, Result: out}
}

// filter is filterTools on the raw result.
func (d *definitions) filter(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	var res map[string]json.RawMessage
	if err := json.Unmarshal(raw, &res); err != nil || res == nil {
		return nil, fmt.Errorf("the result is not a JSON object")
	}
	if err := ambiguous(res, "tools"); err != nil {
		return nil, err
	}
	var list []json.RawMessage
	if err := json.Unmarshal(res["tools"], &list); err != nil {
		return nil, fmt.Errorf("its tools are not a list")
	}
	d.mu.Lock()
	d.load()
	d.mu.Unlock()
	kept := make([]json.RawMessage, 0, len(list))
	var events []Event
	pinsChanged := false
	for _, raw := range list {
		var t tool
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(raw, &t); err != nil || t.Name == "" || json.Unmarshal(raw, &keys) != nil ||
			ambiguous(keys, "name", "title", "description", "inputSchema", "outputSchema", "annotations") != nil {
			d.p.Log.Warn("mcp: hid a tool whose definition could not be read", "server", d.p.Server)
			// Hidden, and refused when called all the same (a client
			// may know the name): its definition was never checked.
			for k, v := range keys {
				var name string
				if strings.EqualFold(k, "name") && json.Unmarshal(v, &name) == nil && name != "" {
					d.mu.Lock()
					d.tools[name] = state{distrust: &Distrust{Rule: "mcp.tool_unverified", Verdict: warden.Deny,
						Reason: fmt.Sprintf("the definition of %s could not be read, so warden hides the tool and refuses its calls", ToolName(d.p.Server, name))}}
					d.mu.Unlock()
				}
			}
			continue
		}
		name := ToolName(d.p.Server, t.Name)
		req := &warden.Request{Capability: warden.CapTool, Action: "call", Resource: name, Tool: name,
			Autonomous: d.p.Autonomous, Session: d.p.Session, Host: "mcp", RequestedBy: "agent"}
		if dec := d.p.Gate.Preview(ctx, req); dec.Verdict == warden.Deny {
			continue // denied outright: the model never sees it
		}
		st := state{hash: t.hash()}
		if res := d.p.Scanner.Scan(t.text()); res.Injection {
			st.distrust = &Distrust{Rule: "mcp.tool_poisoned", Verdict: warden.Deny,
				Reason: fmt.Sprintf("the definition of %s reads as a prompt injection (score %.2f; %s), so warden hides the tool and refuses its calls", name, res.Score, categories(res.Categories))}
			d.mu.Lock() // told and tools are shared with a listing running at once
			if !d.told["poisoned "+st.hash] {
				d.told["poisoned "+st.hash] = true
				events = append(events, Event{Type: EventToolPoisoned, Severity: warden.SevError,
					Summary: st.distrust.Reason,
					Meta:    map[string]any{"server": d.p.Server, "tool": t.Name, "definition_sha256": st.hash, "score": res.Score, "categories": res.Categories, "excerpt": excerpt(t.text(), res)}})
			}
			d.tools[t.Name] = st
			d.mu.Unlock()
			continue
		}
		d.mu.Lock()
		pinned, seen := d.pins[t.Name]
		switch {
		case d.pinsErr != nil:
			st.distrust = &Distrust{Rule: "mcp.tool_unverified", Verdict: warden.Ask,
				Reason: fmt.Sprintf("the record of %s's tool definitions could not be read (%v), so %s cannot be checked for changes", d.p.Server, d.pinsErr, name)}
		case !seen:
			d.pins[t.Name], pinsChanged = st.hash, true
		case pinned != st.hash:
			st.distrust = &Distrust{Rule: "mcp.tool_changed", Verdict: warden.Ask,
				Reason: fmt.Sprintf("the server changed the definition of %s since it was first seen; its calls ask until one is approved", name)}
			if !d.told["changed "+st.hash] {
				d.told["changed "+st.hash] = true
				events = append(events, Event{Type: EventToolChanged, Severity: warden.SevWarn, Summary: st.distrust.Reason,
					Meta: map[string]any{"server": d.p.Server, "tool": t.Name, "pinned_sha256": pinned, "definition_sha256": st.hash}})
			}
		}
		d.tools[t.Name] = st
		d.mu.Unlock()
		if st.distrust != nil {
			raw = markTool(raw, st.distrust.Reason)
		}
		kept = append(kept, raw)
	}
	if pinsChanged {
		d.mu.Lock()
		err := d.p.Pins.Save(d.p.Server, d.pins)
		d.mu.Unlock()
		if err != nil {
			d.p.Log.Warn("mcp: could not record the tool definitions seen", "server", d.p.Server, "error", err)
		}
	}
	for _, ev := range events {
		if err := d.p.Gate.Record(ctx, ev); err != nil {
			d.p.Log.Warn("mcp: could not record a security event", "type", ev.Type, "error", err)
		}
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return nil, err
	}
	res["tools"] = b
	return json.Marshal(res)
}

// markTool prefixes a tool's description with why warden distrusts it.
func markTool(raw json.RawMessage, why string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	var desc string
	_ = json.Unmarshal(m["description"], &desc)
	b, err := json.Marshal("[warden: " + why + "] " + desc)
	if err != nil {
		return raw
	}
	m["description"] = b
	out, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return out
}

func categories[T ~string](cs []T) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = string(c)
	}
	return strings.Join(parts, ", ")
}
