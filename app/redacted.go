package app

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/agentwarden/warden/redact"
)

// Some credential stores are also where a tool keeps its settings: ~/.npmrc
// holds the registry, the scopes' registries and the update notifier's
// switch beside the auth tokens. Masked whole, npm in the sandbox loses
// them (it asks the public registry, prints notices the user turned off).
// So such a file, when it is hidden, reads in the sandbox as a copy of its
// settings alone: every line that names or holds a credential, and every
// comment, left out.

// settingsFiles are the hidden credential files shown as their settings.
var settingsFiles = []string{"~/.npmrc", "~/.yarnrc.yml", "~/.pypirc", "~/.gradle/gradle.properties"}

// credentialKey matches a setting's name that says it holds a credential.
// Compiled on first use, not at package init (TestNoInitWorkInWarden).
var credentialKey = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)auth|token|pass|secret|credential|user|email|login|key|cert|cookie|session`)
})

// redactedCopies returns, for each of settingsFiles that is hidden (and a
// regular file of at most 64 KB), its settings without credentials.
func redactedCopies(hidden []string, userHome string) map[string][]byte {
	if userHome == "" {
		return nil
	}
	var out map[string][]byte
	for _, f := range settingsFiles {
		path := filepath.Join(userHome, strings.TrimPrefix(f, "~/"))
		if !slices.Contains(hidden, path) {
			continue
		}
		st, err := os.Lstat(path)
		if err != nil || !st.Mode().IsRegular() || st.Size() > 64<<10 {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		if out == nil {
			out = map[string][]byte{}
		}
		out[path] = settingsOnly(b)
	}
	return out
}

// settingsOnly keeps the lines of a key=value, key: value or INI file that
// are settings: blank lines, section headers, and settings whose name does
// not say credential and whose value holds none (no secret the redactor
// finds, no URL with a user or password in it). A setting's value may go
// on past its line, and goes with it: a line ending in a backslash
// continues on the next (a properties file's signing.password=\), and the
// lines below a setting that are indented further are its value (an INI
// value on the next lines, a YAML block scalar or mapping under
// npmAuthToken: |).
func settingsOnly(b []byte) []byte {
	var out bytes.Buffer
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	dropBelow := -1 // the indentation of the last setting left out, while its value goes on
	for i := 0; i < len(lines); i++ {
		first := i
		for continued(lines[i]) && i+1 < len(lines) {
			i++
		}
		logical := lines[first : i+1]
		t := strings.TrimSpace(logical[0])
		ind := indentation(logical[0])
		if dropBelow >= 0 && (t == "" || ind > dropBelow) {
			continue // the value of the setting left out
		}
		dropBelow = -1
		keep := t == "" || strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]") && !strings.ContainsAny(t, "=:@")
		if i := strings.IndexAny(t, "=:"); !keep && i > 0 && !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, ";") {
			whole := strings.Join(logical, "\n")
			value := strings.Join(append([]string{t[i+1:]}, logical[1:]...), "\n")
			keep = !credentialKey().MatchString(settingName(t)) && redact.String(whole) == whole &&
				!(strings.Contains(value, "://") && strings.Contains(value, "@"))
			if !keep {
				dropBelow = ind
			}
		}
		if keep {
			for _, l := range logical {
				out.WriteString(l)
				out.WriteByte('\n')
			}
		}
	}
	return out.Bytes()
}

// settingName is what names the setting on a line (trimmed): the text
// before its first "=", or before its first ":" where it has no "="
// (//registry.npmjs.org/:_authToken=… is named by its whole left side).
func settingName(t string) string {
	if i := strings.IndexByte(t, '='); i >= 0 {
		return t[:i]
	}
	if i := strings.IndexByte(t, ':'); i >= 0 {
		return t[:i]
	}
	return t
}

// continued reports whether line ends in an odd number of backslashes: its
// value goes on on the next line (properties files).
func continued(line string) bool {
	n := len(line) - len(strings.TrimRight(line, "\\"))
	return n%2 == 1
}

// indentation counts the spaces and tabs line starts with.
func indentation(line string) int {
	return len(line) - len(strings.TrimLeft(line, " \t"))
}
