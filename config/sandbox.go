package config

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentwarden/warden/netguard"
	"github.com/agentwarden/warden/sandbox"
)

// sandboxFile is the sandbox section as written in warden.yaml.
type sandboxFile struct {
	Mode           string `yaml:"mode" want:"one of off, light, standard, max"`
	Engine         string `yaml:"engine" want:"one of auto, native, docker"`
	Strict         bool   `yaml:"strict"`
	UnsafeAllowOff bool   `yaml:"unsafe_allow_off"`
	// UnsafeHostWhenUnavailable runs allowed commands on the host, audited,
	// where no sandbox can run; false asks a human instead.
	UnsafeHostWhenUnavailable bool `yaml:"unsafe_host_when_unavailable"`
	// KeepOneShot keeps a sandbox for the one-shot runs of a directory
	// (warden exec with no session), which each run alone; false builds a
	// sandbox for each.
	KeepOneShot    bool                   `yaml:"keep_one_shot"`
	SecretPaths    []string               `yaml:"secret_paths" want:"a list of paths such as ~/.ssh" elem:"an absolute path or one starting with ~/"`
	CachePaths     []string               `yaml:"cache_paths" want:"a list of paths such as ~/.cache" elem:"an absolute path or one starting with ~/"`
	ProtectedPaths []string               `yaml:"protected_paths" want:"a list of paths inside the project such as .git/config" elem:"a relative path inside the project"`
	Profiles       map[string]profileFile `yaml:"profiles" want:"a map of profile name to its settings"`
}

// profileFile is one named profile. A field left out takes the value of the
// built-in profile of the same name, or of the default profile.
type profileFile struct {
	Mode         *string  `yaml:"mode" want:"one of off, light, standard, max (\"\" for the section's mode)"`
	Project      *string  `yaml:"project" want:"read, write or none"`
	ReadOnly     []string `yaml:"read_only" want:"a list of absolute paths" elem:"an absolute path"`
	ReadWrite    []string `yaml:"read_write" want:"a list of absolute paths" elem:"an absolute path"`
	Network      *string  `yaml:"network" want:"none or proxy"`
	AllowDomains []string `yaml:"allow_domains" want:"a list of rules such as api.github.com or *.example.com:443" elem:"a rule: [METHODS ]HOST[:PORTS]"`
	Memory       *string  `yaml:"memory" want:"a size such as 64M (0 for no cap)"`
	CPU          *string  `yaml:"cpu" want:"a duration such as 10s (0 for no limit)"`
	Timeout      *string  `yaml:"timeout" want:"a duration such as 30s"`
	Pids         *int     `yaml:"pids" want:"a whole number of processes (0 for no limit)"`
	NoSpawn      *bool    `yaml:"no_spawn" want:"true or false"`
	OutputLimit  *string  `yaml:"output_limit" want:"a size such as 1M (0 for no limit)"`
	FileSize     *string  `yaml:"file_size" want:"a size such as 1G (0 for no limit)"`
	Env          []string `yaml:"env" want:"a list of environment variable names" elem:"an environment variable name"`
	ReadAll      *bool    `yaml:"read_all" want:"true or false"`
	UnixSockets  *bool    `yaml:"unix_sockets" want:"true or false"`
	SessionTmp   *bool    `yaml:"session_tmp" want:"true or false"`
	TmpSize      *string  `yaml:"tmp_size" want:"a size such as 4G, or a share of the free disk such as 50% (0 for no cap)"`
}

// Sandbox modes and engines.
var (
	SandboxModes   = []string{"off", "light", "standard", "max"}
	SandboxEngines = []string{"auto", "native", "docker"}
)

// Built-in profile names.
const (
	ProfileGuard     = "guard"
	ProfileDefault   = "default"
	ProfileWorkspace = "workspace"
)

// Default lists of the sandbox section: where credentials live (masked in
// every sandbox), the tool caches a workspace sandbox may write, and the
// paths inside a project that stay read-only there.
var (
	DefaultSecretPaths = []string{
		"~/.ssh", "~/.gnupg", "~/.aws", "~/.azure", "~/.config/gcloud", "~/.kube",
		"~/.docker/config.json", "~/.git-credentials", "~/.netrc", "~/.npmrc", "~/.pypirc",
		"~/.config/gh", "~/.password-store", "~/.local/share/keyrings", "~/.pki",
		"~/.config/google-chrome", "~/.config/chromium", "~/.mozilla", "~/.config/BraveSoftware",
		"~/.cargo/credentials", "~/.cargo/credentials.toml", "~/.config/hub", "~/.vault-token",
		"~/.terraform.d/credentials.tfrc.json", "~/.bash_history", "~/.zsh_history",
		// The agent hosts' own logins and their MCP servers' tokens.
		"~/.claude/.credentials.json", "~/.claude.json", "~/.codex/auth.json", "~/.gemini/oauth_creds.json",
		"~/.config/github-copilot",
		// Database, publishing and cloud CLIs' stored passwords and tokens.
		"~/.pgpass", "~/.my.cnf", "~/.m2/settings.xml", "~/.m2/settings-security.xml",
		"~/.gradle/gradle.properties", "~/.gem/credentials", "~/.config/composer/auth.json",
		"~/.terraformrc", "~/.config/glab-cli", "~/.config/doctl", "~/.fly", "~/.config/rclone",
		"~/.s3cfg", "~/.boto", "~/.oci", "~/.databrickscfg", "~/.huggingface", "~/.cache/huggingface/token",
		"~/.config/configstore", "~/.config/op",
		// Wallets' keys.
		"~/.config/solana", "~/.ethereum/keystore", "~/.foundry/keystores", "~/.bitcoin", "~/.electrum",
		// Chat and mail sessions, other keyrings and shells' histories.
		"~/.config/Slack", "~/.config/discord", "~/.config/Signal", "~/.thunderbird",
		"~/.local/share/kwalletd", "~/.local/share/fish/fish_history", "~/.python_history",
		"~/.psql_history", "~/.mysql_history", "~/.node_repl_history",
		// Where git credential-cache's daemon listens; a trailing slash
		// has the directory made when missing, so that the socket the
		// user's next push creates stays masked from a sandbox started
		// before it.
		"~/.cache/git/credential/", "~/.git-credential-cache",
		// git's credential-store file where XDG puts it; package managers',
		// registries' and containers' logins; more cloud, tunnel and
		// deployment CLIs' tokens; keys of sops, adb and Ollama; another
		// agent host's login and a coding assistant's API keys; password
		// managers', browsers' (Flatpak and Snap too) and mail clients'
		// stores; more shells' and REPLs' histories.
		"~/.config/git/credentials", "~/.yarnrc.yml", "~/.config/pip/pip.conf", "~/.pip/pip.conf",
		"~/.config/pypoetry/auth.toml", "~/.config/containers/auth.json", "~/.dockercfg",
		"~/.ivy2/.credentials", "~/.sbt/.credentials", "~/.pulumi/credentials.json",
		"~/.config/sops/age", "~/.config/helm/registry", "~/.minikube/profiles",
		"~/.minikube/client.key", "~/.android/adbkey", "~/.ollama/id_ed25519",
		"~/.local/share/opencode/auth.json", "~/.continue", "~/.config/Bitwarden CLI",
		"~/.config/microsoft-edge", "~/.config/vivaldi", "~/.config/opera", "~/snap/chromium",
		"~/snap/firefox", "~/.var/app/org.mozilla.firefox", "~/.var/app/com.google.Chrome",
		"~/.var/app/org.chromium.Chromium", "~/.msmtprc", "~/.mbsyncrc", "~/.fetchmailrc",
		"~/.config/aerc/accounts.conf", "~/.cloudflared", "~/.wrangler", "~/.config/.wrangler",
		"~/.supabase", "~/.config/netlify", "~/.local/share/com.vercel.cli", "~/.config/stripe",
		"~/.ngrok2", "~/.config/ngrok", "~/.sentryclirc", "~/.circleci/cli.yml", "~/.config/hcloud",
		"~/.config/scw", "~/.config/linode-cli", "~/.aliyun", "~/.wakatime.cfg", "~/.expo/state.json",
		"~/.config/tea", "~/.jira.d", "~/.zhistory", "~/.histfile", "~/.sh_history", "~/.sqlite_history",
		"~/.rediscli_history", "~/.irb_history",
	}
	DefaultCachePaths = []string{
		"~/.cache", "~/go/pkg", "~/.npm", "~/.local/share/pnpm/store", "~/.yarn/berry/cache", "~/.cargo/registry",
		"~/.cargo/git", "~/.m2/repository", "~/.gradle/caches", "~/.rustup/tmp",
	}
	// DefaultProtectedPaths are what the host runs or obeys later, outside
	// any sandbox. Git reads its configuration (and finds its hooks) not
	// only in .git/config: .git/commondir moves the whole common directory
	// (config and hooks) elsewhere, and .git/config.worktree is read where
	// extensions.worktreeConfig is on (git sparse-checkout turns it on).
	// VS Code (and Cursor, its fork) runs tasks, MCP servers and
	// interpreters that .vscode/ names; the other agent hosts and editors
	// start the MCP servers, language servers, tasks and lint or test
	// commands their project settings name (Windsurf, Continue, Roo Code,
	// Amazon Q, Kiro, Zed, opencode and its plugins, aider, Qwen Code,
	// Kilo Code, Crush).
	DefaultProtectedPaths = []string{
		".git/config", ".git/config.worktree", ".git/commondir", ".git/hooks/",
		".claude/", ".codex/", ".gemini/", ".cursor/", ".vscode/", ".warden.yaml", ".mcp.json",
		".windsurf/", ".continue/", ".roo/", ".amazonq/", ".kiro/", ".zed/", "opencode.json", ".aider.conf.yml",
		".opencode/", ".qwen/", ".kilocode/", "crush.json", ".crush.json",
	}
)

// builtinProfiles are the profiles every policy has; a file can change them
// field by field.
func builtinProfiles() map[string]profileFile {
	s, b, i := func(v string) *string { return &v }, func(v bool) *bool { return &v }, func(v int) *int { return &v }
	return map[string]profileFile{
		ProfileDefault: {
			Mode: s(""), Project: s("read"), ReadOnly: []string{}, ReadWrite: []string{},
			Network: s("none"), AllowDomains: []string{}, Memory: s("512M"), CPU: s("60s"),
			Timeout: s("30s"), Pids: i(256), NoSpawn: b(false), OutputLimit: s("1M"), FileSize: s("1G"), Env: []string{},
			ReadAll: b(false), UnixSockets: b(false), SessionTmp: b(false), TmpSize: s("0"),
		},
		ProfileGuard: {
			Mode: s(""), Project: s("read"), ReadOnly: []string{}, ReadWrite: []string{},
			Network: s("none"), AllowDomains: []string{}, Memory: s("64M"), CPU: s("10s"),
			Timeout: s("30s"), Pids: i(64), NoSpawn: b(true), OutputLimit: s("1M"), FileSize: s("64M"), Env: []string{},
			ReadAll: b(true), UnixSockets: b(false), SessionTmp: b(false), TmpSize: s("0"),
		},
		ProfileWorkspace: {
			Mode: s(""), Project: s("write"), ReadOnly: []string{}, ReadWrite: []string{},
			Network: s("proxy"), AllowDomains: []string{}, Memory: s("50%"), CPU: s("0"),
			Timeout: s("10m"), Pids: i(4096), NoSpawn: b(false), OutputLimit: s("64M"), FileSize: s("0"), Env: []string{},
			ReadAll: b(true), UnixSockets: b(true), SessionTmp: b(true), TmpSize: s("50%"),
		},
	}
}

var sandboxSection = &sectionDef[sandboxFile]{
	key: "sandbox",
	defaultsOf: func() *sandboxFile {
		return &sandboxFile{
			Mode: "standard", Engine: "auto", KeepOneShot: true, Profiles: builtinProfiles(),
			SecretPaths: slices.Clone(DefaultSecretPaths), CachePaths: slices.Clone(DefaultCachePaths),
			ProtectedPaths: slices.Clone(DefaultProtectedPaths),
		}
	},
	check:     checkSandbox,
	toRuntime: sandboxToRuntime,
}

func checkSandbox(f *sandboxFile, c *checker) {
	f.Mode, f.Engine = strings.ToLower(f.Mode), strings.ToLower(f.Engine)
	if !slices.Contains(SandboxModes, f.Mode) {
		c.reportf([]any{"mode"}, "%q is not a sandbox mode; want one of %s", f.Mode, strings.Join(SandboxModes, ", "))
	}
	if !slices.Contains(SandboxEngines, f.Engine) {
		c.reportf([]any{"engine"}, "%q is not a sandbox engine; want one of %s", f.Engine, strings.Join(SandboxEngines, ", "))
	}
	for _, l := range []struct {
		key   string
		items []string
	}{{"secret_paths", f.SecretPaths}, {"cache_paths", f.CachePaths}} {
		for i, p := range l.items {
			if !strings.HasPrefix(p, "/") && p != "~" && !strings.HasPrefix(p, "~/") {
				c.reportf([]any{l.key, i}, "path %q must be absolute or start with ~/", p)
			}
		}
	}
	for i, p := range f.ProtectedPaths {
		if p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || slices.Contains(strings.Split(p, "/"), "..") {
			c.reportf([]any{"protected_paths", i}, "path %q must be relative to the project and stay inside it, like .git/config", p)
		}
	}
	builtin := builtinProfiles()
	for name, pf := range f.Profiles {
		if !validProfileName(name) {
			c.reportf([]any{"profiles", name}, "profile name %q must be letters, digits, - and _", name)
			continue
		}
		base, ok := builtin[name]
		if !ok {
			base = builtin[ProfileDefault]
		}
		merged := mergeProfile(base, pf)
		f.Profiles[name] = merged
		if _, err := profileToRuntime(merged, f.Mode); err != nil {
			c.reportf([]any{"profiles", name}, "%v", err)
		} else if pf.Mode != nil && strings.EqualFold(*pf.Mode, "off") && !f.UnsafeAllowOff {
			c.reportf([]any{"profiles", name, "mode"}, "profile %s runs commands with no isolation; set sandbox.unsafe_allow_off: true to allow that", name)
		}
	}
	for name, pf := range builtin {
		if _, ok := f.Profiles[name]; !ok {
			f.Profiles[name] = pf
		}
	}
}

func validProfileName(n string) bool {
	return n != "" && len(n) <= 64 && !strings.ContainsFunc(n, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	})
}

// mergeProfile fills the fields pf leaves out from base.
func mergeProfile(base, pf profileFile) profileFile {
	out := base
	set := func(dst **string, v *string) {
		if v != nil {
			*dst = v
		}
	}
	set(&out.Mode, pf.Mode)
	set(&out.Project, pf.Project)
	set(&out.Network, pf.Network)
	set(&out.Memory, pf.Memory)
	set(&out.CPU, pf.CPU)
	set(&out.Timeout, pf.Timeout)
	set(&out.OutputLimit, pf.OutputLimit)
	set(&out.FileSize, pf.FileSize)
	set(&out.TmpSize, pf.TmpSize)
	if pf.Pids != nil {
		out.Pids = pf.Pids
	}
	for _, b := range []struct{ dst, src **bool }{
		{&out.NoSpawn, &pf.NoSpawn}, {&out.ReadAll, &pf.ReadAll}, {&out.UnixSockets, &pf.UnixSockets}, {&out.SessionTmp, &pf.SessionTmp},
	} {
		if *b.src != nil {
			*b.dst = *b.src
		}
	}
	for _, l := range []struct{ dst, src *[]string }{
		{&out.ReadOnly, &pf.ReadOnly}, {&out.ReadWrite, &pf.ReadWrite},
		{&out.AllowDomains, &pf.AllowDomains}, {&out.Env, &pf.Env},
	} {
		if *l.src != nil {
			*l.dst = *l.src
		}
	}
	return out
}

func (pf profileFile) mode(section string) string {
	if pf.Mode == nil || *pf.Mode == "" {
		return section
	}
	return strings.ToLower(*pf.Mode)
}

// profileToRuntime checks a merged profile and converts it.
func profileToRuntime(pf profileFile, sectionMode string) (SandboxProfile, error) {
	p := SandboxProfile{
		Mode:         pf.mode(sectionMode),
		Project:      strings.ToLower(*pf.Project),
		ReadOnly:     slices.Clone(pf.ReadOnly),
		ReadWrite:    slices.Clone(pf.ReadWrite),
		Network:      strings.ToLower(*pf.Network),
		AllowDomains: slices.Clone(pf.AllowDomains),
		Pids:         *pf.Pids,
		NoSpawn:      *pf.NoSpawn,
		Env:          slices.Clone(pf.Env),
		ReadAll:      *pf.ReadAll,
		UnixSockets:  *pf.UnixSockets,
		SessionTmp:   *pf.SessionTmp,
	}
	if !slices.Contains(SandboxModes, p.Mode) {
		return p, fmt.Errorf("mode %q is not a sandbox mode; want one of %s", p.Mode, strings.Join(SandboxModes, ", "))
	}
	if !slices.Contains([]string{"read", "write", "none"}, p.Project) {
		return p, fmt.Errorf("project %q is not one of read, write, none", p.Project)
	}
	if p.Network != "none" && p.Network != "proxy" {
		return p, fmt.Errorf("network %q is not one of none, proxy", p.Network)
	}
	if p.Pids < 0 {
		return p, fmt.Errorf("pids %d is negative", p.Pids)
	}
	for _, path := range append(slices.Clone(p.ReadOnly), p.ReadWrite...) {
		if !strings.HasPrefix(path, "/") && path != "~" && !strings.HasPrefix(path, "~/") {
			return p, fmt.Errorf("path %q must be absolute or start with ~/", path)
		}
	}
	for _, d := range p.AllowDomains {
		if _, err := netguard.ParseRule(d); err != nil {
			return p, fmt.Errorf("allow_domains: %v", err)
		}
	}
	for _, e := range p.Env {
		if e == "" || strings.ContainsAny(e, "= \t\n") {
			return p, fmt.Errorf("env entry %q is not a variable name", e)
		}
	}
	var err error
	size := func(what, s string) int64 {
		n, e := sandbox.ParseBytes(s)
		if e != nil && err == nil {
			err = fmt.Errorf("%s: %v", what, e)
		}
		return n
	}
	dur := func(what, s string) time.Duration {
		d, e := time.ParseDuration(s)
		if s == "0" {
			d, e = 0, nil
		}
		if (e != nil || d < 0) && err == nil {
			err = fmt.Errorf("%s %q is not a duration; write it like 10s or 2m", what, s)
		}
		return d
	}
	// A size, or a share (50%) of what the machine has.
	sizeOrShare := func(what, of, s string) (n int64, pct int) {
		if v, ok := strings.CutSuffix(strings.TrimSpace(s), "%"); ok {
			pct, e := strconv.Atoi(v)
			if (e != nil || pct <= 0 || pct > 100) && err == nil {
				err = fmt.Errorf("%s %q is not a share of %s; write it like 50%%", what, s, of)
			}
			return 0, pct
		}
		return size(what, s), 0
	}
	p.Memory, p.MemoryShare = sizeOrShare("memory", "the machine's memory", *pf.Memory)
	p.TmpSize, p.TmpShare = sizeOrShare("tmp_size", "the free disk", *pf.TmpSize)
	p.OutputLimit = size("output_limit", *pf.OutputLimit)
	p.FileSize = size("file_size", *pf.FileSize)
	p.CPU = dur("cpu", *pf.CPU)
	p.Timeout = dur("timeout", *pf.Timeout)
	if err == nil && p.Timeout <= 0 {
		err = fmt.Errorf("timeout must be greater than zero")
	}
	return p, err
}

func sandboxToRuntime(f *sandboxFile, p *Policy) {
	s := Sandbox{
		Mode: f.Mode, Engine: f.Engine, Strict: f.Strict, UnsafeAllowOff: f.UnsafeAllowOff,
		UnsafeHostWhenUnavailable: f.UnsafeHostWhenUnavailable, KeepOneShot: f.KeepOneShot,
		SecretPaths: slices.Clone(f.SecretPaths), CachePaths: slices.Clone(f.CachePaths),
		ProtectedPaths: slices.Clone(f.ProtectedPaths), Profiles: map[string]SandboxProfile{},
	}
	names := slices.Collect(maps.Keys(f.Profiles))
	sort.Strings(names)
	for _, name := range names {
		if rp, err := profileToRuntime(f.Profiles[name], f.Mode); err == nil {
			s.Profiles[name] = rp
		}
	}
	p.Sandbox = s
}
