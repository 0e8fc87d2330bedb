package config

import (
	"bytes"
	"errors"
	"reflect"
	"strconv"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/clip"
	yaml "go.yaml.in/yaml/v3"
)

// FileMode is the permission of a policy file written by this package.
const FileMode = 0o600

// Set sets the dotted key in the policy file at path to value and rewrites the
// file atomically (WriteAtomic, mode 0600), keeping its comments and key order.
// The file is re-encoded in the layout of DefaultFile: two-space indents and a
// blank line between sections; blank lines inside a section are not kept.
// value is a scalar (500, true, SQUID), or a JSON or YAML list or map for list
// and map keys: '["SQUID","FOO"]', '{"my_tool": 2}'. A whole section cannot be
// set, only its keys. Missing mappings on the way to key are created.
//
// Set checks the resulting file as Load would and refuses, with a
// *warden.Error of code EInvalid whose message says what is allowed, when the
// change would make the key's section invalid (unknown key, wrong type, value
// out of range) — or when the section already has other problems, so warden
// would ignore the new value, unless the change fixes one of them. A refused or
// failed Set leaves the file byte for byte as it was.
func Set(path, key, value string) error {
	t, err := resolve(key)
	if err != nil {
		return err
	}
	if t.sec < 0 {
		return warden.Errorf(warden.EInvalid, "cannot set version: it is the file format version, %d, and only warden changes it", Version)
	}
	if t.typ.Kind() == reflect.Struct {
		// Whole sections are not replaced: that would also let one command
		// rewrite keys, such as the kill switch, that callers guard by name.
		return warden.Errorf(warden.EInvalid, "cannot set %s as a whole; set its keys one by one, e.g. %s.%s", key, key, fieldNames(t.typ)[0]).
			WithHint("`warden config list` shows every key")
	}
	return withLock(path, func() error { return set(path, t, key, value) })
}

// set is Set's read-modify-write, run under the policy file's lock.
func set(path string, t target, key, value string) error {
	data, err := readFile(path)
	if err != nil {
		return err
	}
	before, doc, err := parse(data)
	if err != nil {
		var we *warden.Error
		if errors.As(err, &we) {
			return warden.Errorf(warden.EInvalid, "cannot set %s: %s", key, we.Message).WithHint(we.Hint)
		}
		return err
	}
	v, err := parseValue(t, value)
	if err != nil {
		return err
	}
	segs := append([]string{sections[t.sec].name()}, t.path...)
	if err := setNode(doc.Content[0], segs, v); err != nil {
		return err
	}
	out, err := encodeDocument(doc)
	if err != nil {
		return warden.Errorf(warden.EInternal, "cannot set %s: could not write the file", key).Wrap(err)
	}
	after, _, err := parse(out)
	if err != nil {
		return warden.Errorf(warden.EInvalid, "cannot set %s: the file would not load: %s", key, warden.UserMessage(err))
	}
	if err := refusal(t, v, before, after); err != nil {
		return err
	}
	if bytes.Equal(out, data) {
		return nil
	}
	return WriteAtomic(path, out, FileMode)
}

// SetKillSwitch turns the emergency stop on or off in the policy file at path.
// Turning it on succeeds even when the safety section has other problems,
// since an invalid safety section keeps a kill switch the file turns on.
func SetKillSwitch(path string, on bool) error {
	return Set(path, "safety.killSwitchActive", strconv.FormatBool(on))
}

// parseValue reads a VALUE argument as a YAML node ready to go into the file.
func parseValue(t target, value string) (*yaml.Node, error) {
	bad := func(why string) error {
		return warden.Errorf(warden.EInvalid, "cannot set %s: %s; want %s", t.key, why, t.want).
			WithHint("give a scalar such as 500 or true, or a JSON list or map such as [\"SQUID\"] or {\"my_tool\": 2}")
	}
	if strings.TrimSpace(value) == "" {
		return nil, bad("the value is empty")
	}
	doc, second, err := decodeOne([]byte(value))
	switch {
	case err != nil:
		return nil, bad("the value is not a scalar, or a JSON or YAML list or map (" + clip2(strings.TrimPrefix(err.Error(), "yaml: ")) + ")")
	case second > 0:
		return nil, bad("the value holds more than one YAML document")
	case doc == nil || len(doc.Content) == 0:
		return nil, bad("the value is empty")
	}
	n := doc.Content[0]
	if a := findAlias(n); a != nil {
		return nil, bad("aliases (*" + clip.String(a.Value, maxShown) + ") are not supported in " + FileName)
	}
	tidy(n)
	return n, nil
}

// findAlias returns the first alias in n, or nil.
func findAlias(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode {
		return n
	}
	for _, c := range n.Content {
		if a := findAlias(c); a != nil {
			return a
		}
	}
	return nil
}

// tidy drops comments and anchors from a value and sets its layout: block
// mappings, one-line lists of scalars, block lists of anything else, and plain
// scalars where plain text keeps their meaning (the encoder quotes a string
// that would otherwise read as another type).
func tidy(n *yaml.Node) {
	n.HeadComment, n.LineComment, n.FootComment, n.Anchor = "", "", "", ""
	switch n.Kind {
	case yaml.MappingNode:
		n.Style &^= yaml.FlowStyle
	case yaml.SequenceNode:
		n.Style &^= yaml.FlowStyle
		flow := true
		for _, c := range n.Content {
			flow = flow && c.Kind == yaml.ScalarNode
		}
		if flow && len(n.Content) > 0 {
			n.Style |= yaml.FlowStyle
		}
	case yaml.ScalarNode:
		if n.Tag != "" && n.Style&yaml.TaggedStyle == 0 && !strings.Contains(n.Value, "\n") {
			n.Style &^= yaml.SingleQuotedStyle | yaml.DoubleQuotedStyle
		}
	}
	for _, c := range n.Content {
		tidy(c)
	}
}

// setNode puts v at segs under mapping m, creating mappings on the way and
// keeping the comments of a value it replaces.
func setNode(m *yaml.Node, segs []string, v *yaml.Node) error {
	for i, seg := range segs {
		last := i == len(segs)-1
		idx := -1
		for j := 0; j+1 < len(m.Content); j += 2 {
			if k := m.Content[j]; k.Kind == yaml.ScalarNode && k.Value == seg {
				idx = j + 1
				break
			}
		}
		if idx < 0 {
			next := v
			if !last {
				next = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			}
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: seg}, next)
			m = next
			continue
		}
		old := m.Content[idx]
		switch {
		case last:
			v.HeadComment, v.LineComment, v.FootComment = old.HeadComment, old.LineComment, old.FootComment
			m.Content[idx] = v
		case old.Kind == yaml.MappingNode:
			m = old
		case isNull(old):
			nm := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", HeadComment: old.HeadComment, LineComment: old.LineComment, FootComment: old.FootComment}
			m.Content[idx] = nm
			m = nm
		default:
			return warden.Errorf(warden.EInvalid, "cannot set %s: %s holds %s, not a mapping", strings.Join(segs, "."), strings.Join(segs[:i+1], "."), describeNode(old)).
				WithHint("fix " + FileName + " by hand; `warden config validate` shows what is wrong")
		}
	}
	return nil
}

// refusal returns why the change from before to after must not be written, or
// nil.
func refusal(t target, v *yaml.Node, before, after *Loaded) error {
	sec := sections[t.sec].name()
	id := func(p Problem) string { return p.Key + "\x00" + p.Message }
	now := make(map[string]bool)
	var bad []string
	afterCount := 0
	oldSet := make(map[string]bool)
	for _, p := range sectionProblems(before, sec) {
		oldSet[id(p)] = true
	}
	for _, p := range sectionProblems(after, sec) {
		afterCount++
		now[id(p)] = true
		if oldSet[id(p)] && !under(p.Key, t.key) {
			continue
		}
		if p.Key == t.key {
			bad = append(bad, p.Message)
		} else {
			bad = append(bad, p.Key+": "+p.Message)
		}
	}
	if len(bad) > 0 {
		return warden.Errorf(warden.EInvalid, "cannot set %s: %s", t.key, strings.Join(bad, "; ")).
			WithHint(FileName + " was not changed")
	}
	if afterCount == 0 || afterCount < len(oldSet) || effectiveIs(after, t, v) {
		return nil
	}
	// Every remaining problem was there before; name them at their current lines.
	var remaining []string
	for _, p := range sectionProblems(before, sec) {
		if now[id(p)] {
			remaining = append(remaining, p.Error())
		}
	}
	return warden.Errorf(warden.EInvalid, "cannot set %s: the %s section has other problems, so warden ignores all of it and would ignore this value too: %s", t.key, sec, strings.Join(remaining, "; ")).
		WithHint("fix those first (`warden config validate` lists them); " + FileName + " was not changed")
}

// sectionProblems returns l's problems in section sec, without the note that
// the section fell back to its defaults.
func sectionProblems(l *Loaded, sec string) []Problem {
	var out []Problem
	for _, p := range l.Problems {
		if p.Section == sec && !strings.HasPrefix(p.Message, fallbackMessage) {
			out = append(out, p)
		}
	}
	return out
}

// under reports whether problem key k is key or inside it.
func under(k, key string) bool {
	return k == key || strings.HasPrefix(k, key+".") || strings.HasPrefix(k, key+"[")
}

// effectiveIs reports whether the effective value at t in l equals the value
// v that was set, as when turning on a kill switch that an invalid section keeps
// on anyway.
func effectiveIs(l *Loaded, t target, v *yaml.Node) bool {
	got, err := l.Get(t.key)
	if err != nil {
		return false
	}
	want := reflect.New(t.typ).Elem()
	c := &checker{}
	if c.decode(v, want, t.key, "", ""); len(c.problems) > 0 {
		return false
	}
	return reflect.DeepEqual(got, plain(want))
}

// encodeDocument renders doc as the file's text: two-space indents and a blank
// line before every top-level section after the first.
func encodeDocument(doc *yaml.Node) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, errors.New("YAML encoder failed")
		}
	}()
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return sectionBreaks(b.Bytes()), nil
}

// sectionBreaks puts a blank line before each top-level key after the first,
// and before the comment lines heading it. yaml drops blank lines when it
// re-encodes a file; this restores the ones that matter most for reading. The
// keys' lines come from parsing text again, so a line inside a value is never
// mistaken for a key; if that parse fails, text is returned as it is.
func sectionBreaks(text []byte) []byte {
	doc, _, err := decodeOne(text)
	if err != nil || doc == nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return text
	}
	root := doc.Content[0]
	lines := bytes.SplitAfter(text, []byte("\n"))
	breakAt := make(map[int]bool) // 0-based line indexes that get a blank line before them
	for i := 2; i+1 < len(root.Content); i += 2 {
		at := root.Content[i].Line - 1
		if at <= 0 || at >= len(lines) || root.Content[i].Column != 1 {
			continue
		}
		for at > 0 && len(lines[at-1]) > 0 && lines[at-1][0] == '#' {
			at--
		}
		if at > 0 && !isBlank(lines[at-1]) {
			breakAt[at] = true
		}
	}
	if len(breakAt) == 0 {
		return text
	}
	out := make([]byte, 0, len(text)+len(breakAt))
	for i, line := range lines {
		if breakAt[i] {
			out = append(out, '\n')
		}
		out = append(out, line...)
	}
	return out
}

func isBlank(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }

// KillSwitchIn reports whether a policy file's text turns the emergency
// stop on (safety.killSwitchActive: true). Text that is not valid YAML is
// read line by line, so a broken file that says so still counts: the stop
// fails closed.
func KillSwitchIn(data []byte) bool {
	var doc struct {
		Safety struct {
			KillSwitchActive bool `yaml:"killSwitchActive"`
		} `yaml:"safety"`
	}
	if err := yaml.Unmarshal(data, &doc); err == nil {
		return doc.Safety.KillSwitchActive
	}
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "killSwitchActive:"); ok {
			v, _, _ = strings.Cut(v, "#")
			if b, err := strconv.ParseBool(strings.Trim(strings.TrimSpace(v), `"'`)); err == nil && b {
				return true
			}
		}
	}
	return false
}
