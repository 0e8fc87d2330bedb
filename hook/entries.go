package hook

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// hostSettings describes where and how a host registers hooks.
type hostSettings struct {
	dir, file string   // settings file relative to the project or home directory
	events    []string // events warden's hook is registered for
	// nested hosts group entries as {"matcher":…,"hooks":[entry…]}; the others
	// list entries directly under each event.
	nested  bool
	matcher string // the group's matcher; "" leaves it out (matches every tool)
	entry   func(command, event string) *ordered
	// prepare sets top-level keys the file needs (Cursor's version).
	prepare func(top *ordered)
}

func commandEntry(command, _ string) *ordered {
	e := newOrdered()
	e.set("type", json.RawMessage(`"command"`))
	e.set("command", mustJSON(command))
	return e
}

// claudeEntry is commandEntry, with Claude Code told to block the tool call
// when warden's PreToolUse hook fails (crashes, is killed, times out, exits
// with a status other than 2): by default it would let the call through.
func claudeEntry(command, event string) *ordered {
	e := commandEntry(command, event)
	if event == "PreToolUse" {
		e.set("onFailure", json.RawMessage(`"block"`))
	}
	return e
}

var settings = map[string]hostSettings{
	// PostToolUse reports calls that ran, so an ask Claude Code put to its
	// user is recorded as approved.
	// PostToolUseFailure, like PostToolUse, ends the hold of a call of
	// Claude Code's own file tools (hold.go).
	// SessionEnd lets the session's sandbox world and /tmp go.
	"claude": {dir: ".claude", file: "settings.json", events: []string{"PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionEnd"}, nested: true, matcher: "*", entry: claudeEntry},
	// Codex matches tool names like Claude Code; with no matcher every tool
	// is sent. PostToolUse hands each tool's output to the injection
	// scanner and reports the call that ran.
	"codex": {dir: ".codex", file: "hooks.json", events: []string{"PreToolUse", "PostToolUse"}, nested: true, entry: commandEntry},
	// AfterTool hands each tool's output to the injection scanner and
	// reports the call that ran.
	"gemini": {dir: ".gemini", file: "settings.json", events: []string{"BeforeTool", "AfterTool"}, nested: true, matcher: ".*",
		entry: func(command, _ string) *ordered {
			e := newOrdered()
			e.set("name", json.RawMessage(`"warden"`))
			e.set("type", json.RawMessage(`"command"`))
			e.set("command", mustJSON(command))
			e.set("timeout", json.RawMessage(`60000`)) // milliseconds
			return e
		}},
	"cursor": {dir: ".cursor", file: "hooks.json", events: []string{"beforeShellExecution", "beforeMCPExecution", "beforeReadFile"},
		entry: func(command, _ string) *ordered {
			e := newOrdered()
			e.set("command", mustJSON(command))
			return e
		},
		prepare: func(top *ordered) {
			if _, ok := top.get("version"); !ok {
				top.set("version", json.RawMessage(`1`))
			}
		}},
}

// installed reports whether hooks already holds exactly one warden entry for
// host under each of its events, each with command, and no other.
func installed(hs hostSettings, hooks *ordered, host, command string) bool {
	found := map[string]int{}
	for _, ev := range hooks.keys {
		entries, ok := eventEntries(hs, hooks.vals[ev])
		if !ok {
			continue
		}
		for _, e := range entries {
			if c := entryCommand(e); hookCommand(c, host) {
				if c != command || !sameJSON(e, hs.entry(command, ev)) {
					return false
				}
				found[ev]++
			}
		}
	}
	if len(found) != len(hs.events) {
		return false
	}
	for _, ev := range hs.events {
		if found[ev] != 1 {
			return false
		}
	}
	return true
}

// sameJSON reports whether raw holds the same JSON value as want (an entry
// written by an older warden, without a key this one sets, is not).
func sameJSON(raw json.RawMessage, want *ordered) bool {
	b, err := want.MarshalJSON()
	if err != nil {
		return false
	}
	var x, y any
	if json.Unmarshal(raw, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// needsPrepare reports whether hs.prepare would add a key to top.
func needsPrepare(hs hostSettings, top *ordered) bool {
	probe := &ordered{keys: append([]string(nil), top.keys...), vals: map[string]json.RawMessage{}}
	for k, v := range top.vals {
		probe.vals[k] = v
	}
	hs.prepare(probe)
	return probe.len() != top.len()
}

// eventEntries returns every hook entry under one event's value; ok is false
// when the value is not shaped as the host expects.
func eventEntries(hs hostSettings, raw json.RawMessage) (entries []json.RawMessage, ok bool) {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil, false
	}
	if !hs.nested {
		return list, true
	}
	for _, g := range list {
		var group struct {
			Hooks []json.RawMessage `json:"hooks"`
		}
		if json.Unmarshal(g, &group) == nil {
			entries = append(entries, group.Hooks...)
		}
	}
	return entries, true
}

// removeEntries deletes from hooks every entry whose command runs warden's
// hook for host, dropping groups and events left empty, and returns the
// removed commands. Values it does not understand are left as they are.
func removeEntries(hs hostSettings, hooks *ordered, host string) ([]string, error) {
	var removed []string
	for _, ev := range append([]string(nil), hooks.keys...) {
		var list []json.RawMessage
		if json.Unmarshal(hooks.vals[ev], &list) != nil {
			continue // not an event list warden knows; leave it alone
		}
		var kept []json.RawMessage
		changed := false
		for _, item := range list {
			if !hs.nested {
				if c := entryCommand(item); hookCommand(c, host) {
					removed, changed = append(removed, c), true
					continue
				}
				kept = append(kept, item)
				continue
			}
			group, err := parseOrdered(item)
			if err != nil {
				kept = append(kept, item)
				continue
			}
			raw, ok := group.get("hooks")
			var entries []json.RawMessage
			if !ok || json.Unmarshal(raw, &entries) != nil {
				kept = append(kept, item)
				continue
			}
			var keep []json.RawMessage
			for _, e := range entries {
				if c := entryCommand(e); hookCommand(c, host) {
					removed = append(removed, c)
					continue
				}
				keep = append(keep, e)
			}
			if len(keep) == len(entries) {
				kept = append(kept, item)
				continue
			}
			changed = true
			if len(keep) == 0 {
				continue
			}
			hb, err := json.Marshal(keep)
			if err != nil {
				return nil, err
			}
			group.set("hooks", hb)
			gb, err := group.MarshalJSON()
			if err != nil {
				return nil, err
			}
			kept = append(kept, gb)
		}
		if !changed {
			continue
		}
		if len(kept) == 0 {
			hooks.del(ev)
			continue
		}
		lb, err := json.Marshal(kept)
		if err != nil {
			return nil, err
		}
		hooks.vals[ev] = lb
	}
	return removed, nil
}

// appendEntry adds warden's entry for command at the end of event ev.
func appendEntry(hs hostSettings, hooks *ordered, ev, command string) error {
	var list []json.RawMessage
	if raw, ok := hooks.get(ev); ok {
		if err := json.Unmarshal(raw, &list); err != nil {
			return fmt.Errorf("hooks.%s is not a JSON array", ev)
		}
	}
	entry, err := hs.entry(command, ev).MarshalJSON()
	if err != nil {
		return err
	}
	item := json.RawMessage(entry)
	if hs.nested {
		group := newOrdered()
		if hs.matcher != "" {
			group.set("matcher", mustJSON(hs.matcher))
		}
		group.set("hooks", json.RawMessage("["+string(entry)+"]"))
		if item, err = group.MarshalJSON(); err != nil {
			return err
		}
	}
	lb, err := json.Marshal(append(list, item))
	if err != nil {
		return err
	}
	hooks.set(ev, lb)
	return nil
}
