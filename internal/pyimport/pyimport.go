// Package pyimport tells which entries of a directory Python's import
// system would load a module from, when that directory is on a program's
// path (its sys.path[0], the directory of the script it runs): a module
// file (NAME.py, a sourceless NAME.pyc, an extension module NAME.so with
// any ABI tag) or a regular package's initialisation file
// (NAME/__init__.py, .pyc, .so). A directory without one is a namespace
// package, which never takes a name from a module found later on the path.
package pyimport

import "strings"

// ModuleFile reports whether the directory entry name is a file Python
// imports a module from: NAME.py, NAME.pyc or NAME[.TAG].so, NAME an
// identifier.
func ModuleFile(name string) bool {
	mod, suffix, ok := strings.Cut(name, ".")
	if !ok || !Identifier(mod) {
		return false
	}
	return suffix == "py" || suffix == "pyc" || suffix == "so" || strings.HasSuffix(suffix, ".so")
}

// PackageInit reports whether the entry name of a package directory is
// its initialisation file: __init__.py, __init__.pyc or __init__[.TAG].so.
func PackageInit(name string) bool {
	return strings.HasPrefix(name, "__init__.") && ModuleFile(name)
}

// Identifier reports whether s is a Python identifier of ASCII letters,
// digits and underscores (a module name Python's finders look up; other
// Unicode identifiers are left out).
func Identifier(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
