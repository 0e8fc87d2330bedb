package shellguard

import (
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/agentwarden/warden/shellguard/walk"
)

// Zone is the kind of place a path operand names.
type Zone uint8

// Zones, from the design note §5.3.
const (
	ZoneUnknown           Zone = iota // dynamic or unresolvable
	ZoneRoot                          // "/"
	ZoneSystem                        // /etc /usr /bin /var … (not /var/tmp)
	ZoneDevice                        // block and char devices
	ZoneNull                          // /dev/null, /dev/zero, /dev/std*, /dev/tty…
	ZoneNetwork                       // /dev/tcp/…, /dev/udp/…
	ZoneHomeRoot                      // $HOME itself, or another user's home
	ZoneHomeSensitive                 // ~/.ssh, ~/.aws, shell rc files, .env files anywhere…
	ZoneHomeOther                     // anything else under a home
	ZoneWorkspaceRoot                 // the workspace root itself: the git work tree holding the working directory, or that directory
	ZoneWorkspaceVCS                  // .git and below
	ZoneWorkspaceArtifact             // node_modules, dist, build, target…
	ZoneWorkspaceOther                // anything else in the workspace
	ZoneTemp                          // below /tmp, /var/tmp, $TMPDIR
	ZoneOutside                       // another absolute path
	// ZoneWorkspaceProtected is a path of the workspace the agent host,
	// an editor or warden obeys later, on the host (Policy.Protected:
	// .claude/, .vscode/, .mcp.json, .warden.yaml…), outside .git.
	ZoneWorkspaceProtected
)

var zoneNames = [...]string{"unknown", "root", "system", "device", "null", "network", "home_root", "home_sensitive", "home_other", "workspace_root", "workspace_vcs", "workspace_artifact", "workspace_other", "temp", "outside", "workspace_protected"}

// String names the zone as in rule ids.
func (z Zone) String() string {
	if int(z) < len(zoneNames) {
		return zoneNames[z]
	}
	return "zone?"
}

func (z Zone) isHome() bool {
	return z == ZoneHomeRoot || z == ZoneHomeSensitive || z == ZoneHomeOther
}

// dangerous reports zones where a recursive operation is never routine.
func (z Zone) dangerous() bool {
	switch z {
	case ZoneRoot, ZoneSystem, ZoneDevice, ZoneHomeRoot, ZoneHomeSensitive, ZoneWorkspaceRoot, ZoneWorkspaceVCS, ZoneWorkspaceProtected:
		return true
	}
	return false
}

var (
	artifactDirs = setOf("node_modules", "dist", "build", "out", "target", ".next", ".nuxt", "coverage",
		"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox", ".venv", "venv", ".gradle",
		".turbo", ".parcel-cache", ".cache", ".svelte-kit", ".angular", "bin", "obj", ".terraform")
	systemDirs = setOf("etc", "usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "boot", "opt", "var",
		"sys", "proc", "srv", "snap", "mnt", "media", "run", "nix", "System", "Library", "Applications",
		"private", "dev", "home", "Users", "root")
	nullDevices = setOf("/dev/null", "/dev/zero", "/dev/full", "/dev/stdin", "/dev/stdout", "/dev/stderr",
		"/dev/tty", "/dev/random", "/dev/urandom", "/dev/ptmx")
	// homeSensitive are names directly below a home directory.
	homeSensitive = setOf(".ssh", ".gnupg", ".aws", ".kube", ".netrc", ".bashrc", ".bash_profile",
		".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile", ".zshenv", ".zlogin", ".cshrc",
		".tcshrc", ".kshrc", ".git-credentials", ".pgpass", ".docker", ".npmrc", ".pypirc", ".azure",
		".password-store", ".vault-token", ".terraform.d", ".mozilla", ".local/share/keyrings")
	// homeSensitiveConfig are names below ~/.config.
	homeSensitiveConfig = setOf("gcloud", "gh", "systemd", "autostart", "fish", "hub", "op", "doctl")
)

// nameSet is a set of names whose lookup map is built on first use, so that
// nothing is built at package initialisation.
type nameSet struct {
	once  sync.Once
	names []string
	m     map[string]bool
}

func setOf(names ...string) *nameSet { return &nameSet{names: names} }

func (s *nameSet) has(n string) bool {
	s.once.Do(func() {
		s.m = make(map[string]bool, len(s.names))
		for _, x := range s.names {
			s.m[x] = true
		}
	})
	return s.m[n]
}

// zoner resolves path operands of one command.
type zoner struct {
	cwd, ws, home, tmp string
	// alts are the directories the command may run in when an earlier cd
	// may not have run (walk's Command.Cwd and CwdAlts; cwd is "" then): a
	// relative path operand is judged in each (cmdCtx.effect).
	alts      []string
	protected []string // Policy.Protected
	caches    []string // Policy.Caches, when a sandbox runs the commands
	worktrees []string // Env.Worktrees
}

func newZoner(c *walk.Command, env *Env, p *Policy) zoner {
	z := zoner{ws: path.Clean(env.Cwd), home: env.Home, tmp: env.Tmp, protected: p.Protected, worktrees: env.Worktrees}
	if p.SandboxAvailable {
		z.caches = p.Caches
	}
	if env.Cwd == "" {
		z.ws = ""
	}
	if z.home == "" {
		z.home = p.Home
	}
	// The project is the git work tree the working directory lies in, as
	// the workspace sandbox makes it writable: an agent in a package of a
	// monorepo (or one that ran cd sub) edits the repository's root files
	// and its other packages as its own (agent-shapes-13). Not where the
	// work tree is a hidden directory of the home (~/.config kept in git),
	// which the sandbox keeps read-only.
	if root := path.Clean(env.Root); env.Root != "" && z.ws != "" && (z.ws == root || strings.HasPrefix(z.ws, root+"/")) && !hiddenInHome(root, z.home) {
		z.ws = root
	}
	cwd := path.Clean(env.Cwd)
	if env.Cwd == "" {
		cwd = ""
	}
	if z.tmp == "" {
		z.tmp = p.Tmp
	}
	z.cwd = c.Cwd
	switch {
	case c.CwdDynamic:
		z.cwd = ""
	case len(c.CwdAlts) > 0 && z.cwd != "":
		// Which one is not known: everything that depends on the
		// directory sees it unknown, but a relative path operand is
		// judged in each (cmdCtx.effect).
		z.alts = append([]string{z.cwd}, c.CwdAlts...)
		z.cwd = ""
	case z.cwd == "":
		z.cwd = cwd
	}
	return z
}

// hiddenInHome reports whether dir is, or lies in, a hidden directory of
// the home (~/.config/nvim).
func hiddenInHome(dir, home string) bool {
	if home == "" {
		return false
	}
	rest, ok := strings.CutPrefix(dir, path.Clean(home)+"/")
	return ok && strings.HasPrefix(rest, ".")
}

// word returns the zone of a word operand; raw is its source text when known.
func (z zoner) word(w walk.Word, raw string) Zone {
	if w.Dynamic {
		return z.dynamic(w, raw)
	}
	v := w.Value
	if w.Glob {
		// The zone of the literal directory prefix of the glob.
		i := strings.IndexAny(v, "*?[")
		dir := v[:i]
		if j := strings.LastIndexByte(dir, '/'); j >= 0 {
			dir = dir[:j+1]
		} else {
			dir = ""
		}
		if dir == "" {
			if z.cwd == "" {
				return ZoneUnknown
			}
			zn := z.path(z.cwd)
			if zn == ZoneWorkspaceRoot {
				// A glob in the workspace matches workspace entries.
				return globSegments(v, ZoneWorkspaceOther)
			}
			if z.isTempRoot(z.cwd) && i > 0 && !hasDotDot(v) {
				return ZoneTemp // s5-*.log in /tmp: entries of it, named in part
			}
			return zn
		}
		if z.isTempRoot(dir) && i > len(dir) && !hasDotDot(v[len(dir):]) {
			// /tmp/s5-try.*: entries of a temporary directory, named in
			// part (not /tmp/*, which is all of it).
			return ZoneTemp
		}
		zn := z.path(dir)
		if zn == ZoneWorkspaceRoot {
			zn = ZoneWorkspaceOther
		}
		if zn == ZoneWorkspaceOther {
			return globSegments(v, zn)
		}
		return zn
	}
	return z.path(v)
}

// globSegments refines the zone of a glob in the workspace by its literal
// segments: every match of packages/*/dist is build output, every match of
// */.git a repository.
func globSegments(v string, zn Zone) Zone {
	segs := strings.Split(v, "/")
	if strings.Contains(v, "..") {
		return zn
	}
	for _, s := range segs {
		if s == ".git" {
			return ZoneWorkspaceVCS
		}
	}
	for _, s := range segs {
		if !strings.ContainsAny(s, "*?[") && artifactDirs.has(s) {
			return ZoneWorkspaceArtifact
		}
	}
	return zn
}

// dynamic judges a word with unknown parts by its known prefix and its text.
func (z zoner) dynamic(w walk.Word, raw string) Zone {
	r := strings.Trim(raw, `"'`)
	switch {
	case strings.HasPrefix(r, "${TMPDIR") || strings.HasPrefix(r, "$TMPDIR"):
		return ZoneTemp
	case strings.HasPrefix(r, "~") || strings.HasPrefix(r, "$HOME") || strings.HasPrefix(r, "${HOME"):
		rest := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(r, "~"), "$HOME"), "${HOME}")
		if rest == "" || rest == "/" || strings.HasPrefix(rest, "/*") {
			return ZoneHomeRoot
		}
		return ZoneHomeOther
	}
	if w.Prefix != "" {
		if strings.HasSuffix(w.Prefix, "/") || strings.Count(w.Prefix, "/") > 1 {
			zn := z.path(w.Prefix)
			if zn == ZoneWorkspaceRoot {
				return ZoneWorkspaceOther
			}
			if zn == ZoneRoot || zn == ZoneSystem {
				return zn
			}
			return ZoneUnknown
		}
		return ZoneUnknown
	}
	// "$X/…": if X is empty this is an absolute path from the root.
	if strings.HasPrefix(w.Value, "/") {
		return ZoneRoot
	}
	return ZoneUnknown
}

// inCache reports whether the clean absolute path p is one of the tool
// caches or lies in one. A secret file in one (an .env) is judged before.
func (z zoner) inCache(p string) bool {
	for _, c := range z.caches {
		if rest, ok := strings.CutPrefix(c, "~/"); ok {
			if z.home == "" {
				continue
			}
			c = path.Join(z.home, rest)
		}
		c = path.Clean(c)
		if !path.IsAbs(c) || c == "/" || z.home != "" && c == path.Clean(z.home) {
			continue
		}
		if p == c || strings.HasPrefix(p, c+"/") {
			return true
		}
	}
	return false
}

// path returns the zone of a literal path.
func (z zoner) path(p string) Zone {
	if p == "" {
		return ZoneUnknown
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if z.home == "" {
			rest := strings.TrimPrefix(strings.TrimPrefix(p, "~"), "/")
			return homeZone(path.Clean("/" + rest)[1:])
		}
		p = z.home + p[1:]
	}
	if !strings.HasPrefix(p, "/") {
		if z.cwd == "" {
			if base := path.Base(p); isSecretFile(base) {
				return ZoneHomeSensitive
			}
			return ZoneUnknown
		}
		p = z.cwd + "/" + p
	}
	p = path.Clean(p)
	if isSecretFile(path.Base(p)) {
		return ZoneHomeSensitive
	}
	if p == "/" {
		return ZoneRoot
	}
	if strings.HasPrefix(p, "/dev/") {
		switch {
		case nullDevices.has(p) || strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/dev/pts/") || strings.HasPrefix(p, "/dev/tty"):
			return ZoneNull
		case strings.HasPrefix(p, "/dev/tcp/") || strings.HasPrefix(p, "/dev/udp/"):
			return ZoneNetwork
		case p == "/dev/shm":
			return ZoneSystem
		case strings.HasPrefix(p, "/dev/shm/"):
			return ZoneTemp
		}
		return ZoneDevice
	}
	for t := range z.tempRoots {
		if p == t {
			return ZoneSystem
		}
	}
	if z.inCache(p) {
		return ZoneTemp
	}
	// The project and the user's home are theirs wherever they lie: a
	// project cloned into /tmp, a home under /tmp (some CI machines) are
	// judged as the project and the home, not as scratch space.
	if z.ws != "" && z.ws != "/" && z.ws != "." {
		if p == z.ws {
			return ZoneWorkspaceRoot
		}
		if rest, ok := strings.CutPrefix(p, z.ws+"/"); ok && !(z.home != "" && path.Clean(z.home) == z.ws) {
			zn := workspaceZone(rest)
			if zn != ZoneWorkspaceVCS && isProtected(rest, z.protected) {
				return ZoneWorkspaceProtected
			}
			return zn
		}
	}
	// The repository's other work trees beside the project are its work
	// as much as the project is (git worktree add ../feature); each is a
	// directory of the workspace, itself included.
	for _, wt := range z.worktrees {
		if p == wt {
			return ZoneWorkspaceOther
		}
		if rest, ok := strings.CutPrefix(p, wt+"/"); ok {
			zn := workspaceZone(rest)
			if zn != ZoneWorkspaceVCS && isProtected(rest, z.protected) {
				return ZoneWorkspaceProtected
			}
			return zn
		}
	}
	if z.home != "" {
		h := path.Clean(z.home)
		if p == h {
			return ZoneHomeRoot
		}
		if rest, ok := strings.CutPrefix(p, h+"/"); ok {
			return homeZone(rest)
		}
	}
	for t := range z.tempRoots {
		if strings.HasPrefix(p, t+"/") {
			return ZoneTemp
		}
	}
	for _, hb := range [...]string{"/home/", "/Users/"} {
		if rest, ok := strings.CutPrefix(p, hb); ok {
			_, below, _ := strings.Cut(rest, "/")
			if below == "" {
				return ZoneHomeRoot
			}
			return homeZone(below)
		}
	}
	if p == "/root" {
		return ZoneHomeRoot
	}
	if rest, ok := strings.CutPrefix(p, "/root/"); ok {
		return homeZone(rest)
	}
	first, _, _ := strings.Cut(p[1:], "/")
	if systemDirs.has(first) {
		return ZoneSystem
	}
	return ZoneOutside
}

// isTempRoot reports whether a literal path names a temp directory itself
// (/tmp, /var/tmp, $TMPDIR): a directory on every system, which a copied
// or moved file goes into and cannot replace.
func (z zoner) isTempRoot(p string) bool {
	if p == "" || strings.HasPrefix(p, "~") {
		return false
	}
	p = path.Clean(p)
	for t := range z.tempRoots {
		if p == t {
			return true
		}
	}
	return false
}

// hasDotDot reports whether a path has a .. component.
func hasDotDot(p string) bool {
	return slices.Contains(strings.Split(p, "/"), "..")
}

// tempRoots yields the temporary directories ($TMPDIR, /tmp, /var/tmp,
// /private/tmp), cleaned (for range, without allocating: path judges
// every operand with it).
func (z zoner) tempRoots(yield func(string) bool) {
	for _, t := range [...]string{z.tmp, "/tmp", "/var/tmp", "/private/tmp"} {
		if t != "" && t != "/" && !yield(path.Clean(t)) {
			return
		}
	}
}

// inTemp reports whether a literal path lies below a temp directory (/tmp,
// /var/tmp, $TMPDIR).
func (z zoner) inTemp(p string) bool {
	if strings.HasPrefix(p, "~") {
		return false
	}
	if !strings.HasPrefix(p, "/") {
		if z.cwd == "" {
			return false
		}
		p = z.cwd + "/" + p
	}
	p = path.Clean(p)
	for t := range z.tempRoots {
		if strings.HasPrefix(p, t+"/") {
			return true
		}
	}
	return false
}

// inWorkspace reports whether a literal path lies below the workspace root.
func (z zoner) inWorkspace(p string) bool {
	if !z.isProject() || strings.HasPrefix(p, "~") {
		return false
	}
	if !strings.HasPrefix(p, "/") {
		if z.cwd == "" {
			return false
		}
		p = z.cwd + "/" + p
	}
	return strings.HasPrefix(path.Clean(p), z.ws+"/")
}

// isProject reports whether the workspace is a project: known, not the
// root, and neither the home nor a directory that holds it.
func (z zoner) isProject() bool {
	if z.ws == "" || z.ws == "/" || z.ws == "." {
		return false
	}
	h := path.Clean(z.home)
	return z.home == "" || h != z.ws && !strings.HasPrefix(h, z.ws+"/")
}

// homeZone classifies a path relative to a home directory.
func homeZone(rest string) Zone {
	if rest == "" || rest == "." {
		return ZoneHomeRoot
	}
	first, below, _ := strings.Cut(rest, "/")
	if homeSensitive.has(first) {
		return ZoneHomeSensitive
	}
	if first == ".config" {
		sub, _, _ := strings.Cut(below, "/")
		if below == "" || homeSensitiveConfig.has(sub) {
			return ZoneHomeSensitive
		}
	}
	if first == "Library" && (strings.HasPrefix(below, "LaunchAgents") || strings.HasPrefix(below, "Keychains")) {
		return ZoneHomeSensitive
	}
	return ZoneHomeOther
}

// workspaceZone classifies a path relative to the workspace root. A
// repository's own ignore list (.git/info/exclude) is ordinary project
// data: what it ignores only changes what git reports and adds, and a
// discard saved first (shell.git.saved) never removes ignored files.
func workspaceZone(rest string) Zone {
	segs := strings.Split(rest, "/")
	for i, s := range segs {
		if s == ".git" {
			if len(segs) == i+3 && segs[i+1] == "info" && segs[i+2] == "exclude" {
				return ZoneWorkspaceOther
			}
			return ZoneWorkspaceVCS
		}
	}
	for _, s := range segs {
		if artifactDirs.has(s) {
			return ZoneWorkspaceArtifact
		}
	}
	return ZoneWorkspaceOther
}

// isProtected reports whether rest (a clean path relative to the workspace
// root) is one of protected's paths or below one, at the root or in any
// directory below it: an agent host or an editor started in a package of
// a monorepo obeys that package's .claude/ or .vscode/ as well. An entry
// ending in a slash is a directory.
func isProtected(rest string, protected []string) bool {
	for _, e := range protected {
		e = strings.TrimSuffix(path.Clean(e), "/")
		if e == "" || e == "." || strings.HasPrefix(e, "../") {
			continue
		}
		if rest == e || strings.HasPrefix(rest, e+"/") ||
			strings.HasSuffix(rest, "/"+e) || strings.Contains(rest, "/"+e+"/") {
			return true
		}
	}
	return false
}

// isSecretFile reports file names that hold secrets wherever they are.
func isSecretFile(base string) bool {
	if base == ".env" || (strings.HasPrefix(base, ".env.") && !strings.HasSuffix(base, ".example") && !strings.HasSuffix(base, ".sample") && !strings.HasSuffix(base, ".template")) {
		return true
	}
	switch base {
	case "id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", "authorized_keys", "credentials", ".netrc", ".git-credentials", ".pgpass", "shadow", "gshadow", "sudoers":
		return true
	}
	return strings.HasSuffix(base, ".pem") || strings.HasSuffix(base, ".key") && !strings.HasSuffix(base, ".pub.key")
}
