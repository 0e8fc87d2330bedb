package app

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentwarden/warden"
)

// HookBinaries names the programs a hook command starts: Warden, with
// Client (warden-exec; "" for none) in front of it. A bare name, without a
// '/', is looked up on $PATH by the host's shell when the hook runs.
type HookBinaries struct {
	Warden string
	Client string
}

// BinaryOptions says how HookBinariesFor chooses. The zero value looks
// programs up on the real $PATH and refuses binaries in build and
// temporary directories.
type BinaryOptions struct {
	// AnyPath names the running binary by its absolute path, wherever it
	// is: for tests, which install from binaries they build in temporary
	// directories, and setups that want exactly this binary.
	AnyPath bool
	// LookPath finds a program on $PATH; nil is exec.LookPath.
	LookPath func(string) (string, error)
	// Getenv reads the environment (TMPDIR, GOCACHE); nil is os.Getenv.
	Getenv func(string) string
	// TempDirs are where temporary files live besides $TMPDIR; nil is
	// /tmp, /var/tmp and /dev/shm.
	TempDirs []string
}

// HookBinariesFor chooses what a hook installed at scope starts, for the
// running warden at self (symbolic links resolved):
//
//   - at user scope, self by its absolute path (the user's own settings);
//   - at project scope, the bare names `warden` and `warden-exec`, found on
//     $PATH when the hook runs, since a project's settings are shared with
//     everyone who works on it: it is refused when $PATH's warden is not
//     self, so the hook never names a binary nobody checked.
//
// Either way self must be an installed binary: one in a temporary
// directory, Go's build cache or a source checkout's build output goes
// away or changes under the hook, so it is refused with a hint. With
// opt.AnyPath it is not, and a project whose $PATH has no warden, or
// another one, names self by its absolute path instead of being refused.
// warden-exec is named only when it sits beside self.
func HookBinariesFor(self string, scope HookScope, opt BinaryOptions) (HookBinaries, error) {
	lookPath, getenv := opt.LookPath, opt.Getenv
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	client := filepath.Join(filepath.Dir(self), ExecClient)
	if !isExecutable(client) {
		client = ""
	}
	temps := opt.TempDirs
	if temps == nil {
		temps = []string{"/tmp", "/var/tmp", "/dev/shm"}
	}
	if why := transientBinary(self, temps, getenv); why != "" && !opt.AnyPath {
		return HookBinaries{}, warden.Errorf(warden.EInvalid, "this warden binary is %s (%s): a hook pointing at it would break when it is rebuilt or cleaned up", why, self).
			WithHint("install warden at a stable path (`make install`, or `make install PREFIX=$HOME/.local`) and run that warden's install; --allow-any-path points the hook at this binary anyway")
	}
	if scope == HookUser {
		return HookBinaries{Warden: self, Client: client}, nil
	}
	onPath, err := lookPath("warden")
	if err == nil {
		onPath, err = filepath.EvalSymlinks(onPath)
	}
	if opt.AnyPath && (err != nil || !sameFile(onPath, self)) {
		return HookBinaries{Warden: self, Client: client}, nil
	}
	if err != nil {
		return HookBinaries{}, warden.Errorf(warden.EInvalid, "warden is not on your $PATH, and a project's hook finds it there: the project's settings are shared, so they name no path of this machine").
			WithHint("put " + filepath.Dir(self) + " on $PATH (or `make install`) and run install again, or install in your own settings with --user")
	}
	if !sameFile(onPath, self) {
		return HookBinaries{}, warden.Errorf(warden.EInvalid, "the warden on your $PATH is %s, not this one (%s), and a project's hook would run that one", onPath, self).
			WithHint("run `warden install` with the warden $PATH finds, or put " + filepath.Dir(self) + " first on $PATH")
	}
	b := HookBinaries{Warden: "warden"}
	if client != "" {
		if p, err := lookPath(ExecClient); err == nil {
			if p, err = filepath.EvalSymlinks(p); err == nil && sameFile(p, client) {
				b.Client = ExecClient
			}
		}
	}
	return b, nil
}

// transientBinary says why the binary at path is not installed ("" when it
// is): it lies in a temporary directory (a `go run` or `go test` build
// among them), in Go's build cache, or in a Go source tree's build output
// (a module's directory, or its bin/).
func transientBinary(path string, temps []string, getenv func(string) string) string {
	dir := filepath.Dir(path)
	for _, t := range append(slices.Clip(temps), getenv("TMPDIR")) {
		if within(dir, t) {
			return "in a temporary directory"
		}
	}
	cache := getenv("GOCACHE")
	if cache == "" {
		if c, err := os.UserCacheDir(); err == nil {
			cache = filepath.Join(c, "go-build")
		}
	}
	if within(dir, cache) {
		return "in Go's build cache"
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return "the build output of the Go source tree " + d
		}
	}
	return ""
}

// within reports whether path is root or lies under it (root "" never
// holds anything). Both are compared with symbolic links resolved where
// they can be.
func within(path, root string) bool {
	if root == "" {
		return false
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// CheckHookHome makes sure home is a warden home a hook can decide with:
// it must hold a policy file, or every call the hook answers is blocked.
func CheckHookHome(home Home) error {
	_, err := os.Stat(home.PolicyPath())
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return warden.Errorf(warden.EInvalid, "there is no warden home at %s (no %s): a hook deciding with it would block every call", home.Abs(), PolicyFile).
			WithHint("run `warden --home " + home.Abs() + " init` first, then install again")
	default:
		return warden.Errorf(warden.EInvalid, "cannot read the warden home at %s", home.Abs()).Wrap(err).
			WithHint("check the directory's permissions, or pass another --home")
	}
}
