package nestedgit

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agentwarden/warden/internal/safedir"
)

// Neutralize is what Sweep does to one git directory, for a caller that
// knows the command made or changed it: gitDir (where it really is) keeps
// only its inert configuration keys and git's sample hooks; the rest goes
// to quarantine. project is the work tree it belongs to (core.worktree
// stays where it leads inside it).
func Neutralize(gitDir, project, quarantine string, now time.Time) Finding {
	return neutralize(Repo{GitDir: gitDir, Via: "the project's own git directory, made by the command"}, project, quarantine, now)
}

// neutralize takes out of r's git directory what would run a program when
// git on the host works there: every configuration key (of config and
// config.worktree) not known to be inert, and every hook but git's own
// samples. The originals go to a directory of their own under quarantine,
// with a RESTORE.txt; a file git cannot read is moved as a whole (git works
// in a repository without one).
//
// r.GitDir is where the git directory really is (no symlink on its path):
// it is opened without following one (safedir.Open), and everything is
// read, written and moved through that descriptor, never following a
// symlink the command left there. This process is unconfined: a
// sandboxed process that made config a symlink to ~/.bashrc, or a
// component of the path a symlink to ~/.ssh while the sweep ran, must not
// have it write or move anything there.
func neutralize(r Repo, project, quarantine string, now time.Time) Finding {
	f := Finding{Repo: r}
	gd, err := openListable(r.GitDir)
	if err != nil {
		f.Err = err
		return f
	}
	defer gd.Close()
	dst := quarantineDir(quarantine, r.GitDir, now)
	var errs []error
	moveOut := func(dir *safedir.Dir, src, name string) error {
		if f.Moved == "" {
			if err := os.MkdirAll(dst, 0o700); err != nil {
				return err
			}
			f.Moved = dst
		}
		to := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return err
		}
		from := dir.Path() + "/" + src
		err := os.Rename(from, to)
		if errors.Is(err, syscall.EXDEV) {
			// The quarantine (in warden's home) is on another
			// filesystem than the git directory.
			return moveAcross(from, to)
		}
		return err
	}
	for _, name := range []string{"config", "config.worktree"} {
		p := filepath.Join(r.GitDir, name)
		if _, err := os.Lstat(gd.Path() + "/" + name); err != nil {
			continue
		}
		data, err := gd.ReadNoFollow(name, maxConfig)
		var es []entry
		if err == nil {
			es, err = parseConfig(data)
		}
		if err != nil {
			// Not a file git reads (a symlink, a directory, too large), or
			// one it cannot: moved as a whole.
			if err := moveOut(gd, name, name); err != nil {
				errs = append(errs, fmt.Errorf("move %s: %w", p, err))
				continue
			}
			f.Whole = append(f.Whole, name)
			continue
		}
		var keep []entry
		var drop []string
		for _, e := range es {
			if inert(e, r.GitDir, project) {
				keep = append(keep, e)
			} else if !slices.Contains(drop, e.Key) {
				drop = append(drop, e.Key)
			}
		}
		if len(drop) == 0 {
			continue
		}
		if err := rewrite(gd, name, keep, func() error { return moveOut(gd, name, name) }); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p, err))
			continue
		}
		f.Keys = append(f.Keys, drop...)
	}
	if st, err := os.Lstat(gd.Path() + "/hooks"); err == nil {
		if !st.IsDir() { // a symlink to hooks elsewhere, or a file
			if err := moveOut(gd, "hooks", "hooks"); err != nil {
				errs = append(errs, fmt.Errorf("move %s: %w", filepath.Join(r.GitDir, "hooks"), err))
			} else {
				f.Hooks = append(f.Hooks, "hooks")
			}
		} else if hd, err := gd.SubListable("hooks"); err != nil {
			errs = append(errs, fmt.Errorf("open %s: %w", filepath.Join(r.GitDir, "hooks"), err))
		} else {
			entries, err := hd.List()
			if err != nil {
				errs = append(errs, err)
			}
			for _, e := range entries {
				if strings.HasSuffix(e.Name(), ".sample") && e.Type().IsRegular() {
					continue
				}
				if err := moveOut(hd, e.Name(), filepath.Join("hooks", e.Name())); err != nil {
					errs = append(errs, fmt.Errorf("move hook %s: %w", e.Name(), err))
					continue
				}
				f.Hooks = append(f.Hooks, e.Name())
			}
			hd.Close()
		}
	}
	if f.Moved != "" {
		if err := os.WriteFile(filepath.Join(dst, "RESTORE.txt"), []byte(restoreText(f)), 0o600); err != nil {
			errs = append(errs, err)
		}
	}
	f.Err = errors.Join(errs...)
	return f
}

// maxConfig bounds a configuration file the sweep reads: git's own are a
// few hundred bytes.
const maxConfig = 1 << 20

// rewrite replaces the configuration file name in dir by one holding only
// keep, after moveOut has moved the original to quarantine. The new file
// is a new name (an existing one, a symlink the command planted, fails)
// holding what git reads back as exactly keep; when it cannot be made the
// repository goes without a config.
func rewrite(dir *safedir.Dir, name string, keep []entry, moveOut func() error) error {
	data, err := formatConfig(keep)
	if err == nil {
		var back []entry
		if back, err = parseConfig(data); err == nil && !slices.Equal(back, keep) {
			err = errors.New("git reads it back otherwise")
		}
	}
	tmp := ""
	if err == nil {
		tmp = name + ".warden-new-" + randomSuffix()
		if err = dir.CreateNew(tmp, data, 0o644); err != nil {
			tmp = "" // no replacement: better no config than one that runs code
		}
	}
	if err := moveOut(); err != nil {
		if tmp != "" {
			_ = os.Remove(dir.Path() + "/" + tmp)
		}
		return fmt.Errorf("move it out: %w", err)
	}
	if tmp != "" {
		if err := os.Rename(dir.Path()+"/"+tmp, dir.Path()+"/"+name); err != nil {
			_ = os.Remove(dir.Path() + "/" + tmp)
			return fmt.Errorf("put the inert keys back: %w", err)
		}
	}
	return nil
}

// randomSuffix names a new file no sandboxed process can have planted.
func randomSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// restoreText is the RESTORE.txt of a quarantine directory.
func restoreText(f Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "warden moved these files out of the git directory\n\n    %s\n\n", f.GitDir)
	fmt.Fprintf(&b, "which git on your machine enters by itself (%s): a command an agent ran\nin warden's sandbox created or changed it, and what is here would have\nrun programs on your machine, outside the sandbox, at your next git\nstatus, diff, commit or checkout there.\n\n", f.Via)
	if len(f.Keys) > 0 {
		fmt.Fprintf(&b, "Configuration keys taken out: %s.\nThe config file there now holds only the other keys; the original is here.\n\n", strings.Join(f.Keys, ", "))
	}
	if len(f.Whole) > 0 {
		fmt.Fprintf(&b, "Moved as a whole (git could not read it): %s.\n\n", strings.Join(f.Whole, ", "))
	}
	if len(f.Hooks) > 0 {
		fmt.Fprintf(&b, "Hooks moved: %s.\n\n", strings.Join(f.Hooks, ", "))
	}
	if len(f.Links) > 0 {
		fmt.Fprintf(&b, "Symbolic links removed (git on your machine reads these files through a\nlink and prints what it read, in its status and its errors; git never\nmakes a link there itself): %s.\n\n", strings.Join(f.Links, ", "))
	}
	b.WriteString("Read them first. Only if you trust them, put them back with:\n\n")
	for _, name := range append(append([]string{}, f.Whole...), configMoved(f)...) {
		fmt.Fprintf(&b, "    cp -a %s %s\n", filepath.Join(f.Moved, name), filepath.Join(f.GitDir, name))
	}
	if len(f.Hooks) > 0 {
		fmt.Fprintf(&b, "    cp -a %s/. %s/\n", filepath.Join(f.Moved, "hooks"), filepath.Join(f.GitDir, "hooks"))
	}
	for _, l := range f.Links {
		path, target, _ := strings.Cut(l, " -> ")
		if !filepath.IsAbs(path) {
			path = filepath.Join(f.GitDir, path)
		}
		fmt.Fprintf(&b, "    ln -s %s %s\n", shellQuote(target), shellQuote(path))
	}
	return b.String()
}

// configMoved are the configuration files of f moved and rewritten.
func configMoved(f Finding) []string {
	var out []string
	for _, name := range []string{"config", "config.worktree"} {
		if _, err := os.Lstat(filepath.Join(f.Moved, name)); err == nil && !slices.Contains(f.Whole, name) {
			out = append(out, name)
		}
	}
	return out
}

// moveAcross moves src to to on another filesystem: a copy, then src
// removed. What cannot be copied is removed all the same (it must not stay
// where git on the host runs it), and a note says so where the copy would
// be.
func moveAcross(src, to string) error {
	st, err := os.Lstat(src)
	if err != nil {
		return err
	}
	var cerr error
	switch {
	case st.Mode().IsRegular():
		cerr = copyFile(src, to, st.Mode().Perm()&0o700)
	case st.Mode()&fs.ModeSymlink != 0:
		var target string
		if target, cerr = os.Readlink(src); cerr == nil {
			cerr = os.Symlink(target, to)
		}
	case st.IsDir():
		cerr = os.CopyFS(to, os.DirFS(src))
	default:
		cerr = fmt.Errorf("%s is not a file, a directory or a symlink", src)
	}
	if err := os.RemoveAll(src); err != nil {
		return fmt.Errorf("remove %s after copying it to the quarantine on another filesystem: %w", src, err)
	}
	if cerr != nil {
		_ = os.WriteFile(to+".not-kept.txt", []byte(fmt.Sprintf("%s was removed, but could not be copied here: %v\n", src, cerr)), 0o600)
	}
	return nil
}

func copyFile(src, to string, perm fs.FileMode) error {
	f, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, perm)
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// cutPointer moves r.Pointer (a .git file or symlink, or a commondir file)
// to the quarantine when the command could write the directory it lies in
// (writable, by where that really is): git on the host no longer follows
// it into r.GitDir. A pointer that is a directory, or lies where the
// command could not write, is left alone (the user's).
func cutPointer(r Repo, writable func(string) bool, quarantine string, now time.Time) Finding {
	f := Finding{Repo: r, Cut: true}
	parent, err := filepath.EvalSymlinks(filepath.Dir(r.Pointer))
	if err != nil || !writable(parent) {
		return Finding{}
	}
	name := filepath.Base(r.Pointer)
	if st, err := os.Lstat(filepath.Join(parent, name)); err != nil || st.IsDir() {
		return Finding{}
	}
	dir, err := openListable(parent)
	if err != nil {
		f.Err = err
		return f
	}
	defer dir.Close()
	dst := quarantineDir(quarantine, parent, now)
	if err := os.MkdirAll(dst, 0o700); err != nil {
		f.Err = err
		return f
	}
	f.Moved = dst
	from, to := dir.Path()+"/"+name, filepath.Join(dst, name)
	err = os.Rename(from, to)
	if errors.Is(err, syscall.EXDEV) {
		err = moveAcross(from, to)
	}
	if err != nil {
		f.Err = fmt.Errorf("move %s: %w", r.Pointer, err)
		return f
	}
	if r.Escape != "" {
		note := fmt.Sprintf("warden moved\n\n    %s\n\nhere: it has an entry %q, a path outside its work tree that git never\nwrites, which git on your machine would follow (into a repository\nelsewhere, whose configuration it obeys, or to a file git diff prints).\nWithout it git sees every file as new; `git reset` (in the work tree)\nmakes a fresh index from HEAD. Put this one back only if you know why\nit holds that entry:\n\n    cp -a %s %s\n",
			r.Pointer, r.Escape, shellQuote(to), shellQuote(filepath.Join(parent, name)))
		if err := os.WriteFile(filepath.Join(dst, "RESTORE.txt"), []byte(note), 0o600); err != nil {
			f.Err = err
		}
		return f
	}
	note := fmt.Sprintf("warden moved\n\n    %s\n\nhere: it led git on your machine into the git directory\n\n    %s\n\n(%s), which the command that made it could not write and which nothing\nled to before that command: a git directory an earlier command, run with\nother rights, may have made, whose configuration git would obey.\n\nRead that git directory's config and hooks first. Only if you trust them,\nput it back with:\n\n    cp -a %s %s\n",
		r.Pointer, r.GitDir, r.Via, shellQuote(to), shellQuote(filepath.Join(parent, name)))
	if err := os.WriteFile(filepath.Join(dst, "RESTORE.txt"), []byte(note), 0o600); err != nil {
		f.Err = err
	}
	return f
}
