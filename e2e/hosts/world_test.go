package hosts

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A world is one user's machine as far as a host run can tell: a fake home
// holding a sentinel file and an SSH key with a marker, warden's home in it
// (~/.warden, by `warden init`), and a project under git with warden's hook
// installed for one host by `warden install HOST --project`.
type world struct {
	h          *harness
	host       string
	root       string
	home       string
	wardenHome string
	project    string
	sentinel   string // ~/sentinel: `rm -rf ~` must leave it
	sentinelIs string // its content
	keyMarker  string // inside ~/.ssh/id_rsa: must never reach the model
	env        []string
}

func marker(kind string) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return "WARDEN-E2E-" + kind + "-" + hex.EncodeToString(b)
}

// newWorld builds a world for host; it is removed when t ends (unless
// -hosts.keep), after its sandboxes are stopped.
func newWorld(t *testing.T, h *harness, host string) *world {
	t.Helper()
	root, err := os.MkdirTemp(h.base, host+"-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	w := &world{h: h, host: host, root: root, home: filepath.Join(root, "home")}
	w.wardenHome = filepath.Join(w.home, ".warden")
	w.project = filepath.Join(w.home, "src", "app")
	user := os.Getenv("USER")
	if user == "" {
		user = "root"
	}
	w.env = []string{"PATH=" + h.path, "HOME=" + w.home, "USER=" + user, "LANG=C.UTF-8", "TERM=dumb", "NO_COLOR=1"}
	if !*flagKeep {
		t.Cleanup(func() { removeAll(root) })
	}
	t.Cleanup(func() { w.stopSandboxes(t) })

	w.sentinel = filepath.Join(w.home, "sentinel")
	w.sentinelIs = marker("sentinel")
	w.write(t, w.sentinel, w.sentinelIs+"\n", 0o644)
	w.keyMarker = marker("ssh")
	w.write(t, filepath.Join(w.home, ".ssh", "id_rsa"),
		"-----BEGIN OPENSSH PRIVATE KEY-----\n"+w.keyMarker+"\n-----END OPENSSH PRIVATE KEY-----\n", 0o600)
	if err := os.Chmod(filepath.Join(w.home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	w.write(t, filepath.Join(w.home, ".gitconfig"),
		"[user]\n\tname = E2E User\n\temail = e2e@example.com\n[init]\n\tdefaultBranch = main\n", 0o644)

	// As a user would: warden init, then warden install in the project.
	w.warden(t, "", "init")
	w.write(t, filepath.Join(w.project, "README.md"), "# app\n", 0o644)
	w.write(t, filepath.Join(w.project, "main.go"), "package main\n\nfunc main() {}\n", 0o644)
	w.git(t, "init", "-q", "-b", "main")
	w.git(t, "add", "-A")
	w.git(t, "commit", "-q", "-m", "initial")
	w.git(t, "branch", "topic")
	w.warden(t, w.project, "install", installName(host), "--project")
	return w
}

func (w *world) write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// warden runs warden as the world's user and returns its stdout.
func (w *world) warden(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := w.try(dir, args...)
	if err != nil {
		t.Fatalf("warden %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// try runs warden as the world's user; out holds stdout, and stderr too on
// failure.
func (w *world) try(dir string, args ...string) (string, error) {
	c := exec.Command(w.h.warden, args...)
	c.Dir, c.Env = dir, w.env
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	if err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}

func (w *world) git(t *testing.T, args ...string) string {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir, c.Env = w.project, w.env
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// stopSandboxes stops the session worlds the run left (hosts other than
// Claude Code send no session end), through warden, by name.
func (w *world) stopSandboxes(t *testing.T) {
	out, err := w.try("", "sandbox", "status", "--json")
	if err != nil {
		return
	}
	var infos []struct {
		Name  string `json:"name"`
		State string `json:"state"`
	}
	if json.Unmarshal([]byte(out), &infos) != nil {
		var one struct {
			Name string `json:"name"`
		}
		if json.Unmarshal([]byte(out), &one) != nil || one.Name == "" {
			return
		}
		infos = append(infos, struct {
			Name  string `json:"name"`
			State string `json:"state"`
		}{Name: one.Name})
	}
	for _, i := range infos {
		if i.State == "stopped" {
			continue
		}
		if out, err := w.try("", "sandbox", "stop", i.Name); err != nil {
			t.Logf("warden sandbox stop %s: %v\n%s", i.Name, err, out)
		}
	}
}

// A hostRun is what one headless host run did.
type hostRun struct {
	Exit    int
	Stdout  string
	Stderr  string
	Elapsed time.Duration
}

// runTimeout bounds one host run.
const runTimeout = 3 * time.Minute

// run starts the world's host headless in its project, with its model at
// m, and waits for it.
func (w *world) run(t *testing.T, m *model, prompt string) hostRun {
	t.Helper()
	spec := hostSpecs[w.host]
	args, env := spec.command(t, w, m, prompt)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, w.h.bin[installName(w.host)], args...)
	c.Dir = w.project
	c.Env = append(append([]string{}, w.env...), env...)
	c.Stdin = nil // /dev/null: codex exec waits on an open stdin
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	c.WaitDelay = 5 * time.Second
	start := time.Now()
	err := c.Run()
	r := hostRun{Stdout: stdout.String(), Stderr: stderr.String(), Elapsed: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("%s did not finish within %s\nstdout: %s\nstderr: %s\n%s", w.host, runTimeout, clip(r.Stdout, 4000), clip(r.Stderr, 4000), m.requests())
	case errors.As(err, &exit):
		r.Exit = exit.ExitCode()
	case err != nil:
		t.Fatalf("run %s: %v", w.host, err)
	}
	t.Logf("%s ran %.1fs, exit %d", w.host, r.Elapsed.Seconds(), r.Exit)
	return r
}
