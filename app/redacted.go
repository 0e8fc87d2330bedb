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
// finds, no URL with a user or password in it).
func settingsOnly(b []byte) []byte {
	var out bytes.Buffer
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		t := strings.TrimSpace(line)
		keep := t == "" || strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]") && !strings.ContainsAny(t, "=:@")
		if i := strings.IndexAny(t, "=:"); !keep && i > 0 && !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, ";") {
			key, value := t[:i], t[i+1:]
			keep = !credentialKey().MatchString(key) && redact.String(line) == line &&
				!(strings.Contains(value, "://") && strings.Contains(value, "@"))
		}
		if keep {
			out.WriteString(line)
			out.WriteByte('\n')
		}
	}
	return out.Bytes()
}
