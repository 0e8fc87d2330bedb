package config

import (
	"path/filepath"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/agentwarden/warden/fsguard"
)

// filesystemFile is the filesystem section as written in warden.yaml.
type filesystemFile struct {
	Workspace    string            `yaml:"workspace" want:"a directory path, e.g. ~/agent-files (\"\" for the default)"`
	AllowedPaths []allowedPathFile `yaml:"allowed_paths" want:"a list of {path: GLOB, actions: [read, write, list, delete], level: auto|ask}" elem:"an allowed path ({path: GLOB, actions: [...], level: auto|ask})"`
	DeniedPaths  []string          `yaml:"denied_paths" want:"a list of path globs, e.g. [\"~/.ssh/**\"]" elem:"a path glob"`
}

// allowedPathFile is one entry of filesystem.allowed_paths.
type allowedPathFile struct {
	Path    string   `yaml:"path" want:"a path glob, e.g. ~/projects/**"`
	Actions []string `yaml:"actions" want:"a list of actions: read, write, list, delete" elem:"an action: read, write, list or delete"`
	Level   string   `yaml:"level" want:"auto or ask"`
}

// FilesystemLevels are the levels an allowed path may have.
var FilesystemLevels = []string{"auto", "ask"}

var filesystemSection = &sectionDef[filesystemFile]{
	key:        "filesystem",
	defaultsOf: filesystemDefaults,
	check:      checkFilesystem,
	toRuntime:  filesystemToRuntime,
	failClosed: filesystemFailClosed,
}

func filesystemDefaults() *filesystemFile {
	return &filesystemFile{
		Workspace: "",
		AllowedPaths: []allowedPathFile{
			{Path: "**", Actions: []string{"read", "list", "write"}, Level: "auto"},
			{Path: "**", Actions: []string{"delete"}, Level: "ask"},
		},
		DeniedPaths: slices.Clone(fsguard.DefaultDenied),
	}
}

func checkFilesystem(f *filesystemFile, c *checker) {
	if w := f.Workspace; w != "" {
		switch {
		case strings.ContainsRune(w, 0) || strings.ContainsFunc(w, func(r rune) bool { return r < 0x20 }):
			c.reportf([]any{"workspace"}, "workspace %s has a control character", quote(w))
		case !filepath.IsAbs(w) && w != "~" && !strings.HasPrefix(w, "~/"):
			c.reportf([]any{"workspace"}, "workspace %s must be an absolute path or start with ~/", quote(w))
		}
	}
	for i := range f.AllowedPaths {
		a := &f.AllowedPaths[i]
		if err := fsguard.CheckPattern(a.Path, true); err != nil {
			c.reportf([]any{"allowed_paths", i, "path"}, "%s", err.Error())
		}
		if len(a.Actions) == 0 {
			c.reportf([]any{"allowed_paths", i, "actions"}, "actions is missing or empty; want some of read, write, list, delete")
		}
		for j, act := range a.Actions {
			act = strings.ToLower(strings.TrimSpace(act))
			a.Actions[j] = act
			if !fsguard.Action(act).Valid() {
				c.reportf([]any{"allowed_paths", i, "actions", j}, "%s is not an action; want read, write, list or delete", quote(act))
			}
		}
		a.Level = strings.ToLower(strings.TrimSpace(a.Level))
		if a.Level == "" {
			a.Level = "ask" // an unset level never allows silently
		}
		if !slices.Contains(FilesystemLevels, a.Level) {
			c.reportf([]any{"allowed_paths", i, "level"}, "%s is not a level; want auto (allow) or ask", quote(a.Level))
		}
	}
	for i, d := range f.DeniedPaths {
		if err := fsguard.CheckPattern(d, false); err != nil {
			c.reportf([]any{"denied_paths", i}, "%s", err.Error())
		}
	}
}

// filesystemFailClosed makes an invalid section stricter than the file, never
// looser: no allowed path opens anything (only the workspace stays open), and
// every denied path the file lists that is itself valid is kept on top of the
// defaults.
func filesystemFailClosed(raw []*yaml.Node, f *filesystemFile) string {
	f.AllowedPaths = nil
	for _, n := range raw {
		for k := 0; n != nil && n.Kind == yaml.MappingNode && k+1 < len(n.Content); k += 2 {
			if n.Content[k].Value != "denied_paths" || n.Content[k+1].Kind != yaml.SequenceNode {
				continue
			}
			for _, item := range n.Content[k+1].Content {
				if item.Kind == yaml.ScalarNode && fsguard.CheckPattern(item.Value, false) == nil && !slices.Contains(f.DeniedPaths, item.Value) {
					f.DeniedPaths = append(f.DeniedPaths, item.Value)
				}
			}
		}
	}
	return "until it is fixed no allowed path applies (only the workspace is open), and its valid denied paths are kept"
}

func filesystemToRuntime(f *filesystemFile, p *Policy) {
	fs := Filesystem{Workspace: f.Workspace, Denied: slices.Clone(f.DeniedPaths)}
	if fs.Denied == nil {
		fs.Denied = []string{}
	}
	for _, a := range f.AllowedPaths {
		fs.Allowed = append(fs.Allowed, AllowedPath{Pattern: a.Path, Actions: slices.Clone(a.Actions), Auto: a.Level == "auto"})
	}
	p.Filesystem = fs
}
