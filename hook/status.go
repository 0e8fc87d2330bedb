package hook

import (
	"path/filepath"
)

// Rewrites reports whether host can run a rewritten command, which is how
// warden contains the shell commands it allows: Claude Code, Codex and
// Gemini CLI can; Cursor cannot, so its allowed commands run on the host.
func Rewrites(host string) bool { return host != "cursor" }

// Installed reports whether the settings file of host for scope holds one of
// warden's hook entries, and where that file is.
func Installed(host string, scope Scope, projectDir, homeDir string) (bool, string) {
	hs, path, err := locate(host, scope, projectDir, homeDir)
	if err != nil {
		return false, ""
	}
	_, _, hooks, err := load(path)
	if err != nil || hooks == nil {
		return false, filepath.Clean(path)
	}
	for _, ev := range hooks.keys {
		entries, ok := eventEntries(hs, hooks.vals[ev])
		if !ok {
			continue
		}
		for _, e := range entries {
			if hookCommand(entryCommand(e), host) {
				return true, path
			}
		}
	}
	return false, path
}
