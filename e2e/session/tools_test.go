package session

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// runTool runs a call of one of Claude Code's own tools (not Bash) as
// Claude Code does once its hooks let it: in its own process, on the host,
// with no sandbox, so the hook's verdict is the only guard. input is the
// tool_input as JSON. What the tool would show the agent is the output;
// a tool that fails exits 1 with its error as the output.
func (h *host) runTool(tool, input string, timeout time.Duration) (exit int, output string) {
	var in map[string]any
	if err := json.Unmarshal([]byte(input), &in); err != nil {
		return 1, "tool_input is not a JSON object: " + err.Error()
	}
	str := func(k string) string { s, _ := in[k].(string); return s }
	path := func(k string) string { return h.toolPath(str(k)) }
	out, err := func() (string, error) {
		switch tool {
		case "Read":
			data, err := os.ReadFile(path("file_path"))
			return string(data), err
		case "Write":
			p := path("file_path")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return "", err
			}
			return "", os.WriteFile(p, []byte(str("content")), 0o644)
		case "Edit":
			return "", editFile(path("file_path"), []map[string]any{in})
		case "MultiEdit":
			var edits []map[string]any
			if list, ok := in["edits"].([]any); ok {
				for _, e := range list {
					if m, ok := e.(map[string]any); ok {
						edits = append(edits, m)
					}
				}
			}
			return "", editFile(path("file_path"), edits)
		case "NotebookEdit":
			p := h.toolPath(str("notebook_path"))
			nb := map[string]any{"cells": []any{map[string]any{"cell_type": "code", "source": str("new_source"), "metadata": map[string]any{}, "outputs": []any{}}},
				"metadata": map[string]any{}, "nbformat": 4, "nbformat_minor": 5}
			b, _ := json.Marshal(nb)
			return "", os.WriteFile(p, b, 0o644)
		case "Glob":
			return h.glob(str("pattern"), path("path"))
		case "Grep", "LS":
			where := h.dir()
			if str("path") != "" {
				where = path("path")
			}
			if tool == "LS" {
				entries, err := os.ReadDir(where)
				var b strings.Builder
				for _, e := range entries {
					fmt.Fprintln(&b, filepath.Join(where, e.Name()))
				}
				return b.String(), err
			}
			// Claude Code's Grep is ripgrep over hidden files too; grep -r
			// reads the same files (it follows no symlink below the start).
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			out, err := exec.CommandContext(ctx, "grep", "-rIn", "-E", "-e", str("pattern"), "--", where).CombinedOutput()
			return string(out), err
		case "WebFetch":
			ctx, cancel := context.WithTimeout(context.Background(), min(timeout, 10*time.Second))
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, "GET", str("url"), nil)
			if err != nil {
				return "", err
			}
			resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
			if err != nil {
				return "", err
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			return string(body), err
		}
		return "", nil // a tool with no effect on this machine (WebSearch, TodoWrite…)
	}()
	if err != nil {
		return 1, out + err.Error()
	}
	return 0, out
}

// toolPath is where a file tool's path leads: ~ is the home, a relative
// path is taken from the working directory.
func (h *host) toolPath(p string) string {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		return filepath.Join(h.w.home, p[1:])
	case p != "" && !filepath.IsAbs(p):
		return filepath.Join(h.dir(), p)
	}
	return p
}

// editFile applies Edit's replacements (old_string, new_string,
// replace_all) to a file, in order.
func editFile(path string, edits []map[string]any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	text := string(data)
	for _, e := range edits {
		old, _ := e["old_string"].(string)
		repl, _ := e["new_string"].(string)
		all, _ := e["replace_all"].(bool)
		switch {
		case old == "":
			text = repl + text
		case !strings.Contains(text, old):
			return fmt.Errorf("old_string not found in %s", path)
		case all:
			text = strings.ReplaceAll(text, old, repl)
		default:
			text = strings.Replace(text, old, repl, 1)
		}
	}
	return os.WriteFile(path, []byte(text), 0o644)
}

// glob lists the paths a Glob pattern (with ** for any depth) matches
// below dir, or from the root for an absolute pattern.
func (h *host) glob(pattern, dir string) (string, error) {
	if dir == "" {
		dir = h.dir()
	}
	if !filepath.IsAbs(pattern) {
		pattern = filepath.Join(dir, pattern)
	}
	// Walk from the longest prefix with no glob character.
	root := pattern
	for strings.ContainsAny(root, "*?[{") {
		root = filepath.Dir(root)
	}
	re, err := regexp.Compile("^" + globRegexp(pattern) + "$")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	n := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if n++; n > 100000 {
			return filepath.SkipAll
		}
		if re.MatchString(p) {
			fmt.Fprintln(&b, p)
		}
		return nil
	})
	return b.String(), err
}

// globRegexp turns a glob into a regular expression: ** crosses
// directories, * and ? do not.
func globRegexp(g string) string {
	var b strings.Builder
	for i := 0; i < len(g); i++ {
		switch c := g[i]; {
		case strings.HasPrefix(g[i:], "**/"):
			b.WriteString("(.*/)?")
			i += 2
		case strings.HasPrefix(g[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}
