package app

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/shellguard"
)

// ProjectPolicyFile is the name of a project's own policy file, looked up from
// a command's working directory upwards. It uses the warden.yaml format, and
// only its tightening parts count (see shellguard.Policy.Tighten): extra
// suspicious and destructive patterns, stricter table cells, and switching
// task runners or the sandbox off. The agent can edit it, so it can never
// loosen anything.
const ProjectPolicyFile = ".warden.yaml"

// projectLayer is the shell stage's Project hook: the layer for cwd under the
// user's home.
func projectLayer(cwd string) (*shellguard.Policy, error) {
	home, _ := os.UserHomeDir()
	return ProjectShellPolicy(cwd, home)
}

// ExplainPolicy is the shell policy the gate applies to a command run in cwd:
// the policy file's, tightened by the project's layer when it has one.
func ExplainPolicy(home Home, p *config.Policy, cwd string) (shellguard.Policy, error) {
	sp := ShellPolicy(p, shellPaths(FilesystemGuard(home, p)))
	layer, err := projectLayer(cwd)
	if err != nil {
		return sp, err
	}
	if layer != nil {
		sp = sp.Tighten(*layer)
	}
	return sp, nil
}

// maxProjectPolicy bounds a project policy file.
const maxProjectPolicy = 1 << 20

// ProjectShellPolicy finds the project policy file for cwd (in cwd or the
// nearest parent, stopping below home and at the filesystem root) and returns
// its shell layer, or nil when there is none. A file that is not a regular
// file, is too large or has any problem is an error: the caller fails closed.
func ProjectShellPolicy(cwd, home string) (*shellguard.Policy, error) {
	path, ok := findProjectPolicy(cwd, home)
	if !ok {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxProjectPolicy+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(data) > maxProjectPolicy {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxProjectPolicy)
	}
	l, err := config.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(l.Problems) > 0 {
		return nil, fmt.Errorf("%s: %v", path, l.Problems[0].Error())
	}
	p := ShellPolicy(l.Policy, nil) // a layer never changes the denied paths
	return &p, nil
}

// findProjectPolicy walks from cwd up to (not including) home, or to the root
// when cwd is not under home, and returns the first project policy file.
func findProjectPolicy(cwd, home string) (string, bool) {
	dir := filepath.Clean(cwd)
	if !filepath.IsAbs(dir) {
		return "", false
	}
	home = filepath.Clean(home)
	for {
		if home != "" && dir == home {
			return "", false
		}
		path := filepath.Join(dir, ProjectPolicyFile)
		if _, err := os.Lstat(path); err == nil {
			return path, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
