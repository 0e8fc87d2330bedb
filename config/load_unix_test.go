//go:build unix

package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// A policy file that is not one is refused at once with what to do, never
// read until it ends: a named pipe with no writer (opening it waited
// forever), a device that never ends (/dev/zero: read until memory ran out),
// a directory, a file past MaxFileSize. A hook that hangs past its host's
// timeout lets the call through, so each must fail within the test's bound.
func TestLoadRefusesWhatIsNotAPolicyFile(t *testing.T) {
	cases := []struct {
		name string
		make func(t *testing.T, path string)
		want string
	}{
		{"named pipe", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Skipf("cannot make a named pipe here: %v", err)
			}
		}, "a named pipe"},
		{"symlink to a device", func(t *testing.T, path string) {
			if _, err := os.Stat("/dev/zero"); err != nil {
				t.Skipf("no /dev/zero: %v", err)
			}
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}, "a device"},
		{"directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}, "a directory"},
		{"too large", func(t *testing.T, path string) {
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			// Sparse: a valid policy followed by a hole past the bound.
			if _, err := f.Write(DefaultFile()); err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(MaxFileSize + 1); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}, "more than the"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FileName)
			tc.make(t, path)
			for _, load := range []struct {
				name string
				fn   func() error
			}{
				{"Load", func() error { _, err := Load(path); return err }},
				{"LoadCached", func() error {
					_, _, err := LoadCached(path, filepath.Join(t.TempDir(), "policy.json"))
					return err
				}},
			} {
				done := make(chan error, 1)
				go func() { done <- load.fn() }()
				select {
				case err := <-done:
					we := wantCode(t, err, warden.EInvalid, tc.want)
					if !strings.Contains(we.Hint, "warden init") {
						t.Errorf("%s: hint = %q, want it to say what to do (warden init)", load.name, we.Hint)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("%s(%s) did not return in 10 s", load.name, tc.name)
				}
			}
		})
	}
}

// A policy file reached through a symlink to a regular file is still read:
// users keep theirs in a dotfiles repository.
func TestLoadFollowsASymlinkToAFile(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(real, DefaultFile(), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FileName)
	if err := os.Symlink(real, path); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err != nil {
		t.Fatalf("Load through a symlink: %v", err)
	}
}

// A policy file that is a symlink leading nowhere (its target missing: a
// dotfiles repository not checked out, or a loop) is the user's policy file
// gone, not a home without one: it is refused as invalid, naming the link and
// its target, and never taken for a missing file, which callers may replace
// with the embedded default (the store's choice, for instance) or answer
// with `warden init`.
func TestLoadRefusesASymlinkLeadingNowhere(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target func(dir string) string
	}{
		{"missing target", func(dir string) string { return filepath.Join(dir, "dotfiles", "warden.yaml") }},
		{"loop", func(dir string) string { return filepath.Join(dir, FileName) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			target := tc.target(dir)
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
			for name, load := range map[string]func() error{
				"Load": func() error { _, err := Load(path); return err },
				"LoadCached": func() error {
					_, _, err := LoadCached(path, filepath.Join(t.TempDir(), "policy.json"))
					return err
				},
			} {
				err := load()
				we := wantCode(t, err, warden.EInvalid, "symlink")
				if !strings.Contains(we.Message, target) || !strings.Contains(we.Hint, target) {
					t.Errorf("%s: %q (hint %q); want the link's target %s named, and what to do", name, we.Message, we.Hint, target)
				}
				if errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s: %v reads as fs.ErrNotExist, a home without a policy file", name, err)
				}
			}
		})
	}
}
