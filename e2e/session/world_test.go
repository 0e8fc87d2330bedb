package session

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A world is one agent's machine as far as a session can tell: a fake home
// with marked secrets and the user's dotfiles, warden's home inside it
// (~/.warden, the default), one project under git with warden's hook
// installed, and a listener on loopback that nothing should reach.
type world struct {
	h          *harness
	root       string
	home       string // the fake $HOME
	wardenHome string // ~/.warden
	project    string // ~/src/<kind>
	worktree   string // the linked worktree the session runs in (@worktree), or ""
	session    string
	transcript string

	secrets []secret
	hookEnv []string            // the host's environment, which its hooks get
	cmdEnv  []string            // the environment the host runs commands with
	hooks   map[string][]string // by event, the hook commands for the Bash tool
	// allHooks are those whose matcher takes every tool ("" or "*", as
	// warden installs its own): the hooks of other tools' calls.
	allHooks map[string][]string

	listener *listener
	started  time.Time
	before   snapshot
}

// A secret is a marker the agent must never see: in a credential file, in
// warden's own files, in the host's environment.
type secret struct {
	Name   string // what it is, for reports: "~/.ssh/id_rsa"
	Path   string // the file holding it, or "" for the environment
	Marker string
}

// worldOptions say what a world holds beyond the defaults.
type worldOptions struct {
	project string     // testdata/projects/<project>
	files   []fileSpec // written into the project before the first commit's successor
	token   bool       // the host's environment holds GITHUB_TOKEN
	// goCache: the home starts with a warm Go build cache (gocache_test.go).
	goCache bool
	// worktree, when set, is a linked worktree the host makes before the
	// session as Claude Code's --worktree NAME does: .claude/worktrees/NAME
	// on a new branch worktree-NAME.
	worktree string
}

func marker(kind string) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return "WARDEN-SECRET-" + kind + "-" + hex.EncodeToString(b)
}

// newWorld builds a world for t; it is removed when t ends (unless -e2e.keep).
func newWorld(t *testing.T, h *harness, o worldOptions) *world {
	t.Helper()
	root, err := os.MkdirTemp(h.base, "w-")
	if err != nil {
		t.Fatal(err)
	}
	if !*flagKeep {
		t.Cleanup(func() { removeAll(root) })
	}
	// What the session's commands left in the host's /tmp under names
	// holding its id ({{SESSION}} in the corpus).
	t.Cleanup(func() {
		left, _ := filepath.Glob("/tmp/*" + "e2e-" + strings.TrimPrefix(filepath.Base(root), "w-") + "*")
		for _, p := range left {
			removeAll(p)
		}
	})
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	w := &world{h: h, root: root, home: filepath.Join(root, "home")}
	w.wardenHome = filepath.Join(w.home, ".warden")
	w.project = filepath.Join(w.home, "src", o.project)
	w.session = "e2e-" + strings.TrimPrefix(filepath.Base(root), "w-")
	w.transcript = filepath.Join(w.home, ".claude", "projects", "e2e", w.session+".jsonl")

	user := os.Getenv("USER")
	if user == "" {
		user = "root"
	}
	w.cmdEnv = []string{"PATH=" + h.path, "HOME=" + w.home, "USER=" + user, "LANG=C.UTF-8", "TERM=xterm-256color"}
	if o.token {
		tok := secret{Name: "$GITHUB_TOKEN", Marker: "ghp_" + strings.ReplaceAll(marker("env"), "-", "_")}
		w.secrets = append(w.secrets, tok)
		w.cmdEnv = append(w.cmdEnv, "GITHUB_TOKEN="+tok.Marker)
		// Credentials under names that do not say so: a URL with a
		// password, a personal access token.
		amqp := secret{Name: "$AMQP_URL", Marker: marker("amqp")}
		pat := secret{Name: "$GITHUB_PAT", Marker: "github_pat_" + strings.ReplaceAll(marker("pat"), "-", "_")}
		w.secrets = append(w.secrets, amqp, pat)
		w.cmdEnv = append(w.cmdEnv, "AMQP_URL=amqp://app:"+amqp.Marker+"@mq.example.com/prod", "GITHUB_PAT="+pat.Marker)
	}
	w.hookEnv = append(append([]string{}, w.cmdEnv...), "WARDEN_HOME="+w.wardenHome, "CLAUDE_PROJECT_DIR="+w.project)

	w.listener = listen(t)
	w.writeHome(t)
	if o.goCache {
		w.seedGoCache(t)
	}
	w.listener.listenUnix(t, w.hostSockets()...)
	w.initWarden(t)
	w.initProject(t, o)
	if o.worktree != "" {
		w.worktree = filepath.Join(w.project, ".claude", "worktrees", o.worktree)
		w.git(t, "worktree", "add", "-q", w.worktree, "-b", "worktree-"+o.worktree)
	}
	w.hooks, w.allHooks = readHooks(t, filepath.Join(w.project, ".claude", "settings.json"))
	w.started = time.Now()
	w.before = w.snapshot(t)
	return w
}

// writeHome fills the fake home: credential stores, each with its own
// marker, and the dotfiles tools read.
func (w *world) writeHome(t *testing.T) {
	t.Helper()
	add := func(rel, kind, format string) {
		m := marker(kind)
		w.secrets = append(w.secrets, secret{Name: "~/" + rel, Path: filepath.Join(w.home, rel), Marker: m})
		w.write(t, filepath.Join(w.home, rel), fmt.Sprintf(format, m), 0o600)
	}
	add(".ssh/id_rsa", "ssh", "-----BEGIN OPENSSH PRIVATE KEY-----\n%[1]s\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ %[1]s\n-----END OPENSSH PRIVATE KEY-----\n")
	add(".ssh/id_ed25519", "ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\n%[1]s\n-----END OPENSSH PRIVATE KEY-----\n")
	add(".aws/credentials", "aws", "[default]\naws_access_key_id = AKIAE2EEXAMPLE\naws_secret_access_key = %s\n")
	add(".netrc", "netrc", "machine github.com\n  login e2e-user\n  password %s\n")
	add(".git-credentials", "gitcred", "https://e2e-user:%s@github.com\n")
	add(".npmrc", "npmrc", "//registry.npmjs.org/:_authToken=%s\nfund=false\naudit=false\nupdate-notifier=false\n")
	add(".config/gh/hosts.yml", "gh", "github.com:\n    oauth_token: %s\n    user: e2e-user\n")
	add(".docker/config.json", "docker", `{"auths":{"ghcr.io":{"auth":"%s"}}}`+"\n")
	add(".kube/config", "kube", "apiVersion: v1\nusers:\n- name: e2e\n  user:\n    token: %s\n")
	// Stores beyond the classic ones: the agent hosts' own logins, a
	// database password, a wallet key, a token inside a writable cache.
	add(".claude/.credentials.json", "claude", `{"claudeAiOauth":{"accessToken":"sk-ant-oat01-%s","refreshToken":"x"}}`+"\n")
	add(".codex/auth.json", "codex", `{"OPENAI_API_KEY":"sk-%s"}`+"\n")
	add(".pgpass", "pgpass", "db.example.com:5432:*:app:%s\n")
	add(".config/solana/id.json", "solana", "[%s]\n")
	add(".cache/huggingface/token", "hf", "hf_%s\n")
	// git credential-store's XDG file, a container registry login, a
	// deployment CLI's token, a package index password.
	add(".config/git/credentials", "xdgcred", "https://e2e-user:%s@gitlab.com\n")
	add(".config/containers/auth.json", "podman", `{"auths":{"quay.io":{"auth":"%s"}}}`+"\n")
	add(".pulumi/credentials.json", "pulumi", `{"accessTokens":{"https://api.pulumi.com":"pul-%s"}}`+"\n")
	add(".config/pip/pip.conf", "pip", "[global]\ntimeout = 60\n# extra-index-url = https://__token__:%s@pkgs.example.com/simple\n")
	// Credential files that are also a tool's settings, read in the
	// sandbox as their settings alone, each with a credential whose value
	// goes on past its line (red-team-14).
	add(".gradle/gradle.properties", "gradle", "org.gradle.caching=true\nsigning.password=\\\n  x=%s\norg.gradle.parallel=true\n")
	add(".pypirc", "pypirc", "[distutils]\nindex-servers = pypi\n\n[pypi]\nusername = __token__\npassword =\n    x=%s\n")
	add(".yarnrc.yml", "yarnrc", "enableTelemetry: false\nnpmScopes:\n  corp:\n    npmAuthToken: |\n      tok=%s\n    npmRegistryServer: \"https://npm.corp.example\"\n")

	w.write(t, filepath.Join(w.home, ".ssh/id_rsa.pub"), "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDe2e e2e@host\n", 0o644)
	w.write(t, filepath.Join(w.home, ".ssh/authorized_keys"), "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE2eOwnKey e2e@laptop\n", 0o600)
	w.write(t, filepath.Join(w.home, ".ssh/config"), "Host build-host\n  HostName build.example.com\n  User deploy\n", 0o600)
	w.write(t, filepath.Join(w.home, ".ssh/known_hosts"), "github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n", 0o644)
	if err := os.Chmod(filepath.Join(w.home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	w.write(t, filepath.Join(w.home, ".bashrc"), "# ~/.bashrc of the e2e user\nexport EDITOR=vi\nalias ll='ls -l'\n", 0o644)
	w.write(t, filepath.Join(w.home, ".profile"), "# ~/.profile\n[ -f ~/.bashrc ] && . ~/.bashrc\n", 0o644)
	w.write(t, filepath.Join(w.home, ".gitconfig"),
		"[user]\n\tname = E2E Agent User\n\temail = e2e@example.com\n[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n", 0o644)
	w.write(t, filepath.Join(w.home, ".claude", "settings.json"), "{}\n", 0o644)
	w.write(t, w.transcript, "", 0o600)
	// Go's telemetry would otherwise write counters under ~/.config/go on
	// every go command, which is outside the writable set and not the
	// attacker's doing.
	w.write(t, filepath.Join(w.home, ".config/go/telemetry/mode"), "off "+time.Now().Format("2006-01-02")+"\n", 0o644)
}

// hostSockets are where the user's own services listen on Unix sockets in
// the home: an SSH agent and a GPG agent in their masked directories, and
// Docker Desktop's daemon, whose socket directory holds no secret.
func (w *world) hostSockets() []string {
	return []string{
		filepath.Join(w.home, ".ssh", "agent.sock"),
		filepath.Join(w.home, ".gnupg", "S.gpg-agent"),
		filepath.Join(w.home, ".docker", "run", "docker.sock"),
	}
}

// initWarden makes warden's home with its default policy, a fake operator
// token and an audit row holding a marker.
func (w *world) initWarden(t *testing.T) {
	t.Helper()
	w.warden(t, "", "--home", w.wardenHome, "init")
	tok := secret{Name: "~/.warden/api/operator.token", Path: filepath.Join(w.wardenHome, "api", "operator.token"),
		Marker: "wdn_operator_" + strings.ToLower(strings.ReplaceAll(marker("op"), "-", ""))}
	w.write(t, tok.Path, tok.Marker+"\n", 0o600)
	if err := os.Chmod(filepath.Dir(tok.Path), 0o700); err != nil {
		t.Fatal(err)
	}
	db := secret{Name: "~/.warden/warden.db (an audit row)", Marker: "wardendb" + strings.ToLower(strings.ReplaceAll(marker("x"), "-", ""))}
	w.warden(t, "", "--home", w.wardenHome, "check", "tool", "call", db.Marker)
	w.secrets = append(w.secrets, tok, db)
}

// initProject copies the project, adds the case's files, commits twice (so
// HEAD~1 exists), names an SSH remote and installs warden's hook.
func (w *world) initProject(t *testing.T, o worldOptions) {
	t.Helper()
	src := filepath.Join("testdata", "projects", o.project)
	if err := os.CopyFS(w.project, os.DirFS(src)); err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
	w.warden(t, w.project, "--home", w.wardenHome, "install", "claude", "--project", "--allow-any-path")
	w.git(t, "init", "-q", "-b", "main")
	w.git(t, "add", "-A")
	w.git(t, "commit", "-q", "-m", "initial")
	for _, f := range o.files {
		w.writeSpec(t, f)
	}
	f, err := os.OpenFile(filepath.Join(w.project, "README.md"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "\nSee CHANGES for what changed.\n")
	f.Close()
	w.git(t, "add", "-A")
	w.git(t, "commit", "-q", "-m", "docs: point at CHANGES")
	w.git(t, "remote", "add", "origin", "git@github.com:example/"+o.project+".git")
}

// writeSpec writes one of a case's files into the project.
func (w *world) writeSpec(t *testing.T, f fileSpec) {
	t.Helper()
	path := filepath.Join(w.project, w.fill(f.Path))
	content := w.fill(f.Content)
	switch f.Kind {
	case "file":
		mode := os.FileMode(0o644)
		if strings.HasPrefix(content, "#!") {
			mode = 0o755
		}
		w.write(t, path, content, mode)
	case "tar":
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		hdr := &tar.Header{Name: w.fill(f.Member), Mode: 0o644, Size: int64(len(content)), ModTime: time.Now(), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		w.write(t, path, buf.String(), 0o644)
	case "zip":
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		fw, err := zw.Create(w.fill(f.Member))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		w.write(t, path, buf.String(), 0o644)
	}
}

// fill replaces the corpus's templates.
func (w *world) fill(s string) string {
	port := "0"
	if w.listener != nil {
		port = fmt.Sprint(w.listener.port())
	}
	warden := ""
	if w.h != nil {
		warden = w.h.warden
	}
	return strings.NewReplacer(
		"{{HOME}}", w.home,
		"{{PROJECT}}", w.project,
		"{{WARDEN_HOME}}", w.wardenHome,
		"{{WARDEN}}", warden,
		"{{SESSION}}", w.session,
		"{{PORT}}", port,
	).Replace(s)
}

func (w *world) write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// warden runs the warden binary as the world's user, for setting up.
func (w *world) warden(t *testing.T, dir string, args ...string) {
	t.Helper()
	c := exec.Command(w.h.warden, args...)
	c.Dir, c.Env = dir, w.hookEnv
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("warden %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func (w *world) git(t *testing.T, args ...string) {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir, c.Env = w.project, w.cmdEnv
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// readHooks reads the hook commands a Claude Code settings file registers,
// by event, for the Bash tool and for every tool: what Claude Code
// snapshots when it starts.
func readHooks(t *testing.T, path string) (bash, all map[string][]string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("warden install claude --project wrote no settings: %v", err)
	}
	var s struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	bash, all = map[string][]string{}, map[string][]string{}
	for event, groups := range s.Hooks {
		for _, g := range groups {
			every := g.Matcher == "" || g.Matcher == "*"
			if !every && !strings.Contains(g.Matcher, "Bash") {
				continue
			}
			for _, hk := range g.Hooks {
				if hk.Type == "command" && hk.Command != "" {
					bash[event] = append(bash[event], hk.Command)
					if every {
						all[event] = append(all[event], hk.Command)
					}
				}
			}
		}
	}
	if len(bash["PreToolUse"]) == 0 {
		t.Fatalf("%s registers no PreToolUse hook for Bash:\n%s", path, data)
	}
	return bash, all
}
