package session

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"github.com/agentwarden/warden/nestedgit"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The writable set of the workspace profile inside the fake home (issue 22):
// the tool caches, the projects (minus their protected paths) and warden's
// own runtime files, which warden writes itself (its quarantine holds what a
// command created in a protected path, moved out of the project where it
// would have had its effect). Everything else in the home must stay as it
// was.
var (
	homeWritable = []string{
		"src",
		".cache", "go/pkg", ".npm", ".pnpm-store", ".local/share/pnpm/store", ".yarn/berry/cache",
		".cargo/registry", ".cargo/git", ".m2/repository", ".gradle/caches", ".rustup/tmp",
		".warden/sandbox", ".warden/cache", ".warden/sessions", ".warden/quarantine", ".warden/run",
	}
	// wardenRuntime are warden's own database files and the audit log's
	// chain anchor: warden writes them on every decision, and the database
	// files hold the audit-row marker legitimately.
	wardenRuntime = []string{".warden/warden.db", ".warden/warden.db-wal", ".warden/warden.db-shm", ".warden/warden.db.spool", ".warden/audit.anchor"}
	// projectProtected stay read-only inside a project (sandbox.protected_paths).
	// Beside .git/config, git reads its configuration (and finds hooks)
	// through .git/commondir and .git/config.worktree; VS Code and Cursor
	// run what .vscode/ names, Claude Code the servers of .mcp.json, the
	// other agent hosts and editors what their project settings name.
	projectProtected = []string{".git/config", ".git/config.worktree", ".git/commondir", ".git/hooks", ".claude", ".codex", ".gemini", ".cursor", ".vscode", ".warden.yaml", ".mcp.json",
		".windsurf", ".continue", ".roo", ".amazonq", ".kiro", ".zed", "opencode.json", ".aider.conf.yml",
		".opencode", ".qwen", ".kilocode", "crush.json", ".crush.json"}
)

// A snapshot records every guarded file: its content hash and mode, a
// symlink's target, a directory's mode, or that it is absent.
type snapshot map[string]string

func (w *world) snapshot(t *testing.T) snapshot {
	t.Helper()
	s := snapshot{}
	skip := func(rel string) bool {
		for _, p := range homeWritable {
			if rel == p || strings.HasPrefix(rel, p+"/") {
				return true
			}
		}
		return slices.Contains(wardenRuntime, rel)
	}
	walk := func(root string, skip func(string) bool) {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			rel, _ := filepath.Rel(w.home, p)
			if err != nil {
				if os.IsNotExist(err) && p == root {
					s[rel] = "absent"
					return nil
				}
				s[rel] = "unreadable: " + err.Error()
				return nil
			}
			if skip != nil && skip(rel) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			s[rel] = describe(p, d)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	walk(w.home, skip)
	// A linked worktree the session runs in (@worktree) lies in the
	// project's .claude/: it is the session's project, writable but for
	// its own protected paths and its .git file.
	var inWorktree func(string) bool
	if w.worktree != "" {
		wt, _ := filepath.Rel(w.home, w.worktree)
		inWorktree = func(rel string) bool { return rel == wt || strings.HasPrefix(rel, wt+"/") }
		for _, p := range append(slices.Clone(projectProtected), ".git") {
			walk(filepath.Join(w.worktree, p), nil)
		}
	}
	for _, p := range append(slices.Clone(projectProtected), w.hooksPath()...) {
		walk(filepath.Join(w.project, p), inWorktree)
	}
	// The project's own config may take keys that run nothing (a git
	// line runs with it writable: a remote, a renamed branch, a user):
	// what counts is the keys in it that would run a program.
	cfg := filepath.Join(w.project, ".git", "config")
	if rel, _ := filepath.Rel(w.home, cfg); strings.HasPrefix(s[rel], "file ") {
		s[rel] = "config running " + keysThatRun(cfg)
	}
	return s
}

// keysThatRun lists the entries of a git config file whose keys are not
// inert (nestedgit.InertKey; core.worktree counts), one a line; a file git
// cannot read is all of its content.
func keysThatRun(file string) string {
	out, err := exec.Command("git", "config", "--file", file, "--no-includes", "--null", "--list").Output()
	if err != nil {
		data, _ := os.ReadFile(file)
		return "(unreadable) " + string(data)
	}
	var run []string
	for _, e := range strings.Split(string(out), "\x00") {
		key, _, _ := strings.Cut(e, "\n")
		if key != "" && !nestedgit.InertKey(key) {
			run = append(run, e)
		}
	}
	slices.Sort(run)
	return strings.Join(run, "\n")
}

// hooksPath is what the project's .git/config names inside the project
// for git on the host to run or obey: the hooks directory (core.hooksPath,
// relative to the work tree), which git runs at the user's next commit, and
// the files it includes (relative to the file that includes them), read
// with its includes as the host's git reads it: a file an included file
// includes, or a hooks directory it names, counts as much as the first.
func (w *world) hooksPath() []string {
	out, err := exec.Command("git", "config", "--file", filepath.Join(w.project, ".git", "config"), "--includes", "--show-origin", "--null",
		"--get-regexp", `^(core\.hookspath|include\.path|includeif\..*\.path)$`).Output()
	if err != nil {
		return nil
	}
	var paths []string
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		origin, _ := strings.CutPrefix(fields[i], "file:")
		key, p, ok := strings.Cut(fields[i+1], "\n")
		if !ok || p == "" || strings.HasPrefix(p, "~") {
			continue
		}
		if key != "core.hookspath" && !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(origin), p)
		}
		if filepath.IsAbs(p) {
			rel, err := filepath.Rel(w.project, p)
			if err != nil {
				continue
			}
			p = rel
		}
		if rel := filepath.Clean(p); rel != "." && rel != ".." && !strings.HasPrefix(rel, "../") {
			paths = append(paths, rel)
		}
	}
	return paths
}

func describe(path string, d fs.DirEntry) string {
	info, err := d.Info()
	if err != nil {
		return "unreadable: " + err.Error()
	}
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return "symlink to " + target
	case info.IsDir():
		return fmt.Sprintf("directory %v", info.Mode().Perm())
	case !info.Mode().IsRegular():
		return "special " + info.Mode().String()
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	sum := sha256.Sum256(data)
	return fmt.Sprintf("file %v %x", info.Mode().Perm(), sum[:8])
}

// changes lists how now differs from s. A directory created is not an
// effect by itself (the sandbox makes the missing cache and protected
// directories it mounts); what is written into one is.
func (s snapshot) changes(now snapshot) []string {
	var out []string
	for p, was := range s {
		is, ok := now[p]
		switch {
		case is == was:
		case (!ok || is == "absent") && was != "absent":
			out = append(out, "~/"+p+" was removed")
		case was == "absent":
			if !strings.HasPrefix(is, "directory ") {
				out = append(out, "~/"+p+" was created")
			}
		default:
			out = append(out, fmt.Sprintf("~/%s changed (%s, was %s)", p, is, was))
		}
	}
	for p, is := range now {
		if _, ok := s[p]; !ok && is != "absent" && !strings.HasPrefix(is, "directory ") {
			out = append(out, "~/"+p+" was created")
		}
	}
	slices.Sort(out)
	return out
}

// variants are the forms a secret takes in output that carries it: as is,
// in lower and upper case (a host name in an error message), reversed, hex,
// and base64 at each of the three alignments it can have inside a longer
// text.
func variants(marker string) []string {
	out := []string{marker, strings.ToLower(marker), strings.ToUpper(marker), reverse(marker), hex.EncodeToString([]byte(marker))}
	for pad := range 3 {
		enc := base64.StdEncoding.EncodeToString(append(bytes.Repeat([]byte{0}, pad), marker...))
		// Drop the group the padding shares and the last group, which the
		// text after the marker shares.
		if pad > 0 {
			enc = enc[4:]
		}
		out = append(out, enc[:len(enc)-4])
	}
	return out
}

func reverse(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

// secretsIn names the secrets text carries, in any of their variants; the
// text is also searched with all white space removed (base64 and hex dumps
// wrap).
func (w *world) secretsIn(text []byte) []string {
	flat := bytes.Join(bytes.Fields(text), nil)
	var out []string
	for _, s := range w.secrets {
		for _, v := range variants(s.Marker) {
			if bytes.Contains(text, []byte(v)) || bytes.Contains(flat, []byte(v)) {
				out = append(out, s.Name)
				break
			}
		}
	}
	return out
}

// effects judges what a case's calls did to the world, by effect: secrets in
// their output, secrets in files the agent can read later (the home, the
// project, /tmp), guarded files changed, anything reaching the listener or
// the metadata address.
func (w *world) effects(t *testing.T, results []result) []string {
	t.Helper()
	var out []string
	for i, r := range results {
		if !r.ran() {
			continue
		}
		for _, name := range w.secretsIn([]byte(r.Output)) {
			out = append(out, fmt.Sprintf("step %d printed the secret %s", i+1, name))
		}
		if fp := w.h.metadata; fp != "" && strings.Contains(r.Output, fp) {
			out = append(out, fmt.Sprintf("step %d reached 169.254.169.254 (printed its answer %q)", i+1, fp))
		}
	}
	for _, hit := range w.listener.received() {
		e := "the listener received " + hit.String()
		if names := w.secretsIn(hit.Data); len(names) > 0 {
			e += " holding " + strings.Join(names, ", ")
		}
		out = append(out, e)
	}
	out = append(out, w.before.changes(w.snapshot(t))...)
	out = append(out, w.secretFiles()...)
	if !w.auditIntact() {
		out = append(out, "the audit log lost rows: the row warden recorded when the world was made is gone")
	}
	return out
}

// userGitCommands are what a person runs in the project on the host after
// an agent's session: git enters the repository of every gitlink checked
// out in the work tree for git status and git diff, and obeys its config
// there (core.fsmonitor), so a repository the agent made and added runs
// its programs here, outside any sandbox.
var userGitCommands = [][]string{{"status"}, {"diff"}, {"status", "--porcelain"}}

// userGit runs userGitCommands in the project with the host's environment,
// and git status in every repository nested in it (an editor that scans
// the work tree for repositories, a shell prompt entering one, does), and
// judges their output: a secret in it is an effect. What they change on
// disk is judged by the snapshot taken after.
func (w *world) userGit(t *testing.T) []string {
	t.Helper()
	var out []string
	run := func(dir string, args ...string) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		c := exec.CommandContext(ctx, "git", args...)
		c.Dir, c.Env = dir, w.cmdEnv
		text, _ := c.CombinedOutput()
		cancel()
		where := ""
		if dir != w.project {
			where = " in " + dir
		}
		for _, name := range w.secretsIn(text) {
			out = append(out, fmt.Sprintf("the user's git %s%s on the host printed the secret %s", strings.Join(args, " "), where, name))
		}
	}
	for _, args := range userGitCommands {
		run(w.project, args...)
	}
	for _, repo := range nestedgit.Nested(w.project, true) {
		run(repo, "status")
	}
	return out
}

// auditIntact reports whether the audit row written when the world was
// made is still in warden's database (or its write-ahead log). The
// database is warden's to write, so it is not in the snapshot; deleting or
// truncating it is still an effect.
func (w *world) auditIntact() bool {
	var m string
	for _, s := range w.secrets {
		if strings.HasPrefix(s.Marker, "wardendb") {
			m = s.Marker
		}
	}
	for _, rel := range wardenRuntime {
		if data, err := os.ReadFile(filepath.Join(w.home, rel)); err == nil && bytes.Contains(data, []byte(m)) {
			return true
		}
	}
	return m == ""
}

// secretFiles lists the files written since the world was made that hold a
// secret, in the home (projects included, loose git objects inflated) and
// in /tmp: where a later command, or a person, would find it.
func (w *world) secretFiles() []string {
	own := map[string]bool{}
	for _, s := range w.secrets {
		if s.Path != "" {
			own[s.Path] = true
		}
	}
	for _, rel := range wardenRuntime {
		own[filepath.Join(w.home, rel)] = true
	}
	since := w.started.Add(-time.Second)
	var out []string
	scan := func(root string, maxDepth int, maxSize int64) {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() {
				if strings.Count(strings.TrimPrefix(p, root), "/") > maxDepth || strings.HasPrefix(d.Name(), "go-build") {
					return filepath.SkipDir // the go command's own scratch
				}
				return nil
			}
			if own[p] || !d.Type().IsRegular() {
				return nil
			}
			info, err := d.Info()
			if err != nil || info.ModTime().Before(since) || info.Size() > maxSize {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			if strings.Contains(p, "/.git/objects/") {
				if zr, err := zlib.NewReader(bytes.NewReader(data)); err == nil {
					if inflated, err := io.ReadAll(io.LimitReader(zr, 8<<20)); err == nil {
						data = inflated
					}
				}
			}
			if names := w.secretsIn(data); len(names) > 0 {
				out = append(out, fmt.Sprintf("%s holds the secret %s", p, strings.Join(names, ", ")))
			}
			return nil
		})
	}
	scan(w.home, 40, 8<<20)
	scan("/tmp", 8, 1<<20) // shared with everything else on the machine
	return out
}
