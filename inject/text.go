package inject

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
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

// scanners caches ScannerFor's scanners by rules file and its version.
var scanners struct {
	sync.Mutex
	m map[string]*Scanner
}

// ScannerFor returns a scanner over the shipped payload database and the
// rules in the file at path ("" for none), built once per version of the
// file (its size and modification time) and shared. An error says the file
// cannot be read or holds an invalid rule: the caller cannot tell a text
// clean, and must say so.
func ScannerFor(path string) (*Scanner, error) {
	key := ""
	var data []byte
	if path != "" {
		fi, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("read the payload rules file %s: %w", path, err)
		}
		key = fmt.Sprintf("%s\x00%d\x00%d", path, fi.Size(), fi.ModTime().UnixNano())
	}
	scanners.Lock()
	defer scanners.Unlock()
	if s := scanners.m[key]; s != nil {
		return s, nil
	}
	var opts Options
	if path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return nil, fmt.Errorf("read the payload rules file %s: %w", path, err)
		}
		if opts.Extra, err = ParseRules(data, path); err != nil {
			return nil, err
		}
	}
	s, err := NewScanner(opts)
	if err != nil {
		return nil, err
	}
	if scanners.m == nil || len(scanners.m) > 8 {
		scanners.m = map[string]*Scanner{}
	}
	scanners.m[key] = s
	return s, nil
}
