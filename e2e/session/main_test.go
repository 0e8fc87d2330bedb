package session

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwarden/warden/sandbox"
)

var (
	flagDirect = flag.Bool("e2e.direct", false,
		"run both corpora with no hook, to check the corpora themselves: every ordinary command must work (those that must ask are left out) and every attack case must have an effect")
	flagKeep = flag.Bool("e2e.keep", false, "keep the worlds (fake homes, projects) after the run, and print where")
)

// harness is what every world of a test binary shares: the warden binary,
// built once, and what the host offers.
type harness struct {
	warden string // the warden binary
	base   string // where the worlds live (WARDEN_E2E_DIR; /tmp works too: the sandbox carries the home and project into its private /tmp)
	path   string // PATH of the host's commands
	// metadata is the first line 169.254.169.254 answers on this machine,
	// or "" when nothing answers (a case reaching it is then unobservable).
	metadata string
}

var (
	setupOnce sync.Once
	shared    *harness
	setupErr  error
)

// TestMain raises -parallel (unless given) so that the sessions, which
// mostly wait on processes, overlap, and removes the worlds at the end.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(max(8, 4*runtime.NumCPU())))
	}
	code := m.Run()
	if shared != nil {
		if *flagKeep {
			fmt.Fprintf(os.Stderr, "e2e/session: worlds kept in %s\n", shared.base)
		} else {
			removeAll(shared.base)
		}
	}
	os.Exit(code)
}

// setup skips the test under -short or where no sandbox can run, and
// otherwise returns the shared harness, building warden on first use.
func setup(t *testing.T) *harness {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end sessions build warden and run hundreds of commands; skipped with -short")
	}
	if err := sandbox.Supported(); err != nil {
		t.Skipf("warden's sandbox cannot run on this kernel, so no command can be contained: %v", err)
	}
	setupOnce.Do(func() { shared, setupErr = newHarness() })
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	return shared
}

func newHarness() (*harness, error) {
	parent := os.Getenv("WARDEN_E2E_DIR")
	if parent == "" {
		parent = "/home"
		if f, err := os.CreateTemp(parent, ".warden-e2e-probe-"); err == nil {
			f.Close()
			os.Remove(f.Name())
		} else if parent, err = os.UserCacheDir(); err != nil {
			return nil, fmt.Errorf("no directory outside /tmp for the worlds (set WARDEN_E2E_DIR): %v", err)
		}
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	base, err := os.MkdirTemp(parent, "warden-e2e-")
	if err != nil {
		return nil, fmt.Errorf("create the worlds' directory: %v", err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		return nil, err
	}
	h := &harness{base: base, warden: filepath.Join(base, "bin", "warden")}
	shared = h // so TestMain removes it even if the rest fails

	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(gomod)) == "" {
		return nil, fmt.Errorf("find the module root with go env GOMOD: %v", err)
	}
	// warden-exec beside warden, as `make build` installs them: the hooks
	// then run each command through the session's supervisor.
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	build := exec.Command("go", "build", "-o", h.warden, "./cmd/warden")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build ./cmd/warden: %v\n%s", err, out)
	}
	// The same warden-exec `make build` makes (the C client where a C
	// compiler is here).
	build = exec.Command("scripts/warden-exec.sh", filepath.Join(base, "bin", "warden-exec"))
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("scripts/warden-exec.sh: %v\n%s", err, out)
	}

	h.path = hostPath()
	h.metadata = probeMetadata()
	return h, nil
}

// hostPath is the PATH the host's commands run with: the directories of the
// real toolchains (python3 resolved past pyenv's shim, which needs the real
// home), then the system's.
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
	if out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output(); err == nil {
		if exe := strings.TrimSpace(string(out)); exe != "" {
			add(filepath.Dir(exe))
		}
	}
	for _, tool := range []string{"go", "node", "npm", "gcc", "make", "git"} {
		if p, err := exec.LookPath(tool); err == nil {
			add(filepath.Dir(p))
		}
	}
	for _, d := range []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
		add(d)
	}
	return strings.Join(dirs, ":")
}

// has reports whether tool is on the host's PATH.
func (h *harness) has(tool string) bool {
	for _, d := range filepath.SplitList(h.path) {
		if fi, err := os.Stat(filepath.Join(d, tool)); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}

// missing returns the first of tools the host lacks, or "".
func (h *harness) missing(tools []string) string {
	for _, tool := range tools {
		if !h.has(tool) {
			return tool
		}
	}
	return ""
}

// probeMetadata asks the cloud metadata address directly, once, and returns
// the first line of its answer: what a command that reached it would print.
func probeMetadata() string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://169.254.169.254/latest/meta-data/", nil)
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 4096))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); len(l) >= 6 {
			return l
		}
	}
	return ""
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// removeAll removes a tree, first making its directories writable (the Go
// module cache makes its own read-only).
func removeAll(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}
