package nestedgit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The ways a command leaves a link in a git directory that git on the
// host reads and prints: each script runs in the project with $S the
// secret's path; each is shown live first (the user's git status prints
// the secret), then gone after Sweep.
var linkAttacks = []struct{ name, script string }{
	{"bisect-start", `printf 'x\n' > .git/BISECT_LOG && ln -s "$S" .git/BISECT_START`},
	{"rebase-head-name", `mkdir -p .git/rebase-merge && touch .git/rebase-merge/interactive && git rev-parse HEAD > .git/rebase-merge/onto && ln -s "$S" .git/rebase-merge/head-name && ln -s "$S" .git/rebase-merge/done`},
	{"shallow", `ln -s "$S" .git/shallow`},
	{"alternates", `mkdir -p .git/objects/info && ln -s "$S" .git/objects/info/alternates`},
	{"linked-directory", `mkdir -p "$HOME/.evil" && ln -s "$S" "$HOME/.evil/head-name" && touch "$HOME/.evil/interactive" && git rev-parse HEAD > "$HOME/.evil/onto" && ln -s "$HOME/.evil" .git/rebase-merge`},
	{"in-a-gitlinked-repository", `git init -q sub && git -C sub commit -q --allow-empty -m x && git add sub 2>/dev/null && ln -s "$S" sub/.git/shallow`},
	// Past any bound on the entries walked: 60,000 of them first.
	{"behind-many-entries", `mkdir .git/aaa && (cd .git/aaa && seq 1 60000 | xargs touch) && printf 'x\n' > .git/BISECT_LOG && ln -s "$S" .git/BISECT_START`},
	// Alternates name object directories outside every git directory, whose
	// own alternates git reads too.
	{"alternates-chain", `mkdir -p vendor/objs/info && ln -s "$S" vendor/objs/info/alternates && mkdir -p .git/objects/info && echo "$PWD/vendor/objs" > .git/objects/info/alternates`},
	{"alternates-chain-info-link", `mkdir -p vendor/o2 "$HOME/.evil2" && ln -s "$S" "$HOME/.evil2/alternates" && ln -s "$HOME/.evil2" vendor/o2/info && mkdir -p .git/objects/info && echo ../../vendor/o2 > .git/objects/info/alternates`},
}

// TestSweepRemovesLinksGitWouldPrint: a link a command made anywhere in a
// git directory git on the host enters (the project's own, a gitlinked
// repository's) is removed, with a RESTORE.txt that makes it again; the
// file it led to is untouched, and links there before stay.
func TestSweepRemovesLinksGitWouldPrint(t *testing.T) {
	needGit(t)
	for _, a := range linkAttacks {
		t.Run(a.name, func(t *testing.T) {
			home, project := newProject(t)
			secret := filepath.Join(home, ".netrc")
			if err := os.WriteFile(secret, []byte("machine example.com password SECRET-MARK\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			// The user's own link, there before the command.
			sh(t, home, project, `rm -f .git/description && ln -s ../../elsewhere .git/description`)
			q := filepath.Join(home, "q")
			g := New(project, nil, q)
			sh(t, home, project, "S="+secret+"; "+a.script)
			if out, _ := hostGit(home, project, "status"); !strings.Contains(out, "SECRET-MARK") {
				sub, _ := hostGit(home, filepath.Join(project, "sub"), "status")
				if !strings.Contains(sub, "SECRET-MARK") {
					t.Fatalf("the case is not live: git status did not print the secret:\n%s\n%s", out, sub)
				}
			}
			fs := g.Sweep(time.Now())
			var links []string
			for _, f := range fs {
				if f.Err != nil {
					t.Errorf("Sweep: %v", f.Err)
				}
				links = append(links, f.Links...)
			}
			if len(links) == 0 {
				t.Fatalf("Sweep removed no link: %v", fs)
			}
			for _, dir := range []string{project, filepath.Join(project, "sub")} {
				if _, err := os.Stat(dir); err != nil {
					continue
				}
				out, _ := hostGit(home, dir, "status")
				if strings.Contains(out, "SECRET-MARK") {
					t.Errorf("after Sweep, git status in %s still prints the secret:\n%s", dir, out)
				}
			}
			if data, err := os.ReadFile(secret); err != nil || !strings.Contains(string(data), "SECRET-MARK") {
				t.Errorf("the secret file itself changed: %q, %v", data, err)
			}
			if target, err := os.Readlink(filepath.Join(project, ".git/description")); err != nil || target != "../../elsewhere" {
				t.Errorf("the user's own link is gone: %q, %v", target, err)
			}
			restore, err := os.ReadFile(filepath.Join(fs[0].Moved, "RESTORE.txt"))
			if err != nil || !strings.Contains(string(restore), "ln -s '"+secret+"'") && !strings.Contains(string(restore), "ln -s '"+home) {
				t.Errorf("RESTORE.txt does not make the links again: %q, %v", restore, err)
			}
			if again := g.Sweep(time.Now()); len(again) != 0 {
				t.Errorf("a second Sweep found %v", again)
			}
		})
	}
}

// TestGitLinksPassesOverObjects: links under objects/ are not looked for
// (git reads objects and packs only as such) but for objects/info.
func TestGitLinksPassesOverObjects(t *testing.T) {
	needGit(t)
	home, project := newProject(t)
	sh(t, home, project, `mkdir -p .git/objects/ab .git/objects/info && ln -s /x .git/objects/ab/cd && ln -s /y .git/objects/info/alternates && ln -s /z .git/refs/heads/l`)
	links := linksOf(filepath.Join(project, ".git"))
	want := map[string]string{"objects/info/alternates": "/y", "refs/heads/l": "/z"}
	if len(links) != len(want) {
		t.Errorf("gitLinks = %v, want %v", links, want)
	}
	for k, v := range want {
		if links[k] != v {
			t.Errorf("gitLinks[%s] = %q, want %q", k, links[k], v)
		}
	}
}
