package undo

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
)

// Host runs git on this machine, as the user would run it, in the user's
// environment less the variables that would point it at another
// repository, work tree or index. It is `warden undo`'s Runner; warden
// exec runs git inside the sandbox instead.
type Host struct {
	// Program is the git program; "" finds git on $PATH.
	Program string
}

var _ Runner = Host{}

// placeVars are the variables that point git elsewhere than the directory
// it runs in.
var placeVars = []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM"}

// PlaceVar returns the first variable of env (NAME=VALUE) that points git
// at another repository, work tree or index than the directory it runs in,
// or "".
func PlaceVar(env []string) string {
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		for _, v := range placeVars {
			if name == v {
				return name
			}
		}
	}
	return ""
}

// CleanEnv is env without the variables that point git elsewhere.
func CleanEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if PlaceVar([]string{kv}) == "" {
			out = append(out, kv)
		}
	}
	return out
}

// Git implements Runner.
func (h Host) Git(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	prog := h.Program
	if prog == "" {
		prog = "git"
	}
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	cmd.Env = append(CleanEnv(os.Environ()), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &limited{buf: &stderr, n: 64 << 10}
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		return stdout.Bytes(), &GitError{Args: args, Exit: ee.ExitCode(), Stderr: stderr.String()}
	}
	return stdout.Bytes(), err
}

// Remove implements Runner.
func (Host) Remove(_ context.Context, path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// limited keeps the first n bytes written to it and drops the rest.
type limited struct {
	buf *bytes.Buffer
	n   int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.n - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// Exists implements Runner.
func (Host) Exists(_ context.Context, path string) (bool, error) {
	_, err := os.Lstat(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	}
	return false, err
}
