package nestedgit

import (
	"io/fs"
	"path/filepath"
	"slices"
)

// Bounds of Nested: the directories it reads and the repositories it
// lists. A project beyond them keeps what was found within them.
const (
	maxNestedDirs  = 2048
	maxNestedRepos = 64
)

// skippedDirs are directories tools fill with thousands of entries and no
// repository a user works in: Nested does not read them.
var skippedDirs = []string{"node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache", ".pytest_cache", ".cache"}

// Nested lists the git work trees below project, not project itself:
// directories holding a .git directory, or a .git file when files is set.
// Git on the host runs in one when an editor or a shell prompt enters it,
// whether or not the project's index names it. At most maxNestedRepos, from
// at most maxNestedDirs directories read; it does not follow symlinks, does
// not look into git directories, and looks inside a repository it found,
// which may hold others.
func Nested(project string, files bool) []string {
	project = filepath.Clean(project)
	var repos []string
	read := 0
	_ = filepath.WalkDir(project, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Name() == ".git" {
			// Seen among its directory's entries, which are read anyway:
			// no lstat of a .git in every directory.
			if dir := filepath.Dir(p); p != project && dir != project && (d.IsDir() || files && d.Type().IsRegular()) {
				if repos = append(repos, dir); len(repos) >= maxNestedRepos {
					return filepath.SkipAll
				}
			}
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if p != project && slices.Contains(skippedDirs, d.Name()) {
			return filepath.SkipDir
		}
		if read++; read > maxNestedDirs {
			return filepath.SkipAll
		}
		return nil
	})
	return repos
}
