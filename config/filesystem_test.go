package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentwarden/warden/fsguard"
)

func TestFilesystemSection(t *testing.T) {
	l := mustParse(t, `version: 1
filesystem:
  workspace: ~/agent-files
  allowed_paths:
    - path: ~/projects/**
      actions: [READ, list]
      level: Auto
    - path: /srv/data/*.csv
      actions: [read]
  denied_paths: ["**/.env"]
`)
	if len(l.Problems) != 0 {
		t.Fatalf("problems: %v", l.Problems)
	}
	got := l.Policy.Filesystem
	want := Filesystem{
		Workspace: "~/agent-files",
		Allowed: []AllowedPath{
			{Pattern: "~/projects/**", Actions: []string{"read", "list"}, Auto: true},
			{Pattern: "/srv/data/*.csv", Actions: []string{"read"}, Auto: false}, // no level: ask
		},
		Denied: []string{"**/.env"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Filesystem = %+v\nwant %+v", got, want)
	}
}

func TestFilesystemDefaults(t *testing.T) {
	fs := Default().Filesystem
	if fs.Workspace != "" || !slices.Equal(fs.Denied, fsguard.DefaultDenied) {
		t.Fatalf("defaults %+v", fs)
	}
	if len(fs.Allowed) != 2 || !fs.Allowed[0].Auto || fs.Allowed[1].Auto {
		t.Fatalf("default allowed paths %+v: want the project readable (auto) and writable (ask)", fs.Allowed)
	}
}

func TestFilesystemProblems(t *testing.T) {
	cases := []struct {
		name, section, key, msg string
	}{
		{"bad glob", "  allowed_paths:\n    - path: /srv/[abc\n      actions: [read]\n", "filesystem.allowed_paths[0].path", "not a valid glob"},
		{"dotdot", "  allowed_paths:\n    - path: ../other/**\n      actions: [read]\n", "filesystem.allowed_paths[0].path", ".. element"},
		{"other user", "  allowed_paths:\n    - path: ~bob/**\n      actions: [read]\n", "filesystem.allowed_paths[0].path", "another user's home"},
		{"no actions", "  allowed_paths:\n    - path: /srv/**\n", "filesystem.allowed_paths[0].actions", "actions is missing"},
		{"bad action", "  allowed_paths:\n    - path: /srv/**\n      actions: [exec]\n", "filesystem.allowed_paths[0].actions[0]", "not an action"},
		{"bad level", "  allowed_paths:\n    - path: /srv/**\n      actions: [read]\n      level: always\n", "filesystem.allowed_paths[0].level", "not a level"},
		{"relative denied", "  denied_paths: [secrets/**]\n", "filesystem.denied_paths[0]", "must be absolute"},
		{"relative workspace", "  workspace: files\n", "filesystem.workspace", "absolute path"},
		{"unknown key", "  allowed: []\n", "filesystem.allowed", "unknown key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := mustParse(t, "version: 1\nfilesystem:\n"+c.section)
			p := problemAt(t, l, c.key)
			if !strings.Contains(p.Error(), c.msg) {
				t.Fatalf("problem %q, want one containing %q", p.Error(), c.msg)
			}
			if p.Line < 3 {
				t.Fatalf("problem %q has line %d; want the line of the value", p.Error(), p.Line)
			}
		})
	}
}

// An invalid filesystem section must never open more than the file did: the
// fallback drops every allowed path and keeps the file's valid denied paths.
func TestFilesystemFallbackIsStricter(t *testing.T) {
	l := mustParse(t, `version: 1
filesystem:
  allowed_paths:
    - path: /srv/**
      actions: [read]
      level: sometimes
  denied_paths: ["/srv/secret/**", "relative/bad"]
`)
	if len(l.Problems) == 0 {
		t.Fatal("no problem reported")
	}
	fs := l.Policy.Filesystem
	if len(fs.Allowed) != 0 {
		t.Fatalf("fallback keeps allowed paths %+v", fs.Allowed)
	}
	if !slices.Contains(fs.Denied, "/srv/secret/**") || !slices.Contains(fs.Denied, "~/.ssh/**") || slices.Contains(fs.Denied, "relative/bad") {
		t.Fatalf("fallback denied paths %q: want the defaults plus the file's valid ones", fs.Denied)
	}
	if !strings.Contains(l.Problems[len(l.Problems)-1].Error(), "no allowed path applies") {
		t.Fatalf("problem does not explain the fallback: %v", l.Problems)
	}
}

func TestFilesystemSet(t *testing.T) {
	path := writeFile(t, DefaultFile())
	if err := Set(path, "filesystem.workspace", "~/agent-files"); err != nil {
		t.Fatal(err)
	}
	if err := Set(path, "filesystem.denied_paths", `["~/.ssh/**", "**/.env"]`); err != nil {
		t.Fatal(err)
	}
	err := Set(path, "filesystem.denied_paths", `["nope"]`)
	wantCode(t, err, "invalid", "must be absolute")
	l := mustParse(t, string(readBytes(t, path)))
	if got := l.Policy.Filesystem; got.Workspace != "~/agent-files" || !slices.Equal(got.Denied, []string{"~/.ssh/**", "**/.env"}) {
		t.Fatalf("after Set: %+v", got)
	}
}
