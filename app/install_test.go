package app

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
)

// installedBinaries makes dir/bin/warden (and warden-exec when client) and
// returns the warden's path.
func installedBinaries(t *testing.T, dir string, client bool) string {
	t.Helper()
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	names := []string{"warden"}
	if client {
		names = append(names, ExecClient)
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(bin, n), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(bin, "warden")
}

// pathOf is a $PATH lookup over dirs.
func pathOf(dirs ...string) func(string) (string, error) {
	return func(name string) (string, error) {
		for _, d := range dirs {
			p := filepath.Join(d, name)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p, nil
			}
		}
		return "", exec.ErrNotFound
	}
}

func TestHookBinariesFor(t *testing.T) {
	root := t.TempDir()
	stable := installedBinaries(t, filepath.Join(root, "usr"), true)
	alone := installedBinaries(t, filepath.Join(root, "opt"), false)
	other := installedBinaries(t, filepath.Join(root, "other"), true)
	tmp := installedBinaries(t, filepath.Join(root, "tmp"), true)
	cache := installedBinaries(t, filepath.Join(root, "cache", "go-build", "ab"), false)
	src := filepath.Join(root, "src")
	built := installedBinaries(t, src, true)
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	execOnly := filepath.Join(root, "execonly")
	if err := os.MkdirAll(execOnly, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(execOnly, ExecClient), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TMPDIR": filepath.Join(root, "tmp"), "GOCACHE": filepath.Join(root, "cache", "go-build")}
	opts := func(anyPath bool, path ...string) BinaryOptions {
		return BinaryOptions{AnyPath: anyPath, LookPath: pathOf(path...), Getenv: func(k string) string { return env[k] }, TempDirs: []string{}}
	}
	dir := filepath.Dir
	tests := []struct {
		name    string
		self    string
		scope   HookScope
		opt     BinaryOptions
		want    HookBinaries
		wantErr string
	}{
		{name: "project on PATH: bare names", self: stable, scope: HookProject, opt: opts(false, dir(stable)),
			want: HookBinaries{Warden: "warden", Client: ExecClient}},
		{name: "project on PATH without warden-exec beside", self: alone, scope: HookProject, opt: opts(false, dir(alone), dir(other)),
			want: HookBinaries{Warden: "warden"}},
		{name: "project whose PATH finds another warden-exec first", self: stable, scope: HookProject, opt: opts(false, execOnly, dir(stable)),
			want: HookBinaries{Warden: "warden"}},
		{name: "project not on PATH", self: stable, scope: HookProject, opt: opts(false),
			wantErr: "warden is not on your $PATH"},
		{name: "project with another warden on PATH", self: stable, scope: HookProject, opt: opts(false, dir(other), dir(stable)),
			wantErr: "the warden on your $PATH is " + other},
		{name: "user: absolute path", self: stable, scope: HookUser, opt: opts(false),
			want: HookBinaries{Warden: stable, Client: filepath.Join(dir(stable), ExecClient)}},
		{name: "temporary directory", self: tmp, scope: HookUser, opt: opts(false, dir(tmp)),
			wantErr: "in a temporary directory"},
		{name: "build cache", self: cache, scope: HookProject, opt: opts(false, dir(cache)),
			wantErr: "in Go's build cache"},
		{name: "source tree's bin", self: built, scope: HookUser, opt: opts(false),
			wantErr: "the build output of the Go source tree " + src},
		{name: "any path: temporary, project, absolute", self: tmp, scope: HookProject, opt: opts(true),
			want: HookBinaries{Warden: tmp, Client: filepath.Join(dir(tmp), ExecClient)}},
		{name: "any path on PATH: bare names", self: tmp, scope: HookProject, opt: opts(true, dir(tmp)),
			want: HookBinaries{Warden: "warden", Client: ExecClient}},
		{name: "any path, another warden on PATH: absolute", self: alone, scope: HookProject, opt: opts(true, dir(other)),
			want: HookBinaries{Warden: alone}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := HookBinariesFor(tt.self, tt.scope, tt.opt)
			if tt.wantErr != "" {
				var we *warden.Error
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &we) || we.Hint == "" {
					t.Fatalf("HookBinariesFor(%s, %v) = %+v, %v; want an error with a hint saying %q", tt.self, tt.scope, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("HookBinariesFor(%s, %v) = %+v, %v; want %+v", tt.self, tt.scope, got, err, tt.want)
			}
		})
	}
}

func TestCheckHookHome(t *testing.T) {
	dir := t.TempDir()
	err := CheckHookHome(Home(dir))
	var we *warden.Error
	if !errors.As(err, &we) || !strings.Contains(we.Message, "there is no warden home at "+dir) || !strings.Contains(we.Hint, "init") {
		t.Fatalf("CheckHookHome(empty dir) = %v; want no-home with an init hint", err)
	}
	if err := os.WriteFile(filepath.Join(dir, PolicyFile), []byte("version: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CheckHookHome(Home(dir)); err != nil {
		t.Fatalf("CheckHookHome(home) = %v", err)
	}
}
