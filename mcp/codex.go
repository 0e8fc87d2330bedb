package mcp

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Codex keeps its MCP servers in config.toml, as [mcp_servers.NAME] tables
// (or inline tables, or dotted keys) with command, args, env… for a stdio
// server and url for a Streamable HTTP one. WrapCodexConfig rewrites them the
// way WrapHostConfig rewrites the JSON hosts' files, to the same `warden mcp
// --name NAME -- COMMAND ARGS…` and `warden mcp --name NAME --upstream URL`,
// but it edits only the bytes of the keys it changes: the user's comments,
// formatting and every other key stay byte for byte, and unwrapping gives
// back the file as it was.
//
// How the edit is laid out, so that it can be undone exactly:
//   - a stdio server's command value becomes the warden command, and the
//     warden arguments followed by the original command's own text are put
//     in front of the elements of its args array, right after the "[" and
//     followed by ", " (a TOML array may end in a comma), or, with no args
//     key, a new args key goes right after the command;
//   - a url server's `url = VALUE` becomes `command = WARDEN` and, on the
//     next line (or after ", " in an inline table), `args = [… "--upstream",
//     VALUE]`, with the url key's own separator and dotted prefix.
// Unwrapping checks that a wrapped server still has exactly that layout and
// cuts it back out; one edited by hand since is left alone and reported.

// codexStdioOnly are a Codex server's keys that only a Streamable HTTP server
// has: a url server with one of them is not rewritten (warden mcp --upstream
// does not send headers or tokens yet, and Codex refuses them on a command).
var codexStdioOnly = []string{"bearer_token_env_var", "http_headers", "env_http_headers", "oauth_resource", "scopes"}

// WrapCodexConfig routes every server in the mcp_servers table of Codex's
// config.toml at path through warden (prefix: the warden command and its
// global arguments), or, with undo, puts back the servers it wrapped. A
// missing file is nothing to change. A file it cannot rewrite safely is
// refused with an error and left untouched; the previous file is backed up
// beside it.
func WrapCodexConfig(path string, prefix []string, undo bool) (WrapResult, error) {
	res := WrapResult{Path: path}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return res, err
	}
	out, servers, err := RewriteCodexConfig(data, prefix, undo)
	res.Servers = servers
	if err != nil {
		return res, fmt.Errorf("%s: %w", path, err)
	}
	if out == nil {
		return res, nil
	}
	backup, err := replaceFile(path, data, out)
	if err != nil {
		return res, err
	}
	res.Changed, res.Backup = true, backup
	return res, nil
}

// RewriteCodexConfig is WrapCodexConfig on the file's contents: the new
// contents (nil when nothing changes) and what happened to each server.
func RewriteCodexConfig(data []byte, prefix []string, undo bool) ([]byte, []HostServer, error) {
	if len(prefix) == 0 {
		return nil, nil, errors.New("no warden command to run the servers with")
	}
	doc, err := decodeTOML(data)
	if err != nil {
		return nil, nil, err
	}
	raw, ok := doc["mcp_servers"]
	if !ok {
		return nil, nil, nil
	}
	table, ok := raw.(map[string]any)
	if !ok {
		return nil, nil, errors.New("mcp_servers is not a table of servers")
	}
	keys, order, err := codexKeys(data)
	if err != nil {
		return nil, nil, err
	}
	want, _ := decodeTOML(data) // what the file must decode to afterwards
	wantTable := want["mcp_servers"].(map[string]any)
	var servers []HostServer
	var edits []edit
	for _, name := range order {
		e, ok := table[name].(map[string]any)
		if !ok {
			servers = append(servers, HostServer{Name: name, Action: "skipped", Why: "not a table"})
			continue
		}
		var hs HostServer
		var es []edit
		if undo {
			hs, es = unwrapCodex(data, name, e, keys[name])
		} else {
			hs, es = wrapCodex(data, name, e, keys[name], prefix)
		}
		servers = append(servers, hs)
		if hs.Action == "wrapped" || hs.Action == "unwrapped" {
			edits = append(edits, es...)
			wantTable[name] = e // wrapCodex and unwrapCodex changed e as the edits do
		}
	}
	if len(edits) == 0 {
		return nil, servers, nil
	}
	out, err := applyEdits(data, edits)
	if err != nil {
		return nil, servers, err
	}
	// The edit must change exactly the servers' values it meant to, and
	// nothing else: decode the result and compare.
	got, err := decodeTOML(out)
	if err != nil || !reflect.DeepEqual(got, want) {
		return nil, servers, errors.New("rewriting mcp_servers would change more than the servers' command, args and url; nothing was written (please report this file's layout)")
	}
	return out, servers, nil
}

// decodeTOML decodes a whole TOML document, its errors naming the line.
func decodeTOML(data []byte) (map[string]any, error) {
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, fmt.Errorf("not valid TOML (line %d, column %d): %s", row, col, de.Error())
		}
		return nil, fmt.Errorf("not valid TOML: %w", err)
	}
	if doc == nil {
		doc = map[string]any{}
	}
	return doc, nil
}

// tomlKey is where one key of a server (mcp_servers.NAME.KEY) is written.
type tomlKey struct {
	keyStart     int    // the first part of the (maybe dotted) key
	lastStart    int    // the last part, KEY itself
	lastEnd      int    // the end of the last part
	valStart     int    // the value
	valEnd       int    // the end of the value
	lastRaw      string // the last part as written ("url", "'url'")
	inline       bool   // inside an inline table
	indent       string // the whitespace before the key on its line (not inline)
	elems        [][2]int
	elemsOK      bool // elems are the array's elements, all strings
	valueIsArray bool
}

// prefixText is the key's dotted prefix as written ("", "fs.", "mcp_servers.fs.").
func (k tomlKey) prefixText(data []byte) string { return string(data[k.keyStart:k.lastStart]) }

// sep is what stands between the key and its value (" = ").
func (k tomlKey) sep(data []byte) string { return string(data[k.lastEnd:k.valStart]) }

// codexKeys finds where each server's keys are written, and the servers in
// the order the file first names them.
func codexKeys(data []byte) (map[string]map[string]tomlKey, []string, error) {
	keys := map[string]map[string]tomlKey{}
	var order []string
	note := func(path []string) {
		if len(path) >= 2 && path[0] == "mcp_servers" && !slices.Contains(order, path[1]) {
			order = append(order, path[1])
		}
	}
	var walk func(kv *unstable.Node, base []string, inline bool, p *unstable.Parser)
	walk = func(kv *unstable.Node, base []string, inline bool, p *unstable.Parser) {
		path := slices.Clone(base)
		var first, last *unstable.Node
		for it := kv.Key(); it.Next(); {
			n := it.Node()
			if first == nil {
				first = n
			}
			last = n
			path = append(path, string(n.Data))
		}
		note(path)
		v := kv.Value()
		if v.Kind == unstable.InlineTable {
			for it := v.Children(); it.Next(); {
				if c := it.Node(); c.Kind == unstable.KeyValue {
					walk(c, path, true, p)
				}
			}
			return
		}
		if len(path) != 3 || path[0] != "mcp_servers" {
			return
		}
		k := tomlKey{
			keyStart:  int(first.Raw.Offset),
			lastStart: int(last.Raw.Offset),
			lastEnd:   int(last.Raw.Offset + last.Raw.Length),
			valEnd:    int(kv.Raw.Offset + kv.Raw.Length),
			lastRaw:   string(p.Raw(last.Raw)),
			inline:    inline,
		}
		i := k.lastEnd
		for i < len(data) && (data[i] == ' ' || data[i] == '\t') {
			i++
		}
		if i < len(data) && data[i] == '=' {
			i++
		}
		for i < len(data) && (data[i] == ' ' || data[i] == '\t') {
			i++
		}
		k.valStart = i
		if !inline {
			line := bytes.LastIndexByte(data[:k.keyStart], '\n') + 1
			k.indent = string(data[line:k.keyStart])
		}
		if v.Kind == unstable.Array {
			k.valueIsArray, k.elemsOK = true, true
			for it := v.Children(); it.Next(); {
				c := it.Node()
				if c.Kind != unstable.String {
					k.elemsOK = false
					continue
				}
				k.elems = append(k.elems, [2]int{int(c.Raw.Offset), int(c.Raw.Offset + c.Raw.Length)})
			}
		}
		if keys[path[1]] == nil {
			keys[path[1]] = map[string]tomlKey{}
		}
		keys[path[1]][path[2]] = k
	}
	var p unstable.Parser
	p.Reset(data)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = table[:0]
			for it := e.Key(); it.Next(); {
				table = append(table, string(it.Node().Data))
			}
			note(table)
		case unstable.KeyValue:
			walk(e, table, false, &p)
		}
	}
	if err := p.Error(); err != nil {
		return nil, nil, fmt.Errorf("not valid TOML: %w", err)
	}
	return keys, order, nil
}

// edit replaces data[start:end] with text.
type edit struct {
	start, end int
	text       string
}

func applyEdits(data []byte, edits []edit) ([]byte, error) {
	sort.Slice(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	var out bytes.Buffer
	at := 0
	for _, e := range edits {
		if e.start < at || e.end < e.start || e.end > len(data) {
			return nil, errors.New("overlapping edits of mcp_servers; nothing was written")
		}
		out.Write(data[at:e.start])
		out.WriteString(e.text)
		at = e.end
	}
	out.Write(data[at:])
	return out.Bytes(), nil
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		case r == utf8.RuneError:
			b.WriteString(`\uFFFD`) // not valid UTF-8: the decoded check refuses it
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlStrings is each of ss as a TOML basic string, joined by ", ".
func tomlStrings(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = tomlString(s)
	}
	return strings.Join(q, ", ")
}

// stringList is v as a list of strings.
func stringList(v any) ([]string, bool) {
	l, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(l))
	for i, x := range l {
		if out[i], ok = x.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

// newline is the file's line ending.
func newline(data []byte) string {
	if bytes.Contains(data, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

// wrapCodex wraps one server: what it did, the edits to the file, and e
// changed as the edits change it.
func wrapCodex(data []byte, name string, e map[string]any, ks map[string]tomlKey, prefix []string) (HostServer, []edit) {
	hs := HostServer{Name: name, Action: "skipped"}
	if !ValidName(name) {
		hs.Why = "its name cannot name MCP tools (use letters, digits, - and single _)"
		return hs, nil
	}
	command, hasCommand := e["command"].(string)
	var args []string
	if a, present := e["args"]; present {
		var ok bool
		if args, ok = stringList(a); !ok {
			hs.Why = "its args are not a list of strings"
			return hs, nil
		}
	}
	if _, present := e["command"]; present && !hasCommand {
		hs.Why = "its command is not a string"
		return hs, nil
	}
	if wrapped(command, args, name) {
		hs.Action = "already wrapped"
		return hs, nil
	}
	url, hasURL := e["url"].(string)
	cmdKey, argsKey, urlKey := ks["command"], ks["args"], ks["url"]
	switch {
	case hasCommand && hasURL:
		hs.Why = "it has both a command and a url"
		return hs, nil
	case hasCommand:
		if _, written := ks["command"]; !written {
			hs.Why = "its command is not written as a key warden can find"
			return hs, nil
		}
		if command == "" {
			hs.Why = "its command is empty"
			return hs, nil
		}
		if _, present := e["args"]; present && (!argsKey.valueIsArray || !argsKey.elemsOK) {
			hs.Why = "its args are not written as a list of strings"
			return hs, nil
		}
		rawCmd := string(data[cmdKey.valStart:cmdKey.valEnd])
		lead := tomlStrings(slices.Concat(prefix[1:], []string{"mcp", "--name", name, "--"})) + ", " + rawCmd
		edits := []edit{{cmdKey.valStart, cmdKey.valEnd, tomlString(prefix[0])}}
		if _, present := e["args"]; present {
			edits = append(edits, edit{argsKey.valStart + 1, argsKey.valStart + 1, lead + ", "})
		} else {
			edits = append(edits, edit{cmdKey.valEnd, cmdKey.valEnd, codexNextKey(data, cmdKey) + "args" + cmdKey.sep(data) + "[" + lead + "]"})
		}
		e["command"] = prefix[0]
		e["args"] = toAny(slices.Concat(prefix[1:], []string{"mcp", "--name", name, "--", command}, args))
		hs.Action = "wrapped"
		return hs, edits
	case hasURL:
		for _, k := range codexStdioOnly {
			if _, present := e[k]; present {
				hs.Why = "it sets " + k + " (headers or credentials), which warden mcp --upstream does not pass on yet"
				return hs, nil
			}
		}
		if _, present := e["args"]; present {
			hs.Why = "it has both a url and args"
			return hs, nil
		}
		if _, written := ks["url"]; !written {
			hs.Why = "its url is not written as a key warden can find"
			return hs, nil
		}
		if urlKey.lastRaw != "url" {
			hs.Why = "its url key is quoted; write it as url = … and run this again"
			return hs, nil
		}
		rawURL := string(data[urlKey.valStart:urlKey.valEnd])
		sep := urlKey.sep(data)
		text := "command" + sep + tomlString(prefix[0]) + codexNextKey(data, urlKey) + "args" + sep +
			"[" + tomlStrings(slices.Concat(prefix[1:], []string{"mcp", "--name", name, "--upstream"})) + ", " + rawURL + "]"
		delete(e, "url")
		e["command"] = prefix[0]
		e["args"] = toAny(slices.Concat(prefix[1:], []string{"mcp", "--name", name, "--upstream", url}))
		hs.Action = "wrapped"
		return hs, []edit{{urlKey.lastStart, urlKey.valEnd, text}}
	default:
		hs.Why = "it has neither a command nor a url"
		return hs, nil
	}
}

// codexNextKey is what goes between a key's value and a key added after it,
// up to the new key's last part: ", " in an inline table, else a new line
// with the same indentation; then the same dotted prefix.
func codexNextKey(data []byte, after tomlKey) string {
	if after.inline {
		return ", " + after.prefixText(data)
	}
	return newline(data) + after.indent + after.prefixText(data)
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// unwrapCodex puts back one server wrapCodex wrapped, cutting out exactly
// what it added.
func unwrapCodex(data []byte, name string, e map[string]any, ks map[string]tomlKey) (HostServer, []edit) {
	hs := HostServer{Name: name, Action: "skipped", Why: "not wrapped by warden"}
	command, _ := e["command"].(string)
	args, _ := stringList(e["args"])
	if !wrapped(command, args, name) {
		return hs, nil
	}
	handEdited := "it runs warden mcp, but not as warden install wrote it (edited since?); put it back by hand"
	cmdKey, argsKey := ks["command"], ks["args"]
	if _, written := ks["command"]; !written || !argsKey.valueIsArray || !argsKey.elemsOK || len(argsKey.elems) != len(args) {
		hs.Why = handEdited
		return hs, nil
	}
	i := slices.Index(args, "mcp") + 3 // past mcp --name NAME
	c := i + 1                         // the server's command or url
	if c >= len(args) || (args[i] != "--" && args[i] != "--upstream") {
		hs.Why = handEdited
		return hs, nil
	}
	elem := argsKey.elems[c]
	rawOrig := string(data[elem[0]:elem[1]])
	lead := tomlStrings(args[:c]) + ", " + rawOrig
	if string(data[argsKey.valStart:elem[1]]) != "["+lead {
		hs.Why = handEdited
		return hs, nil
	}
	if args[i] == "--upstream" {
		// command = WARDEN, then args = [… --upstream, URL] right after it.
		sep := cmdKey.sep(data)
		added := codexNextKey(data, cmdKey) + "args" + sep + "[" + lead + "]"
		if c != len(args)-1 || cmdKey.lastRaw != "command" || argsKey.sep(data) != sep ||
			cmdKey.valEnd+len(added) != argsKey.valEnd || string(data[cmdKey.valEnd:argsKey.valEnd]) != added {
			hs.Why = handEdited
			return hs, nil
		}
		delete(e, "command")
		delete(e, "args")
		e["url"] = args[c]
		hs.Action, hs.Why = "unwrapped", ""
		return hs, []edit{{cmdKey.lastStart, argsKey.valEnd, "url" + sep + rawOrig}}
	}
	edits := []edit{{cmdKey.valStart, cmdKey.valEnd, rawOrig}}
	added := codexNextKey(data, cmdKey) + "args" + cmdKey.sep(data) + "[" + lead + "]"
	switch {
	case c == len(args)-1 && cmdKey.valEnd+len(added) == argsKey.valEnd && string(data[cmdKey.valEnd:argsKey.valEnd]) == added:
		// The args key was added: take it out again.
		edits = append(edits, edit{cmdKey.valEnd, argsKey.valEnd, ""})
		delete(e, "args")
	case strings.HasPrefix(string(data[elem[1]:]), ", "):
		edits = append(edits, edit{argsKey.valStart + 1, elem[1] + 2, ""})
		e["args"] = toAny(args[c+1:])
	default:
		hs.Why = handEdited
		return hs, nil
	}
	e["command"] = args[c]
	hs.Action, hs.Why = "unwrapped", ""
	return hs, edits
}
