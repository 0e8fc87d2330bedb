package inject

import (
	"slices"
	"strings"
)

// StringsOf is the text a decoded JSON value (from encoding/json into any)
// carries for a scan: every string in it, one a line, map keys visited in
// order so that the text is the same every time, cut at max bytes (Clip).
// A tool's output reaches the hooks and the MCP proxy as JSON; its strings
// are what the model reads.
func StringsOf(v any, max int) string {
	var b strings.Builder
	collectStrings(&b, v, max)
	return Clip(b.String(), max)
}

func collectStrings(b *strings.Builder, v any, max int) {
	if b.Len() >= max {
		return
	}
	switch t := v.(type) {
	case string:
		b.WriteString(t)
		b.WriteByte('\n')
	case []any:
		for _, e := range t {
			collectStrings(b, e, max)
		}
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			collectStrings(b, t[k], max)
		}
	}
}

// Clip cuts s to at most n bytes, at a rune boundary.
func Clip(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
