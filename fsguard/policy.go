package fsguard

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// Action is what a request does to a path.
type Action string

// The filesystem capability's actions.
const (
	Read   Action = "read"
	Write  Action = "write"
	List   Action = "list"
	Delete Action = "delete"
)

// Actions lists every action, in the order the policy file documents them.
var Actions = []Action{Read, Write, List, Delete}

// Valid reports whether a is one of the four actions.
func (a Action) Valid() bool { return slices.Contains(Actions, a) }

// Level is what a matching allowed rule does.
type Level uint8

// Levels. The zero value asks: a rule whose level was never set never allows
// silently.
const (
	Ask Level = iota
	Auto
)

// String names the level as in the policy file.
func (l Level) String() string {
	if l == Auto {
		return "auto"
	}
	return "ask"
}

// Rule is one allowed_paths entry: Pattern, for Actions, at Level.
type Rule struct {
	Pattern string
	Actions []Action
	Level   Level
}

// Policy is the filesystem section of the policy, with ~ still unexpanded.
type Policy struct {
	// Workspace is the directory agents have full access to. Required.
	Workspace string
	// Allowed rules are tried in order after the workspace.
	Allowed []Rule
	// Denied patterns always win, over the workspace too.
	Denied []string
	// WardenHome is warden's own home. Everything in it but the sandbox
	// directory (where the default workspace lives) is denied, and no policy
	// can lift that: an agent may never read or change its own guard.
	WardenHome string
	// UserHome is the user's home directory, for "~"; empty means "~" paths
	// and patterns cannot be used.
	UserHome string
	// Caches are the tool caches the agent's sandboxed commands read and
	// write (sandbox.cache_paths: absolute, or "~/…"): read and listed
	// where no rule says otherwise (fs.tool_cache). Denied paths in them
	// stay denied.
	Caches []string
	// ReadHome says the agent's commands run in a sandbox that reads the
	// user's whole home but for the denied paths (the workspace profile
	// with read_all): a file there no rule names is read and listed by
	// the file tools too (fs.home_read), as cat reads it in the sandbox.
	// Never written through them.
	ReadHome bool
	// Protected are paths relative to the project (sandbox.protected_paths:
	// ".git/config", ".claude/" for a directory) that a write or delete
	// asks about wherever a rule allows it: at the project's root and in
	// any directory below, and anything in a .git directory (a host runs
	// what they say). Letter case is ignored.
	Protected []string
}

// SandboxDir is the directory inside warden's home that agents may be given;
// the rest of the home is warden's own.
const SandboxDir = "sandbox"

// DefaultDenied are the denied paths of the default policy file.
var DefaultDenied = []string{
	"~/.ssh/**", "~/.gnupg/**", "~/.aws/**", "~/.config/gcloud/**", "~/.kube/**", "~/.netrc",
	"/etc/**", "/usr/**", "/var/**",
}

// PathMax is the longest path, in bytes, the guard judges (Linux PATH_MAX).
const PathMax = 4096

// CheckPattern reports what is wrong with a policy pattern, or nil. relative
// says whether a project-relative pattern is allowed (allowed_paths) or the
// pattern must be absolute, "~/…" or start with "**" (denied_paths).
func CheckPattern(p string, relative bool) error {
	switch {
	case p == "":
		return fmt.Errorf("empty path pattern")
	case strings.IndexByte(p, 0) >= 0:
		return fmt.Errorf("path pattern %q has a NUL byte", p)
	case !utf8.ValidString(p):
		return fmt.Errorf("path pattern %q is not valid UTF-8", p)
	case len(p) > PathMax:
		return fmt.Errorf("path pattern is longer than %d bytes", PathMax)
	case strings.HasPrefix(p, "~") && p != "~" && !strings.HasPrefix(p, "~/"):
		return fmt.Errorf("path pattern %q names another user's home; only ~ and ~/… are expanded", p)
	case !doublestar.ValidatePattern(p):
		return fmt.Errorf("path pattern %q is not a valid glob (check its [ ] and { } pairs)", p)
	}
	if hasDotDot(p) {
		return fmt.Errorf("path pattern %q has a .. element; write the directory it means", p)
	}
	if !relative && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") && !strings.HasPrefix(p, "**") {
		return fmt.Errorf("denied path %q must be absolute, start with ~/ or start with ** (to match anywhere)", p)
	}
	return nil
}

// hasDotDot reports whether p has a ".." element.
func hasDotDot(p string) bool {
	for i := strings.Index(p, ".."); i >= 0; {
		if (i == 0 || p[i-1] == '/') && (i+2 == len(p) || p[i+2] == '/') {
			return true
		}
		j := strings.Index(p[i+1:], "..")
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// pattern is one compiled glob.
type pattern struct {
	text string // as written in the policy, for reasons
	glob string // the glob matched: absolute, or relative to the project
	// base is a literal prefix every match starts with, and last a literal
	// final element every match ends with ("" when unknown): cheap filters
	// before the glob is run.
	base, last string
	relative   bool
}

// compile appends to dst pattern text, expanded by expand. A denied pattern is
// case-folded, for matching without regard to letter case, and one starting
// with "**" matches anywhere; an allowed pattern that is neither absolute nor
// "~/…" is relative to the project. compile appends one pattern, plus a
// second one when the literal directory the pattern starts from is itself
// reached through a symlink: a path is resolved before matching, so the
// pattern must also name where that directory really is.
func compile(dst []pattern, text string, e expanded, denied bool, fsys *memoLinks) []pattern {
	dst = append(dst, newPattern(text, e.glob, e.relative, denied))
	if e.base == "" {
		return dst
	}
	if real, err := fsys.resolve(e.base); err == nil && real.path != e.base && !real.viaProc {
		alias := escapeMeta(real.path) + strings.TrimPrefix(e.glob, e.base)
		dst = append(dst, newPattern(text, alias, false, denied))
	}
	return dst
}

// expanded is a pattern with ~ expanded and, when absolute, cleaned.
type expanded struct {
	glob     string
	relative bool   // relative to the project
	base     string // the literal directory it starts from, when compile resolves it; else ""
}

// homeGlob is userHome as the start of a pattern: clean, its glob
// metacharacters escaped.
func homeGlob(userHome string) string {
	if userHome == "" {
		return ""
	}
	return escapeMeta(filepath.Clean(userHome))
}

// expand expands ~ in p (home is homeGlob's, "" when unknown) and cleans it
// when absolute.
func expand(p, home string, denied bool) (expanded, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home == "" {
			return expanded{}, fmt.Errorf("path pattern %q uses ~ but the user's home directory is unknown", p)
		}
		p = home + p[1:]
	}
	if !strings.HasPrefix(p, "/") {
		return expanded{glob: p, relative: !denied}, nil
	}
	p = cleanPattern(p)
	base, _ := splitPattern(p)
	if strings.ContainsRune(base, '\\') || base == "/" {
		base = ""
	}
	return expanded{glob: p, base: base}, nil
}

func newPattern(text, glob string, relative, fold bool) pattern {
	if fold {
		glob = foldCase(glob)
	}
	pt := pattern{text: text, glob: glob, relative: relative}
	if i := strings.LastIndexByte(glob, '/'); i >= 0 && !strings.ContainsAny(glob[i+1:], `*?[]{}\`) && !strings.ContainsAny(glob[:i], "{}") {
		pt.last = glob[i+1:]
	}
	if !relative {
		base, _ := splitPattern(glob)
		if !strings.ContainsRune(base, '\\') && base != "." {
			pt.base = base
		}
	}
	return pt
}

// root is the path at or below which every match of an absolute pattern
// lies: the pattern itself when it has no wildcard, else its literal
// directory; "" when a match may lie anywhere.
func (pt *pattern) root() string {
	if pt.relative {
		return ""
	}
	if !strings.ContainsAny(pt.glob, `*?[]{}\`) {
		return pt.glob
	}
	return pt.base
}

// match reports whether the pattern matches path (absolute, clean, and
// case-folded when the pattern is). For a relative pattern, rel is path
// relative to the project ("" when path is not in the project).
func (pt *pattern) match(path, rel string) bool {
	if pt.relative {
		path = rel
		if path == "" {
			return false
		}
	} else if pt.base != "" && !strings.HasPrefix(path, pt.base) {
		return false
	}
	if pt.last != "" && path != pt.last && !(strings.HasSuffix(path, pt.last) && len(path) > len(pt.last) && path[len(path)-len(pt.last)-1] == '/') {
		return false
	}
	return doublestar.MatchUnvalidated(pt.glob, path)
}

// cleanPattern cleans the literal part of an absolute pattern: doublestar
// does not treat "//" or "/./" specially, and paths are cleaned before they
// are matched.
func cleanPattern(p string) string {
	if !strings.Contains(p, "//") && !strings.Contains(p, "/./") && !strings.HasSuffix(p, "/.") && (!strings.HasSuffix(p, "/") || p == "/") {
		return p // already clean
	}
	trailing := strings.HasSuffix(p, "/") && len(p) > 1
	segs := strings.Split(p, "/")
	out := segs[:1]
	for _, s := range segs[1:] {
		if s == "" || s == "." {
			continue
		}
		out = append(out, s)
	}
	c := strings.Join(out, "/")
	if c == "" {
		c = "/"
	}
	if trailing {
		// "dir/" means the directory and everything in it.
		c = strings.TrimSuffix(c, "/") + "/**"
	}
	return c
}

// splitPattern is doublestar.SplitPattern, without its unescaping of the
// base (a strings.Replacer, most of compiling a simple pattern) when the
// pattern has no backslash to unescape.
func splitPattern(p string) (base, rest string) {
	if strings.IndexByte(p, '\\') >= 0 {
		return doublestar.SplitPattern(p)
	}
	split := -1
	for i := 0; i < len(p); i++ {
		if c := p[i]; c == '/' {
			split = i
		} else if c == '*' || c == '?' || c == '[' || c == '{' {
			break
		}
	}
	switch {
	case split == 0:
		return "/", p[1:]
	case split > 0:
		return p[:split], p[split+1:]
	}
	return ".", p
}

// escapeMeta escapes the glob metacharacters in a literal path.
func escapeMeta(s string) string {
	if !strings.ContainsAny(s, `*?[]{}\`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]{}\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
