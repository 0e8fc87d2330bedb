//go:build amd64 || arm64

package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// systemRoots are the directories programs need to run at all (binaries,
// libraries, configuration). They are readable in every mode; the secrets
// kept among them are masked (systemSecrets).
var systemRoots = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}

// systemSecrets are files inside systemRoots that no sandboxed command may
// read: password hashes, sudo rules, TLS and SSH host private keys, and the
// credentials services keep in /etc (VPN and Wi-Fi keys, mail relay and
// database passwords, certificates' keys, a cluster's admin login). A
// caller that is root owns them all, and its command runs as root.
var systemSecrets = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/sudoers", "/etc/sudoers.d", "/etc/ssl/private", "/etc/security/opasswd",
	"/etc/krb5.keytab", "/etc/ssh/ssh_host_*_key",
	"/etc/wireguard", "/etc/NetworkManager/system-connections", "/etc/netplan",
	"/etc/ipsec.secrets", "/etc/ipsec.d/private", "/etc/ppp/chap-secrets", "/etc/ppp/pap-secrets",
	"/etc/openvpn",
	"/etc/letsencrypt/archive", "/etc/letsencrypt/live", "/etc/letsencrypt/accounts",
	"/etc/pki/tls/private", "/etc/pki/CA/private",
	"/etc/mysql/debian.cnf", "/etc/postfix/sasl_passwd", "/etc/exim4/passwd.client",
	"/etc/ldap.secret", "/etc/libnss-ldap.secret", "/etc/pam_ldap.secret", "/etc/davfs2/secrets",
	"/etc/kubernetes/admin.conf", "/etc/kubernetes/super-admin.conf", "/etc/kubernetes/pki",
	"/etc/kubernetes/kubelet.conf", "/etc/kubernetes/controller-manager.conf", "/etc/kubernetes/scheduler.conf",
	"/etc/ceph", "/etc/docker/key.json", "/etc/samba/smbpasswd",
	"/etc/rancher/k3s/k3s.yaml", "/etc/rancher/rke2/rke2.yaml", "/etc/gitlab-runner/config.toml",
}

// Device files a command may use.
var (
	devReadWrite = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"}
	devRead      = []string{"/dev/random", "/dev/urandom"}
)

// smallestCap is the smaller of two caps, where 0 is none.
func smallestCap(a, b int64) int64 {
	if a <= 0 || b > 0 && b < a {
		return b
	}
	return a
}

// compile turns a spec and a command into the plan the init runs, plus the
// warnings that say where the kernel gives less than the spec asks. mode is
// the mode it actually compiles for; abi is the kernel's Landlock ABI.
func compile(s *Spec, c *Command, mode Mode, abi int, cg *cgroup, tmp string) (*plan, []string, error) {
	var warn []string
	p := &plan{
		Namespaces:   mode.Namespaces(),
		ReadOnlyRoot: mode == ModeMax,
		PrivateTmp:   mode.Namespaces(),
		TmpSize:      smallestCap(s.Limits.Memory, s.Limits.Tmp),
		Args:         c.Args,
		Dir:          c.Dir,
	}
	if p.Dir == "" {
		p.Dir = s.Project
	}
	if abi == 0 {
		return nil, nil, fmt.Errorf("the kernel has no Landlock (it needs Linux 5.13 or later with lsm=landlock), so the sandbox cannot restrict the filesystem; no mode but off runs here")
	}

	// The command's /tmp is mounted on /var/tmp too, unless something it
	// is given lies there (a project in /var/tmp): then /var/tmp stays the
	// host's.
	ownVarTmp := s.ReadAll && mode.Namespaces() &&
		!slices.ContainsFunc(append([]string{s.Project, s.Workspace, s.UserHome, p.Dir}, append(slices.Clone(s.ReadWrite), s.ReadOnly...)...),
			func(g string) bool { return g != "" && within(filepath.Clean(g), varTmp) })
	hidden := s.Hidden
	if s.ReadAll {
		hidden = carvePublic(hidden, ownVarTmp)
	}
	ll := landlockPlan{ABI: abi, BlockNet: !mode.Namespaces(), Scope: !mode.Namespaces(), WriteFiles: devReadWrite, ReadFiles: devRead}
	var secrets []string
	for _, pat := range systemSecrets {
		m, _ := filepath.Glob(pat)
		secrets = append(secrets, m...)
	}
	if s.ReadAll {
		// Everything but the devices (a raw disk would bypass every mask)
		// and /proc (added below); without namespaces nothing can be
		// masked, so the hidden paths are left out of the grant instead.
		// /tmp is the command's own (private, or the session's), and
		// granted below like every writable path.
		excluded := append([]string{"/dev", "/proc", "/tmp"}, hiddenOutsideSystem(hidden)...)
		for _, u := range s.Unreadable {
			if !filepath.IsAbs(u) {
				return nil, nil, fmt.Errorf("unreadable path %q is not absolute", u)
			}
			excluded = append(excluded, filepath.Clean(u))
			// And where it really leads: Landlock grants inodes, and a
			// symlinked home (~/.warden -> /data/warden) is read by its
			// real path from the grant of /data.
			if real, err := filepath.EvalSymlinks(u); err == nil && real != filepath.Clean(u) {
				excluded = append(excluded, real)
			}
		}
		if !mode.Namespaces() {
			excluded = append(append(excluded, secrets...), "/run", "/var/run")
		}
		full, list := complement("/", excluded)
		ll.ReadDirs, ll.ListDirs = full, list
	} else {
		ll.ReadDirs = append(ll.ReadDirs, systemRoots...)
	}
	ll.ReadDirs = append(ll.ReadDirs, "/proc")
	writable := []string{s.Workspace}
	if s.ProjectWritable {
		writable = append(writable, s.Project)
	} else if s.Project != "" {
		ll.ReadDirs = append(ll.ReadDirs, s.Project)
	}
	writable = append(writable, s.ReadWrite...)
	if tmp != "" {
		writable = append(writable, tmp)
	}
	for _, path := range append(slices.Clone(writable), s.ReadOnly...) {
		if path == "" {
			continue
		}
		if !filepath.IsAbs(path) {
			return nil, nil, fmt.Errorf("sandbox path %q is not absolute", path)
		}
		if _, err := os.Stat(path); err != nil {
			return nil, nil, fmt.Errorf("sandbox path %s: %w; create it or leave it out", path, err)
		}
	}
	for _, w := range writable {
		if w != "" {
			ll.WriteDirs = append(ll.WriteDirs, w)
		}
	}
	for _, d := range s.EmptyDirsIn {
		if !filepath.IsAbs(d) {
			return nil, nil, fmt.Errorf("sandbox path %q is not absolute", d)
		}
		ll.RemoveDirs = append(ll.RemoveDirs, filepath.Clean(d))
	}
	ll.ReadDirs = append(ll.ReadDirs, s.ReadOnly...)
	if mode.Namespaces() {
		ll.WriteDirs = append(ll.WriteDirs, "/tmp")
		p.Writable = append(slices.Clone(ll.WriteDirs), "/tmp")
		if s.Tmp != "" {
			if st, err := os.Stat(s.Tmp); err != nil || !st.IsDir() {
				return nil, nil, fmt.Errorf("the session's /tmp %s is not a directory; remove it and run again", s.Tmp)
			}
			p.TmpDir, p.TmpCap, p.TmpShare = s.Tmp, s.Limits.Tmp, s.Limits.TmpShare
		}
		if s.ReadAll {
			p.Shm, p.Pty = true, true
			ll.WriteDirs = append(ll.WriteDirs, "/dev/shm", "/dev/pts")
			ll.WriteFiles = append(slices.Clone(ll.WriteFiles), "/dev/ptmx")
		}
	} else {
		if s.Tmp != "" {
			// Without a mount namespace the session's directory is the
			// /tmp the command is told about (TMPDIR).
			tmp = s.Tmp
			ll.WriteDirs = append(ll.WriteDirs, tmp)
		}
		if s.ReadAll {
			// Real work writes /tmp by name; without a private one, the
			// host's is granted, unless something hidden lies in it.
			if slices.ContainsFunc(hidden, func(h string) bool { return within(filepath.Clean(h), "/tmp") }) {
				warn = append(warn, "/tmp holds a hidden path, so without a mount namespace the command cannot write /tmp (TMPDIR points to a directory it can)")
			} else {
				ll.WriteDirs = append(ll.WriteDirs, "/tmp")
			}
		}
	}
	withNested := *s
	withNested.Protected = withNestedGit(s)
	protected, sweep, pwarn, err := protectedPaths(&withNested, ll.WriteDirs, mode)
	if err != nil {
		return nil, nil, err
	}
	p.Protected, p.Sweep, warn = protected, sweep, append(warn, pwarn...)
	if mode.Namespaces() {
		p.Pinned = pinnedAncestors(append(slices.Clone(protected), sweep...), ll.WriteDirs)
	}
	p.Sweep = append(p.Sweep, moduleSweeps(s.ModuleDirs, ll.WriteDirs)...)
	p.Landlock = ll
	p.Seccomp = seccompPlan{NoSpawn: s.NoSpawn || s.Mode == ModeMax, BlockInet: !mode.Namespaces(), AllowUnix: s.UnixSockets && mode.Namespaces()}

	// The session's /tmp lies in warden's home, which is hidden: it is
	// granted as the command's own, not as a path inside a denied one.
	granted := slices.DeleteFunc(append(slices.Clone(ll.ReadDirs), ll.WriteDirs...), func(g string) bool { return s.Tmp != "" && g == s.Tmp })
	if p.PrivateTmp {
		p.VarTmp = ownVarTmp
		read := ll.ReadDirs
		home := s.UserHome
		if home == "" {
			home = envValue(c.Env, "HOME")
		}
		if s.ReadAll && home != "" && filepath.IsAbs(home) {
			// The whole filesystem is readable, the user's home too, even
			// when it lies under the /tmp the sandbox replaces; its masks
			// are mounted over the carried copy.
			read = append(slices.Clone(read), filepath.Clean(home))
		}
		// A directory the command may remove empty directories in is
		// carried as one writable mount (Landlock still grants it no
		// more), so that a worktree's directory in it is no mount point
		// of its own, which could not be removed.
		p.Keep = keepUnderTmp(read, append(slices.Clone(ll.WriteDirs), s.EmptyDirsIn...), p.Dir)
	}
	masks, mwarn, err := masksFor(hidden, s.LinkRoots, granted, mode)
	if err != nil {
		return nil, nil, err
	}
	denied := slices.Clone(masks) // the denied paths' masks, pinned below
	if s.ReadAll && mode.Namespaces() {
		// Left out of the grant, but listable through their parents:
		// masked too, so that not even their names show. The host's Unix
		// sockets (docker, systemd, D-Bus, agents) live under /run; the
		// private /tmp and network namespace cover the rest.
		for _, h := range append(hiddenOutsideSystem(hidden), "/run") {
			if _, err := os.Lstat(h); err == nil && !slices.Contains(masks, h) {
				masks = append(masks, h)
			}
		}
	}
	if s.ReadAll {
		// The system secrets are left out of the grant, so nothing is
		// readable for want of a mask.
		mwarn = slices.DeleteFunc(mwarn, func(w string) bool { return strings.Contains(w, "cannot mask system secrets") })
	}
	if s.ReadAll && mode.Namespaces() {
		home := s.UserHome
		if home == "" {
			home = envValue(c.Env, "HOME")
		}
		masks = append(masks, hostSocketMasks(masks, home)...)
	}
	p.Masks, warn = masks, append(warn, mwarn...)
	for _, path := range slices.Sorted(maps.Keys(s.Redacted)) {
		if content := s.Redacted[path]; mode.Namespaces() && slices.Contains(masks, path) {
			if p.Redacted == nil {
				p.Redacted = map[string]string{}
			}
			p.Redacted[path] = string(content)
			// Left out of the grant as a hidden path, the copy mounted
			// there is granted by name: Landlock's rule holds the inode
			// it opens once the mounts are made, the copy's.
			p.Landlock.ReadFiles = append(p.Landlock.ReadFiles, path)
		}
	}
	if mode.Namespaces() {
		// A mask inside a writable directory (a secret in a tool cache,
		// ~/.cache/huggingface/token) would move with its folder if that
		// were renamed, out from under the name every later sandbox masks:
		// the directories on the way are pinned, as for protected paths.
		for _, a := range pinnedAncestors(slices.DeleteFunc(denied, func(m string) bool { return within(m, "/tmp") && (s.UserHome == "" || !within(m, s.UserHome)) }), ll.WriteDirs) {
			if !slices.Contains(p.Pinned, a) {
				p.Pinned = append(p.Pinned, a)
			}
		}
		slices.SortStableFunc(p.Pinned, func(a, b string) int { return strings.Count(a, "/") - strings.Count(b, "/") })
	}

	if abi < 4 && !mode.Namespaces() {
		warn = append(warn, fmt.Sprintf("Landlock ABI %d cannot restrict TCP; light mode relies on seccomp alone to keep the command off the network", abi))
	}
	if abi < 6 && !mode.Namespaces() {
		warn = append(warn, fmt.Sprintf("Landlock ABI %d cannot scope signals: in light mode the command can signal other processes of the same user", abi))
	}
	if !mode.Namespaces() {
		warn = append(warn, "light mode shares the host's /proc and process tree: the command can see other processes")
	}

	p.Rlimits = append(p.Rlimits, rlimit{Resource: unix.RLIMIT_CORE, Max: coreMax()})
	if d := s.Limits.CPU; d > 0 {
		secs := uint64((d + 999_999_999) / 1_000_000_000)
		p.Rlimits = append(p.Rlimits, rlimit{Resource: unix.RLIMIT_CPU, Cur: secs, Max: secs + 1})
	}
	if n := s.Limits.FileSize; n > 0 {
		p.Rlimits = append(p.Rlimits, rlimit{Resource: unix.RLIMIT_FSIZE, Cur: uint64(n), Max: uint64(n)})
	}
	if n := s.Limits.Files; n > 0 {
		p.Rlimits = append(p.Rlimits, rlimit{Resource: unix.RLIMIT_NOFILE, Cur: uint64(n), Max: uint64(n)})
	}
	if n := s.Limits.Pids; n > 0 && !cg.capsPids() {
		p.Rlimits = append(p.Rlimits, rlimit{Resource: unix.RLIMIT_NPROC, Cur: uint64(n), Max: uint64(n)})
		warn = append(warn, "no pids cgroup is available, so the process limit is RLIMIT_NPROC, which counts every process of the user")
	}
	// RLIMIT_AS goes last: after it the stage cannot allocate.
	switch n := s.Limits.Memory; {
	case n <= 0 || cg.capsMemory():
	case s.ReadAll:
		// Real work (the workspace profile) runs Node, Java and Go, which
		// reserve far more address space than they use: a cap on it would
		// break them, so without a memory cgroup memory goes uncapped.
		warn = append(warn, fmt.Sprintf("no memory cgroup is available, so the memory limit of %s is not enforced (an address-space cap would break Node, Java and Go)", FormatBytes(n)))
	default:
		p.Rlimits = append(p.Rlimits, rlimit{Resource: unix.RLIMIT_AS, Cur: uint64(n), Max: uint64(n)})
		warn = append(warn, fmt.Sprintf("no memory cgroup is available, so memory is capped by RLIMIT_AS (%s of address space): Go, Node and Java programs reserve more than they use and may fail to start", FormatBytes(n)))
	}

	if cg.capsMemory() {
		p.OOMScoreAdj = oomScoreAdj(s.Limits.Memory)
	}
	p.Env = commandEnv(s, c.Env, mode, tmp)
	p.KeepBackground = s.Background
	return p, warn, nil
}

// commandEnv is the environment a command starts with in a sandbox built
// from s in mode: env scrubbed of credentials, the host's TMPDIR and proxy
// settings; the egress proxy's variables under NetProxy; TMPDIR (the
// private /tmp, or tmp without namespaces); then s.Env, which wins.
func commandEnv(s *Spec, env []string, mode Mode, tmp string) []string {
	env, _ = ScrubEnv(env, s.PassEnv)
	env = slices.DeleteFunc(env, func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return name == "TMPDIR" || isProxyVar(name)
	})
	if s.Net == NetProxy {
		env = append(env, ProxyEnv()...)
	}
	switch {
	case mode.Namespaces():
		env = append(env, "TMPDIR=/tmp")
	case tmp != "":
		env = append(env, "TMPDIR="+tmp)
	}
	// s.Env wins over what survived scrubbing: a secret's placeholder must
	// replace the real value even when --env kept that variable.
	env = append(slices.DeleteFunc(env, func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.ContainsFunc(s.Env, func(set string) bool { return strings.HasPrefix(set, name+"=") })
	}), s.Env...)
	if s.Signer != nil {
		env = bypassProxyFor(env, "127.0.0.1")
	}
	if s.ReadAll && s.Net == NetProxy {
		// Real work (the workspace profile) tests servers it starts itself
		// on the sandbox's own loopback: clients reach them directly, not
		// through the egress proxy, which would judge them as the host's.
		for _, h := range []string{"127.0.0.1", "localhost", "::1"} {
			env = bypassProxyFor(env, h)
		}
	}
	return env
}

// bypassProxyFor makes sure that, when env sends HTTP clients through a
// proxy, NO_PROXY and no_proxy exempt host, so that clients reach what
// listens there on the sandbox's own loopback (the signer) directly rather
// than asking the egress proxy for it.
func bypassProxyFor(env []string, host string) []string {
	proxied := slices.ContainsFunc(env, func(kv string) bool {
		name, v, _ := strings.Cut(kv, "=")
		return v != "" && isProxyVar(name) && !strings.EqualFold(name, "NO_PROXY")
	})
	if !proxied {
		return env
	}
	env = slices.Clone(env)
	for _, name := range []string{"NO_PROXY", "no_proxy"} {
		found := false
		for i, kv := range env {
			v, ok := strings.CutPrefix(kv, name+"=")
			if !ok {
				continue
			}
			found = true
			if !slices.ContainsFunc(strings.Split(v, ","), func(e string) bool {
				e = strings.TrimSpace(e)
				return e == host || e == "*"
			}) {
				if v != "" {
					v += ","
				}
				env[i] = name + "=" + v + host
			}
		}
		if !found {
			env = append(env, name+"="+host)
		}
	}
	return env
}

// isProxyVar reports whether name is a proxy setting: the host's would
// point the command somewhere it cannot reach, or around the sandbox's own.
func isProxyVar(name string) bool {
	switch strings.ToUpper(name) {
	case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "FTP_PROXY", "NODE_USE_ENV_PROXY":
		return true
	}
	return false
}

// envValue is the value of name in env, or "".
func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// hiddenOutsideSystem are the hidden paths that hold no system root (a
// denied /usr/** is the file guard's to judge: commands need the system).
// publicData are paths in directories a policy commonly denies (/var)
// that a command reading the whole filesystem needs and that hold nothing
// of the user's: the package databases (apt list, dpkg -L, dpkg -S). Where
// the sandbox's own /tmp is mounted on /var/tmp, /var/tmp too.
var publicData = []string{"/var/lib/dpkg", "/var/lib/apt", "/var/cache/apt"}

// carvePublic replaces each hidden directory that holds one of publicData
// by what else it holds: those paths stay visible, and every other entry
// on the way is hidden as before. A directory on the way that cannot be
// listed stays hidden whole; a symlink on the way is left (what it leads
// to is judged by its own path).
func carvePublic(hidden []string, ownVarTmp bool) []string {
	public := publicData
	if ownVarTmp {
		public = append(slices.Clone(public), varTmp)
	}
	var out []string
	var carve func(dir string)
	carve = func(dir string) {
		if slices.Contains(public, dir) {
			return
		}
		if !slices.ContainsFunc(public, func(d string) bool { return within(d, dir) }) {
			out = append(out, dir)
			return
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			out = append(out, dir)
			return
		}
		for _, e := range entries {
			if e.Type()&fs.ModeSymlink == 0 {
				carve(filepath.Join(dir, e.Name()))
			}
		}
	}
	for _, h := range hidden {
		if h = filepath.Clean(h); filepath.IsAbs(h) {
			carve(h)
		} else {
			out = append(out, h)
		}
	}
	return out
}

// varTmp is where the sandbox's /tmp is mounted a second time.
const varTmp = "/var/tmp"

func hiddenOutsideSystem(hidden []string) []string {
	var out []string
	for _, h := range hidden {
		h = filepath.Clean(h)
		if filepath.IsAbs(h) && !slices.ContainsFunc(systemRoots, func(r string) bool { return within(r, h) }) {
			out = append(out, h)
		}
	}
	return out
}

// hostSocketMasks are the host's Unix sockets a command that reads the
// whole filesystem could connect to (hostSockets), less those already
// hidden (under masks, /run, /proc, /dev) and those in the host's /tmp,
// which the command never sees (its /tmp is private) unless the user's
// home lies there.
func hostSocketMasks(masks []string, home string) []string {
	var out []string
	for _, sock := range hostSockets(append(slices.Clone(masks), "/proc", "/dev", "/run", "/var/run")) {
		if within(sock, "/tmp") && (home == "" || !within(sock, filepath.Clean(home))) {
			continue
		}
		out = append(out, sock)
	}
	return out
}

// masksFor decides which denied paths must be hidden by a mount: those that
// exist inside a directory the command may read. A denied path that holds a
// system root is left to the fs guard (the command needs the system to run);
// one that holds a granted path is a contradiction the user must resolve.
func masksFor(hidden, linkRoots, granted []string, mode Mode) (masks, warn []string, err error) {
	defer func() {
		roots := linkRoots
		if roots == nil {
			roots = append(slices.Clone(hidden), masks...)
		}
		masks, warn, err = hideLinks(roots, granted, mode, masks, warn, err)
	}()
	var secrets []string
	for _, pat := range systemSecrets {
		m, _ := filepath.Glob(pat)
		secrets = append(secrets, m...)
	}
	for _, h := range hidden {
		h = filepath.Clean(h)
		if !filepath.IsAbs(h) {
			return nil, nil, fmt.Errorf("denied path %q is not absolute", h)
		}
		if slices.ContainsFunc(systemRoots, func(r string) bool { return within(r, h) }) {
			continue
		}
		for _, g := range granted {
			if within(g, h) && !slices.Contains(systemRoots, g) && g != "/proc" {
				return nil, nil, fmt.Errorf("the sandbox would grant %s, which lies inside the denied path %s; run from another directory or change the filesystem policy", g, h)
			}
		}
		if _, err := os.Lstat(h); errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, nil, fmt.Errorf("cannot tell whether the denied path %s must be hidden: %w", h, err)
		}
		if slices.ContainsFunc(granted, func(g string) bool { return within(h, g) }) {
			if !mode.Namespaces() {
				return nil, nil, fmt.Errorf("light mode cannot hide the denied path %s, which lies inside a directory the command may read; use standard mode, or run from a directory that does not contain it", h)
			}
			masks = append(masks, h)
		}
	}
	if mode.Namespaces() {
		return append(masks, secrets...), nil, nil
	}
	if os.Geteuid() == 0 && len(secrets) > 0 {
		warn = append(warn, "light mode cannot mask system secrets; as root the command can read "+strings.Join(secrets, ", "))
	}
	return masks, warn, nil
}

// coreMax is the hard limit on a sandboxed command's core dumps: none
// start (the soft limit is 0), but a command may raise it (ulimit -c
// unlimited before a crash it debugs) up to the host's own hard limit,
// where the kernel writes a dump as a file by a relative name, in the
// command's directory and under its sandbox. Where the kernel pipes dumps
// to a helper (systemd-coredump, apport), which runs on the host as root
// with the process's memory, or writes them to a path of its own, it
// stays 0.
func coreMax() uint64 {
	pattern, err := os.ReadFile("/proc/sys/kernel/core_pattern")
	if err != nil || len(pattern) == 0 || pattern[0] == '|' || bytes.ContainsRune(pattern, '/') {
		return 0
	}
	var host unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_CORE, &host) != nil {
		return 0
	}
	return host.Max
}

// keepUnderTmp lists the granted paths under /tmp, which the private /tmp
// would otherwise hide, parents first. Landlock grants all of the private
// /tmp for writing, so a read-only path among them is kept read-only by its
// mount.
func keepUnderTmp(read, write []string, dir string) []keep {
	var out []keep
	add := func(p string, writable bool) {
		p = filepath.Clean(p)
		if p == "/tmp" || !within(p, "/tmp") {
			return
		}
		st, err := os.Stat(p)
		if err != nil {
			return
		}
		for i := range out {
			if out[i].Path == p {
				out[i].Writable = out[i].Writable || writable
				return
			}
		}
		out = append(out, keep{Path: p, Dir: st.IsDir(), Writable: writable})
	}
	for _, w := range write {
		add(w, true)
	}
	for _, r := range read {
		add(r, false)
	}
	add(dir, false)
	// A writable path inside another carried writable is carried with it:
	// a mount of its own would make it a mount point, which no command
	// can remove or rename.
	// (Unless a read-only one lies between them, mounted over the outer.)
	carried := slices.Clone(out)
	out = slices.DeleteFunc(out, func(k keep) bool {
		return k.Writable && slices.ContainsFunc(carried, func(o keep) bool {
			return o.Writable && o.Dir && o.Path != k.Path && within(k.Path, o.Path) &&
				!slices.ContainsFunc(carried, func(r keep) bool {
					return !r.Writable && r.Path != o.Path && within(r.Path, o.Path) && within(k.Path, r.Path)
				})
		})
	})
	slices.SortFunc(out, func(a, b keep) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// within reports whether path is dir or lies beneath it.
func within(path, dir string) bool {
	// No dir+"/": this runs for every pair of denied and granted paths,
	// and a concatenation allocates.
	return path == dir || dir == "/" ||
		len(path) > len(dir) && path[len(dir)] == '/' && strings.HasPrefix(path, dir)
}
