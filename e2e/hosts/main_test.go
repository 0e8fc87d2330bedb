package hosts

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentwarden/warden/sandbox"
)

var flagKeep = flag.Bool("hosts.keep", false, "keep the worlds (fake homes, projects, the hosts' transcripts) after the run, and print where")

// harness is what every world of a test binary shares: warden built once,
// the hosts' binaries and what their commands run with.
type harness struct {
	module   string            // the module's root
	base     string            // where the worlds live
	warden   string            // the warden binary; warden-exec sits beside it
	bin      map[string]string // host → its command, as npm installed it
	versions string            // the pins scripts/hosts.sh installed
	path     string            // PATH of the hosts and their commands
}

var (
	setupOnce sync.Once
	shared    *harness
	setupErr  error
	skipWhy   string
)

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if shared != nil {
		if *flagKeep {
			fmt.Fprintf(os.Stderr, "e2e/hosts: worlds kept in %s\n", shared.base)
		} else {
			removeAll(shared.base)
		}
	}
	os.Exit(code)
}

// setup skips the test under -short, where no sandbox can run, or where the
// npm registry cannot be reached to install the hosts; otherwise it returns
// the shared harness, building warden and installing the hosts on first use.
func setup(t *testing.T) *harness {
	t.Helper()
	if testing.Short() {
		t.Skip("the real-host suite installs and runs Claude Code, Codex and Gemini CLI; skipped with -short")
	}
	if err := sandbox.Supported(); err != nil {
		t.Skipf("warden's sandbox cannot run on this kernel, so no command can be contained: %v", err)
	}
	setupOnce.Do(func() { shared, skipWhy, setupErr = newHarness() })
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
	return shared
}

func newHarness() (*harness, string, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(gomod)) == "" {
		return nil, "", fmt.Errorf("find the module root with go env GOMOD: %v", err)
	}
	h := &harness{module: filepath.Dir(strings.TrimSpace(string(gomod)))}

	// The hosts, pinned, as `make test` installs them (scripts/deps.sh runs
	// scripts/hosts.sh); run here too when they are missing. The script
	// installs nothing when they are there already.
	npm := filepath.Join(h.module, "bin", "cache", "npm-hosts")
	script := exec.Command(filepath.Join(h.module, "scripts", "hosts.sh"))
	script.Dir = h.module
	if out, err := script.CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("scripts/hosts.sh: %v\n%s", err, out)
	}
	if why, err := os.ReadFile(filepath.Join(npm, ".unreachable")); err == nil {
		return nil, "the agent hosts cannot be installed: " + strings.TrimSpace(string(why)), nil
	}
	v, err := os.ReadFile(filepath.Join(npm, ".hosts-versions"))
	if err != nil {
		return nil, "", fmt.Errorf("scripts/hosts.sh left no %s/.hosts-versions: %v", npm, err)
	}
	h.versions = strings.ReplaceAll(strings.TrimSpace(string(v)), "\n", ", ")
	h.bin = map[string]string{}
	for host, name := range map[string]string{"claude": "claude", "codex": "codex", "gemini": "gemini"} {
		p := filepath.Join(npm, "node_modules", ".bin", name)
		if _, err := os.Stat(p); err != nil {
			return nil, "", fmt.Errorf("scripts/hosts.sh installed no %s: %v", name, err)
		}
		h.bin[host] = p
	}

	// Worlds outside /tmp: Codex refuses to put its helper links there, and
	// the sandbox gives each command a /tmp of its own.
	parent := os.Getenv("WARDEN_E2E_DIR")
	if parent == "" {
		parent = "/home"
		if f, err := os.CreateTemp(parent, ".warden-e2e-probe-"); err == nil {
			f.Close()
			os.Remove(f.Name())
		} else if parent, err = os.UserCacheDir(); err != nil {
			return nil, "", fmt.Errorf("no directory outside /tmp for the worlds (set WARDEN_E2E_DIR): %v", err)
		}
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, "", err
	}
	h.base, err = os.MkdirTemp(parent, "warden-hosts-")
	if err != nil {
		return nil, "", fmt.Errorf("create the worlds' directory: %v", err)
	}
	shared = h // so TestMain removes it even if the rest fails
	if err := os.Chmod(h.base, 0o755); err != nil {
		return nil, "", err
	}

	// warden and warden-exec side by side, as `make build` leaves them.
	h.warden = filepath.Join(h.base, "bin", "warden")
	build := exec.Command("go", "build", "-trimpath", "-o", h.warden, "./cmd/warden")
	build.Dir = h.module
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("go build ./cmd/warden: %v\n%s", err, out)
	}
	// The same warden-exec `make build` makes (the C client where a C
	// compiler is here).
	build = exec.Command("scripts/warden-exec.sh", filepath.Join(h.base, "bin", "warden-exec"))
	build.Dir = h.module
	if out, err := build.CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("scripts/warden-exec.sh: %v\n%s", err, out)
	}
	// warden on the PATH, as `make install` leaves it: a project's hook
	// names no path of this machine and finds warden there.
	h.path = filepath.Dir(h.warden) + ":" + hostPath()
	return h, "", nil
}

// hostPath is the PATH the hosts and their commands run with: node's and
// git's directories, then the system's (python3 is the system's, not a
// version manager's shim under the real home, which the sandbox masks).
func hostPath() string {
	var dirs []string
	add := func(d string) {
		for _, x := range dirs {
			if x == d {
				return
			}
		}
		dirs = append(dirs, d)
	}
	for _, tool := range []string{"node", "git"} {
		if p, err := exec.LookPath(tool); err == nil {
			add(filepath.Dir(p))
		}
	}
	for _, d := range []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
		add(d)
	}
	return strings.Join(dirs, ":")
}

// removeAll removes a tree, first making its directories writable.
func removeAll(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}
