package app

import (
	"path"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/agentwarden/warden/internal/regfile"
)

// commandPaths are the files a git configuration value that runs a
// program (core.fsmonitor, a diff textconv, a filter…) names by a path,
// read as the shell git hands it to reads it: a word with a slash, quoted
// or not ("tools/fs monitor.sh"), the tail of one that starts with an
// expansion ("$(git rev-parse --show-toplevel)/tools/tc.sh" is
// tools/tc.sh from the top of the work tree, where git runs it), a file
// sourced or read on standard input, a Python module run with -m (its .py
// and its package directory), each relative to the directory a cd before
// it in the value leads to. A bare name is looked up on the PATH, not in
// the work tree. ok is false when the value does not parse as shell: what
// it names is not known. What the named program itself loads is not
// followed.
func commandPaths(v string) (paths []string, ok bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "!")
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(v), "")
	if err != nil {
		f, err = syntax.NewParser().Parse(strings.NewReader(v), "")
		if err != nil {
			return nil, false
		}
	}
	base := ""
	add := func(p string) {
		if p == "" || strings.HasPrefix(p, "~") || path.IsAbs(p) {
			if p != "" {
				paths = append(paths, p)
			}
			return
		}
		paths = append(paths, path.Join(base, p))
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			for _, r := range n.Redirs {
				if r.Op == syntax.RdrIn && r.Word != nil {
					if p, _ := wordPath(r.Word); p != "" {
						add(p)
					}
				}
			}
		case *syntax.CallExpr:
			for _, a := range n.Assigns {
				if a.Value != nil {
					if p, _ := wordPath(a.Value); strings.Contains(p, "/") {
						add(p)
					}
				}
			}
			if len(n.Args) == 0 {
				return true
			}
			prog, _ := wordPath(n.Args[0])
			switch path.Base(prog) {
			case "cd", "pushd":
				if len(n.Args) > 1 {
					if dir, lit := wordPath(n.Args[1]); lit && !path.IsAbs(dir) && !strings.HasPrefix(dir, "~") {
						base = path.Join(base, dir)
					}
				}
				return true
			case "source", ".":
				if len(n.Args) > 1 {
					if p, _ := wordPath(n.Args[1]); p != "" {
						add(p)
					}
				}
				return true
			}
			module := strings.HasPrefix(path.Base(prog), "python")
			for i, w := range n.Args {
				p, _ := wordPath(w)
				if module && p == "-m" && i+1 < len(n.Args) {
					if m, lit := wordPath(n.Args[i+1]); lit && m != "" && !strings.ContainsAny(m, "/ ") {
						mp := strings.ReplaceAll(m, ".", "/")
						add(mp + ".py")
						add(mp + "/__init__.py")
					}
					continue
				}
				if strings.HasPrefix(p, "-") {
					if _, val, ok := strings.Cut(p, "="); ok && strings.Contains(val, "/") {
						add(val)
					}
					continue
				}
				if j := strings.IndexByte(p, '='); j >= 0 && !strings.Contains(p[:j], "/") {
					p = p[j+1:] // VAR=path
				}
				if strings.Contains(p, "/") {
					add(p)
				}
			}
		}
		return true
	})
	return paths, true
}

// wordPath is the text of a shell word as a path: its literal parts,
// quoted or not; a word that starts with an expansion is the literal text
// after it with its leading slash taken off (a path from the top of the
// work tree, as "$(git rev-parse --show-toplevel)/x" is), and lit is false
// for it; a word with an expansion elsewhere is "".
func wordPath(w *syntax.Word) (p string, lit bool) {
	var b strings.Builder
	lit = true
	var parts []syntax.WordPart
	for _, part := range w.Parts {
		if dq, ok := part.(*syntax.DblQuoted); ok {
			parts = append(parts, dq.Parts...)
			continue
		}
		parts = append(parts, part)
	}
	for i, part := range parts {
		switch part := part.(type) {
		case *syntax.Lit:
			b.WriteString(part.Value)
		case *syntax.SglQuoted:
			b.WriteString(part.Value)
		default:
			if i != 0 || !lit {
				return "", false
			}
			lit = false
		}
	}
	p = b.String()
	if !lit {
		p = strings.TrimPrefix(p, "/")
	}
	return p, lit
}

// maxSourcedScript bounds a script read for the files it sources, and
// maxSourcedDepth how far warden follows them.
const (
	maxSourcedScript = 64 << 10
	maxSourcedDepth  = 3
)

// sourcedBy are the files the shell script at file (absolute) sources
// (. FILE, source FILE), and those they source in turn, as absolute paths
// from top, the directory git runs the program in: a helper a named
// program loads runs as much as the program (red-team-20: fsmon.sh
// sourced fsmon.env). A file that is not a regular one of at most
// maxSourcedScript bytes, or not shell, sources nothing here.
func sourcedBy(file, top string) []string {
	var out []string
	seen := map[string]bool{file: true}
	var follow func(file string, depth int)
	follow = func(file string, depth int) {
		if depth >= maxSourcedDepth {
			return
		}
		data, err := regfile.ReadFile(file, maxSourcedScript)
		if err != nil {
			return
		}
		f, err := syntax.NewParser().Parse(strings.NewReader(string(data)), "")
		if err != nil {
			return
		}
		syntax.Walk(f, func(n syntax.Node) bool {
			call, ok := n.(*syntax.CallExpr)
			if !ok || len(call.Args) < 2 {
				return true
			}
			if prog, lit := wordPath(call.Args[0]); !lit || prog != "." && prog != "source" {
				return true
			}
			p, _ := wordPath(call.Args[1])
			if p == "" || strings.HasPrefix(p, "~") {
				return true
			}
			if !filepath.IsAbs(p) {
				p = filepath.Join(top, p)
			}
			if p = filepath.Clean(p); !seen[p] {
				seen[p] = true
				out = append(out, p)
				follow(p, depth+1)
			}
			return true
		})
	}
	follow(file, 0)
	return out
}
