package hook

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/config"
)

// Scope says which settings file Install and Uninstall edit. The zero value
// is Project.
type Scope uint8

const (
	// Project is the settings file inside a project directory, e.g.
	// <project>/.claude/settings.json.
	Project Scope = iota
	// User is the settings file in the user's home directory, e.g.
	// ~/.claude/settings.json.
	User
)

// String returns "project" or "user".
func (s Scope) String() string {
	switch s {
	case Project:
		return "project"
	case User:
		return "user"
	}
	return fmt.Sprintf("scope(%d)", uint8(s))
}

// InstallResult says what Install or Uninstall did. The zero value means
// nothing was looked at.
type InstallResult struct {
	// Path is the settings file.
	Path string
	// Changed is true when the file was written; false when it already was as
	// asked (or, for Uninstall, had no warden entry).
	Changed bool
	// Backup is the copy of the previous file, or "" when there was none or
	// nothing changed.
	Backup string
	// Command is the hook command installed, or the first one removed.
	Command string
}

// now is the clock used to name backups.
var now = time.Now

// Install registers `<wardenPath> hook <host>` in host's settings file for
// scope: <projectDir>/<dir>/<file> or <homeDir>/<dir>/<file>. A wardenHome
// that is not "" is added as `--home <wardenHome>`, so the hook decides with
// the home it was installed from whatever the host's environment holds. Every other key
// and hook is kept; an existing warden entry for host with another command is
// replaced. The previous file is copied to a timestamped backup and the new
// one written atomically. Installing twice changes nothing the second time. A
// settings file that is not valid JSON, or whose hooks are not shaped as the
// host expects, is refused with a *warden.Error and left untouched.
func Install(host string, scope Scope, projectDir, homeDir, wardenPath, wardenHome string) (InstallResult, error) {
	return InstallFast(host, scope, projectDir, homeDir, "", wardenPath, wardenHome)
}

// InstallFast is Install with the hook command started by the client at
// clientPath (warden-exec, which runs `<wardenPath> hook <host> …` through
// the session's supervisor when one is up, and else execs it); "" is none.
func InstallFast(host string, scope Scope, projectDir, homeDir, clientPath, wardenPath, wardenHome string) (InstallResult, error) {
	hs, path, err := locate(host, scope, projectDir, homeDir)
	if err != nil {
		return InstallResult{}, err
	}
	if wardenPath == "" || strings.ContainsAny(wardenPath, "\x00\n\r") {
		return InstallResult{}, warden.Errorf(warden.EInvalid, "the path to warden %q is not usable in a hook command", wardenPath)
	}
	if strings.ContainsAny(clientPath, "\x00\n\r") {
		return InstallResult{}, warden.Errorf(warden.EInvalid, "the path to warden-exec %q is not usable in a hook command", clientPath)
	}
	if strings.ContainsAny(wardenHome, "\x00\n\r") {
		return InstallResult{}, warden.Errorf(warden.EInvalid, "the warden home %q is not usable in a hook command", wardenHome)
	}
	command := shellQuote(wardenPath) + " hook " + host
	if wardenHome != "" {
		command += " --home " + shellQuote(wardenHome)
	}
	if clientPath != "" {
		command = shellQuote(clientPath) + " " + command
	}
	if !hookCommand(command, host) {
		return InstallResult{}, warden.Errorf(warden.EInvalid, "the warden binary at %s is not named warden", wardenPath).
			WithHint("install from a binary named warden, so that uninstall can find the hook again")
	}
	res := InstallResult{Path: path, Command: command}
	old, top, hooks, err := load(path)
	if err != nil {
		return res, err
	}
	if installed(hs, hooks, host, command) && (hs.prepare == nil || !needsPrepare(hs, top)) {
		return res, nil
	}
	if _, err := removeEntries(hs, hooks, host); err != nil {
		return res, malformed(path, err)
	}
	for _, ev := range hs.events {
		if err := appendEntry(hs, hooks, ev, command); err != nil {
			return res, malformed(path, err)
		}
	}
	hb, err := hooks.MarshalJSON()
	if err != nil {
		return res, warden.Errorf(warden.EInternal, "encode hooks for %s", path).Wrap(err)
	}
	top.set("hooks", hb)
	if hs.prepare != nil {
		hs.prepare(top)
	}
	return save(res, path, old, top, scope)
}

// Uninstall removes from host's settings file for scope exactly the hook
// entries whose command contains `warden hook <host>`, and any group or event
// left empty by that. A missing file, or one without such an entry, is left
// alone. The previous file is backed up and the new one written atomically.
func Uninstall(host string, scope Scope, projectDir, homeDir string) (InstallResult, error) {
	hs, path, err := locate(host, scope, projectDir, homeDir)
	if err != nil {
		return InstallResult{}, err
	}
	res := InstallResult{Path: path}
	old, top, hooks, err := load(path)
	if err != nil || old == nil {
		return res, err
	}
	removed, err := removeEntries(hs, hooks, host)
	if err != nil {
		return res, malformed(path, err)
	}
	if len(removed) == 0 {
		return res, nil
	}
	res.Command = removed[0]
	if hooks.len() == 0 {
		top.del("hooks")
	} else {
		hb, err := hooks.MarshalJSON()
		if err != nil {
			return res, warden.Errorf(warden.EInternal, "encode hooks for %s", path).Wrap(err)
		}
		top.set("hooks", hb)
	}
	return save(res, path, old, top, scope)
}

// locate returns host's settings description and the file's path for scope.
func locate(host string, scope Scope, projectDir, homeDir string) (hostSettings, string, error) {
	hs, ok := settings[host]
	if !ok {
		return hostSettings{}, "", warden.Errorf(warden.EInvalid, "unknown hook host %q", host).
			WithHint(fmt.Sprintf("use one of %v", HostNames()))
	}
	var base string
	switch scope {
	case Project:
		base = projectDir
		if base == "" {
			return hostSettings{}, "", warden.Errorf(warden.EInvalid, "no project directory to install the %s hook in", host)
		}
	case User:
		base = homeDir
		if base == "" {
			return hostSettings{}, "", warden.Errorf(warden.EInvalid, "no home directory to install the %s hook in", host).
				WithHint("set HOME")
		}
	default:
		return hostSettings{}, "", warden.Errorf(warden.EInvalid, "unknown install scope %v", scope)
	}
	return hs, filepath.Join(base, hs.dir, hs.file), nil
}

// load reads a settings file. A missing file gives old == nil and empty
// objects; an empty file counts as an empty object.
func load(path string) (old []byte, top, hooks *ordered, err error) {
	old, err = os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, newOrdered(), newOrdered(), nil
	case err != nil:
		return nil, nil, nil, warden.Errorf(warden.EInvalid, "read the settings file %s", path).Wrap(err)
	}
	if old == nil {
		old = []byte{}
	}
	top = newOrdered()
	if len(strings.TrimSpace(string(old))) > 0 {
		if top, err = parseOrdered(old); err != nil {
			return nil, nil, nil, malformed(path, err)
		}
	}
	hooks = newOrdered()
	if raw, ok := top.get("hooks"); ok {
		if hooks, err = parseOrdered(raw); err != nil {
			return nil, nil, nil, malformed(path, fmt.Errorf("its hooks key is not a JSON object: %w", err))
		}
	}
	return old, top, hooks, nil
}

func malformed(path string, err error) error {
	return warden.Errorf(warden.EInvalid, "the settings file %s is not valid: %v", path, err).Wrap(err).
		WithHint("fix the file, or move it aside and run the command again; warden wrote nothing")
}

// save backs up the previous file (when there was one) and writes top to path
// atomically, following a symbolic link at path to the file it names.
func save(res InstallResult, path string, old []byte, top *ordered, scope Scope) (InstallResult, error) {
	data, err := encode(top)
	if err != nil {
		return res, warden.Errorf(warden.EInternal, "encode the settings file %s", path).Wrap(err)
	}
	target := path
	perm := fs.FileMode(0o644)
	if info, err := os.Lstat(path); err == nil {
		if info.Mode()&fs.ModeSymlink != 0 {
			if target, err = filepath.EvalSymlinks(path); err != nil {
				return res, warden.Errorf(warden.EInvalid, "follow the link %s", path).Wrap(err)
			}
			if info, err = os.Stat(target); err != nil {
				return res, warden.Errorf(warden.EInvalid, "read the settings file %s", target).Wrap(err)
			}
		}
		perm = info.Mode().Perm()
	}
	if old != nil {
		if res.Backup, err = backup(target, old); err != nil {
			return res, err
		}
	} else {
		dirPerm := fs.FileMode(0o755)
		if scope == User {
			dirPerm = 0o700
		}
		if err := os.MkdirAll(filepath.Dir(target), dirPerm); err != nil {
			return res, warden.Errorf(warden.EInvalid, "create %s", filepath.Dir(target)).Wrap(err)
		}
	}
	if err := config.WriteAtomic(target, data, perm); err != nil {
		return res, warden.Errorf(warden.EInvalid, "write the settings file %s", target).Wrap(err)
	}
	res.Changed = true
	return res, nil
}

// backup writes old next to path as path.warden-backup-<UTC time>, adding a
// counter when that name is taken. Backups are readable by the owner only.
func backup(path string, old []byte) (string, error) {
	stamp := path + ".warden-backup-" + now().UTC().Format("20060102T150405Z")
	for i := 0; i < 1000; i++ {
		name := stamp
		if i > 0 {
			name = fmt.Sprintf("%s-%d", stamp, i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", warden.Errorf(warden.EInvalid, "back up %s", path).Wrap(err)
		}
		_, werr := f.Write(old)
		if werr == nil {
			werr = f.Sync()
		}
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return "", warden.Errorf(warden.EInvalid, "back up %s to %s", path, name).Wrap(werr)
		}
		return name, nil
	}
	return "", warden.Errorf(warden.EConflict, "too many backups of %s this second", path)
}

// shellQuote quotes p for a POSIX shell when it holds anything but plain
// path characters.
func shellQuote(p string) string {
	plain := true
	for _, c := range p {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("/._-+:@%,=~\\", c)) {
			plain = false
			break
		}
	}
	if plain {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}
