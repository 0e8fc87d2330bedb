package fsguard

import (
	"strings"

	"github.com/agentwarden/warden"
)

// systemDirs are the directories programs need to run at all (binaries,
// libraries, their configuration, toolchains' sources): warden's sandbox
// leaves them readable in every profile (package sandbox's systemRoots), so
// a denied path that holds one, such as the default /etc/** and /usr/**,
// cannot be hidden from a sandboxed command.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}

// inSystemDir reports whether p (absolute and clean) is or lies in one of
// systemDirs.
func inSystemDir(p string) bool {
	for _, d := range systemDirs {
		if p == d || under(p, d) {
			return true
		}
	}
	return false
}

// DeniedToRead is Denied for a program that only reads name. A file that
// every user of the machine may read, named in a system directory and lying
// in one, is not denied by a denied path: no sandbox can hide it from the
// programs that need it, and it holds no secret of the user's
// (/etc/os-release, /usr/include/stdio.h, Go's sources under /usr/local/go).
// Files there that only some may read (/etc/shadow, a TLS key, a cluster's
// admin config) stay denied, as does warden's own home wherever it lies.
func (g *Guard) DeniedToRead(name, cwd string) (warden.Decision, bool) {
	t, _, ok := g.target(Read, name, cwd, false)
	if !ok {
		return warden.Decision{}, false
	}
	d, denied := g.denial(t)
	if !denied || d.Rule != "fs.denied" || !g.publicRead(t) {
		return d, denied
	}
	return warden.Decision{}, false
}

// publicRead reports whether t is a public system file (publicSystemFile)
// that no denied path of the user's own covers. Only a denial of a whole
// tree that holds a system directory gives way: a file the user denied by
// name or by a pattern of its own (/etc/myapp/token, **/*.pem) stays
// denied, as the sandbox masks it. (Warden's home is judged before.)
func (g *Guard) publicRead(t target) bool {
	if t.viaProc || !inSystemDir(t.lexical) {
		return false
	}
	if t.names != nil {
		// A bounded listing shows names: what it lists must be
		// listable by everyone, not every file in the tree readable.
		if !publicListing(t.real, t.names) {
			return false
		}
	} else if !publicSystemFile(t.real) {
		return false
	}
	lex, real := foldCase(t.lexical), foldCase(t.real)
	for k := range g.denied {
		pt := &g.denied[k]
		if (pt.match(lex, "") || real != lex && pt.match(real, "")) && !pt.systemTree() {
			return false
		}
	}
	return true
}

// systemTree reports whether the denied pattern (case-folded) is a whole
// tree ("DIR/**") that holds one of systemDirs: /etc/**, /usr/**, /**.
func (pt *pattern) systemTree() bool {
	r, ok := strings.CutSuffix(pt.glob, "/**")
	if pt.relative || !ok || strings.ContainsAny(r, `*?[]{}\`) {
		return false
	}
	if r == "" {
		return true
	}
	for _, d := range systemDirs {
		if d = foldCase(d); d == r || under(d, r) {
			return true
		}
	}
	return false
}
