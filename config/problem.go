package config

import (
	"fmt"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Problem is one thing wrong inside warden.yaml that did not stop the file from
// loading: an unknown key, a wrong type, an invalid value, or the note that a
// section fell back to its defaults. The zero value is an empty report.
type Problem struct {
	// Section is the top-level section the problem is in; "" for a problem at
	// the top of the file (e.g. an unknown section).
	Section string
	// Key is the full dotted key, e.g. "tools.tiers.foo" or
	// "tools.overrides[0].tier".
	Key string
	// Line is the 1-based line in the file, or 0 when unknown.
	Line int
	// Message says what is wrong and what is allowed.
	Message string
}

// Error formats the problem as "warden.yaml:LINE: KEY: message".
func (p Problem) Error() string {
	var b strings.Builder
	b.WriteString(FileName)
	if p.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(p.Line))
	}
	b.WriteString(": ")
	if p.Key != "" {
		b.WriteString(p.Key)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// checker collects the problems of one section.
type checker struct {
	section string
	// node is the section's value in the file, used to find the line of a key;
	// nil when checking values that did not come from a file.
	node     *yaml.Node
	problems []Problem
}

// add records a problem at an exact key and line.
func (c *checker) add(key string, line int, msg string) {
	c.problems = append(c.problems, Problem{Section: c.section, Key: key, Line: line, Message: msg})
}

// reportf records a problem at path (string mapping keys and int list indexes
// under the section), finding its line in the file.
func (c *checker) reportf(path []any, format string, args ...any) {
	c.add(keyText(c.section, path), c.lineOf(path), fmt.Sprintf(format, args...))
}

// keyText renders a path under section as a dotted key.
func keyText(section string, path []any) string {
	var b strings.Builder
	b.WriteString(section)
	for _, seg := range path {
		switch s := seg.(type) {
		case string:
			b.WriteByte('.')
			b.WriteString(s)
		case int:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s))
			b.WriteByte(']')
		}
	}
	return b.String()
}

// lineOf returns the line of the value at path, or of the nearest enclosing
// node present in the file, or 0.
func (c *checker) lineOf(path []any) int {
	n := c.node
	if n == nil {
		return 0
	}
	line := n.Line
	for _, seg := range path {
		switch s := seg.(type) {
		case string:
			v := mappingValue(n, s)
			if v == nil {
				return line
			}
			n = v
		case int:
			if n.Kind != yaml.SequenceNode || s < 0 || s >= len(n.Content) {
				return line
			}
			n = n.Content[s]
		}
		line = n.Line
	}
	return line
}

// mappingValue returns the value of the first key named key in mapping n, or
// nil when n is not a mapping or has no such key.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
