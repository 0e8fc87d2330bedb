package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A host's MCP configuration (Claude Code's .mcp.json and ~/.claude.json,
// Cursor's mcp.json, Gemini CLI's settings.json: an "mcpServers" object of
// named servers) can be rewritten so that each server runs behind `warden
// mcp`, and back. Only the mcpServers value is rewritten; the rest of the
// file is kept byte for byte.

// HostServer is what wrapping did to one configured server.
type HostServer struct {
	Name   string
	Action string // "wrapped", "unwrapped", "already wrapped", "skipped"
	Why    string // for skipped
}

// WrapResult says what WrapHostConfig changed.
type WrapResult struct {
	Path    string
	Changed bool
	Backup  string // the previous file, when it changed
	Servers []HostServer
}

// WrapHostConfig routes every server in the mcpServers object of the JSON
// file at path through warden (prefix: the warden command and its global
// arguments, e.g. [/usr/local/bin/warden --home H]), or, with undo, puts
// back the servers it wrapped. urlKey is the host's key for a Streamable
// HTTP server's address ("url", or Gemini CLI's "httpUrl"). A missing file
// is nothing to change. The previous file is backed up beside it.
func WrapHostConfig(path string, prefix []string, urlKey string, undo bool) (WrapResult, error) {
	res := WrapResult{Path: path}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return res, err
	}
	start, end, ok, err := valueSpan(data, "mcpServers")
	if err != nil {
		return res, fmt.Errorf("%s is not a JSON object: %w", path, err)
	}
	if !ok {
		return res, nil
	}
	names, entries, err := orderedObject(data[start:end])
	if err != nil {
		return res, fmt.Errorf("mcpServers in %s is not an object of servers: %w", path, err)
	}
	changed := false
	for i, name := range names {
		var e map[string]json.RawMessage
		if err := json.Unmarshal(entries[i], &e); err != nil || e == nil {
			res.Servers = append(res.Servers, HostServer{Name: name, Action: "skipped", Why: "not a JSON object"})
			continue
		}
		var hs HostServer
		if undo {
			hs = unwrapServer(name, e, urlKey)
		} else {
			hs = wrapServer(name, e, prefix, urlKey)
		}
		res.Servers = append(res.Servers, hs)
		if hs.Action == "wrapped" || hs.Action == "unwrapped" {
			b, err := json.Marshal(e)
			if err != nil {
				return res, err
			}
			entries[i], changed = b, true
		}
	}
	if !changed {
		return res, nil
	}
	var obj bytes.Buffer
	obj.WriteString("{")
	for i, name := range names {
		if i > 0 {
			obj.WriteString(",")
		}
		k, _ := json.Marshal(name)
		obj.Write(k)
		obj.WriteString(":")
		obj.Write(entries[i])
	}
	obj.WriteString("}")
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, obj.Bytes(), indentOf(data, start), "  "); err != nil {
		return res, err
	}
	out := slices.Concat(data[:start], pretty.Bytes(), data[end:])
	if !json.Valid(out) {
		return res, fmt.Errorf("rewriting %s would not give valid JSON; nothing was written", path)
	}
	backup, err := replaceFile(path, data, out)
	if err != nil {
		return res, err
	}
	res.Changed, res.Backup = true, backup
	return res, nil
}

// replaceFile puts out in place of the file at path, whose contents were
// data: data is backed up beside it first (the backup's path is returned),
// then out is written to a temporary file in the same directory, with the
// file's permissions, and renamed over it, so the file is never seen half
// written. A path that is a symlink (a dotfiles checkout) is followed: the
// file it points to is replaced, the link kept.
func replaceFile(path string, data, out []byte) (string, error) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	backup := path + ".warden-backup-" + time.Now().UTC().Format("20060102T150405.000Z")
	if err := os.WriteFile(backup, data, 0o600); err != nil {
		return "", fmt.Errorf("back up %s: %w", path, err)
	}
	perm := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		perm = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".warden-mcp-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	return backup, nil
}

// wrapServer rewrites one server entry in place to run behind warden.
func wrapServer(name string, e map[string]json.RawMessage, prefix []string, urlKey string) HostServer {
	hs := HostServer{Name: name}
	if !ValidName(name) {
		hs.Action, hs.Why = "skipped", "its name cannot name MCP tools (use letters, digits, - and single _)"
		return hs
	}
	var command string
	var args []string
	_ = json.Unmarshal(e["command"], &command)
	_ = json.Unmarshal(e["args"], &args)
	if wrapped(command, args, name) {
		hs.Action = "already wrapped"
		return hs
	}
	set := func(k string, v any) { e[k], _ = json.Marshal(v) }
	switch {
	case command != "":
		set("command", prefix[0])
		set("args", slices.Concat(prefix[1:], []string{"mcp", "--name", name, "--", command}, args))
	default:
		var url, typ string
		_ = json.Unmarshal(e[urlKey], &url)
		_ = json.Unmarshal(e["type"], &typ)
		switch {
		case url == "":
			hs.Action, hs.Why = "skipped", "it has neither a command nor a "+urlKey
			return hs
		case typ == "sse":
			hs.Action, hs.Why = "skipped", "warden mcp speaks Streamable HTTP, not the old SSE transport"
			return hs
		case len(e["headers"]) > 0 && string(e["headers"]) != "null" && string(e["headers"]) != "{}":
			hs.Action, hs.Why = "skipped", "it sends headers (credentials), which warden mcp --upstream does not pass on yet"
			return hs
		}
		delete(e, urlKey)
		delete(e, "type")
		set("command", prefix[0])
		set("args", slices.Concat(prefix[1:], []string{"mcp", "--name", name, "--upstream", url}))
	}
	hs.Action = "wrapped"
	return hs
}

// unwrapServer puts back a server wrapServer wrapped.
func unwrapServer(name string, e map[string]json.RawMessage, urlKey string) HostServer {
	hs := HostServer{Name: name, Action: "skipped", Why: "not wrapped by warden"}
	var command string
	var args []string
	_ = json.Unmarshal(e["command"], &command)
	_ = json.Unmarshal(e["args"], &args)
	if !wrapped(command, args, name) {
		return hs
	}
	i := slices.Index(args, "mcp") + 3 // past mcp --name NAME
	set := func(k string, v any) { e[k], _ = json.Marshal(v) }
	switch {
	case args[i] == "--" && len(args) > i+1:
		set("command", args[i+1])
		set("args", args[i+2:])
		if len(args) == i+2 {
			delete(e, "args") // none were given (or an empty list, the same)
		}
	case args[i] == "--upstream" && len(args) == i+2:
		delete(e, "command")
		delete(e, "args")
		set(urlKey, args[i+1])
		if urlKey == "url" {
			set("type", "http")
		}
	default:
		return hs
	}
	hs.Action, hs.Why = "unwrapped", ""
	return hs
}

// wrapped reports whether a server entry runs warden mcp for name.
func wrapped(command string, args []string, name string) bool {
	if filepath.Base(command) != "warden" {
		return false
	}
	i := slices.Index(args, "mcp")
	return i >= 0 && len(args) > i+3 && args[i+1] == "--name" && args[i+2] == name &&
		(args[i+3] == "--" || args[i+3] == "--upstream")
}

// ValidName reports whether name can name an MCP server behind warden: a
// segment of its tools' names (mcp__NAME__TOOL) and of a file name, so
// letters, digits, - and single _ (not first or last), at most 64 bytes,
// not starting with -.
func ValidName(name string) bool {
	if name == "" || len(name) > 64 || strings.Contains(name, "__") || strings.HasPrefix(name, "_") || strings.HasSuffix(name, "_") || strings.HasPrefix(name, "-") {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// valueSpan finds the value of key in the top-level object of data: its
// byte range, and whether it is there.
func valueSpan(data []byte, key string) (start, end int, ok bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return 0, 0, false, err
	}
	if d, isDelim := tok.(json.Delim); !isDelim || d != '{' {
		return 0, 0, false, errors.New("the file is not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return 0, 0, false, err
		}
		k, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return 0, 0, false, err
		}
		if k == key {
			end = int(dec.InputOffset())
			return end - len(raw), end, true, nil
		}
	}
	if _, err := dec.Token(); err != nil {
		return 0, 0, false, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return 0, 0, false, errors.New("data after the top-level object")
	}
	return 0, 0, false, nil
}

// orderedObject reads a JSON object's keys in order and their values.
func orderedObject(data []byte) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("not an object")
	}
	var names []string
	var values []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, err
		}
		if slices.Contains(names, tok.(string)) {
			return nil, nil, fmt.Errorf("the server %q is configured twice", tok)
		}
		names, values = append(names, tok.(string)), append(values, raw)
	}
	return names, values, nil
}

// indentOf is the indentation of the line holding offset i.
func indentOf(data []byte, i int) string {
	line := bytes.LastIndexByte(data[:i], '\n') + 1
	j := line
	for j < i && (data[j] == ' ' || data[j] == '\t') {
		j++
	}
	return string(data[line:j])
}
