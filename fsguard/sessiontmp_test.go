package fsguard

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/agentwarden/warden"
)

// TestSessionTmpIsTheSessionsOwn: the host file tools of a session read and
// write its /tmp (a directory in warden's home) as its commands do, and
// nothing else there: another session's /tmp, the rest of warden's home, a
// symlink in the session's /tmp that leads out of it (judged where it
// leads) and a file that is not a regular file stay refused.
func TestSessionTmpIsTheSessionsOwn(t *testing.T) {
	w := newWorld(t)
	tmpOf := func(s string) string { return filepath.Join(w.wardenHome, "sessions", s, "tmp") }
	mine, theirs := tmpOf("s1"), tmpOf("s2")
	mkdir(t, mine+"/build")
	mkdir(t, theirs)
	write(t, mine+"/test.log", "ok")
	write(t, theirs+"/other.log", "theirs")
	if err := os.Symlink(w.home+"/.ssh/id_ed25519", mine+"/key"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(w.wardenHome+"/warden.yaml", mine+"/policy"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(mine+"/fifo", 0o600); err != nil {
		t.Fatal(err)
	}
	st := Stage{Guard: w.g, SessionTmp: tmpOf}
	cases := []struct {
		name    string
		action  Action
		path    string
		session string
		want    warden.Verdict
		rule    string
	}{
		{"read a log", Read, mine + "/test.log", "s1", warden.Allow, "fs.session_tmp"},
		{"write a new script", Write, mine + "/build/run.py", "s1", warden.Allow, "fs.session_tmp"},
		{"list it", List, mine, "s1", warden.Allow, "fs.session_tmp"},
		{"another session's", Read, theirs + "/other.log", "s1", warden.Deny, "fs.self_protect"},
		{"no session", Read, mine + "/test.log", "", warden.Deny, "fs.self_protect"},
		{"a symlink to a key", Read, mine + "/key", "s1", warden.Deny, "fs.self_protect"},
		{"a symlink to warden's policy", Write, mine + "/policy", "s1", warden.Deny, "fs.self_protect"},
		{"climbing out", Read, mine + "/../../../warden.yaml", "s1", warden.Deny, "fs.self_protect"},
		{"a named pipe", Read, mine + "/fifo", "s1", warden.Deny, "fs.special_file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := st.Check(context.Background(), &warden.Request{Capability: warden.CapFilesystem, Action: string(c.action), Resource: c.path, Session: c.session, Cwd: w.project})
			if err != nil || d.Verdict != c.want || d.Rule != c.rule {
				t.Fatalf("%s %s (session %q) = %s %s (%s), %v; want %s %s", c.action, c.path, c.session, d.Verdict, d.Rule, d.Reason, err, c.want, c.rule)
			}
		})
	}
}

// TestToolCachesAreRead: the tool caches the agent's commands read and
// write are read and listed by its file tools where no rule says
// otherwise, never written through them, and a credential in one (a denied
// path) stays denied.
func TestToolCachesAreRead(t *testing.T) {
	w := newWorld(t)
	mod := w.home + "/go/pkg/mod/golang.org/x/sync@v0.10.0"
	mkdir(t, mod+"/errgroup")
	write(t, mod+"/errgroup/errgroup.go", "package errgroup")
	mkdir(t, w.home+"/.cache/huggingface")
	write(t, w.home+"/.cache/huggingface/token", "hf_SECRET")
	g, err := New(Policy{
		Workspace:  w.workspace,
		Denied:     []string{"~/.ssh/**", "~/.cache/huggingface/token"},
		WardenHome: w.wardenHome,
		UserHome:   w.home,
		Caches:     []string{"~/go/pkg", "~/.cache"},
	})
	if err != nil {
		t.Fatal(err)
	}
	expectDecisions(t, g, w.project, []decision{
		{Read, mod + "/errgroup/errgroup.go", warden.Allow, "fs.tool_cache"},
		{List, mod, warden.Allow, "fs.tool_cache"},
		{List, "~/go/pkg/mod/**/*.go", warden.Allow, "fs.tool_cache"},
		{Write, mod + "/errgroup/errgroup.go", warden.Deny, "fs.no_rule"},
		{Delete, mod, warden.Deny, "fs.no_rule"},
		{Read, "~/.cache/huggingface/token", warden.Deny, "fs.denied"},
		{List, "~/.cache", warden.Deny, "fs.denied_within"},
		{List, "~/.cache/huggingface", warden.Deny, "fs.denied_within"},
		{Read, w.home + "/go/src/x.go", warden.Deny, "fs.no_rule"},
	})
}

// decision is a request and the answer a test wants for it.
type decision struct {
	action Action
	path   string
	want   warden.Verdict
	rule   string
}

// expectDecisions checks g's answer to each of cases, from cwd.
func expectDecisions(t *testing.T, g *Guard, cwd string, cases []decision) {
	t.Helper()
	for _, c := range cases {
		if d := g.Decide(c.action, c.path, cwd); d.Verdict != c.want || d.Rule != c.rule {
			t.Errorf("Decide(%s, %s) = %s %s (%s); want %s %s", c.action, c.path, d.Verdict, d.Rule, d.Reason, c.want, c.rule)
		}
	}
}

// TestHomeIsReadAsTheSandboxReadsIt: where the agent's commands run in a
// sandbox that reads the whole home but for the denied paths, its file
// tools read there too (Claude Code's Read of ~/.gitconfig was refused while
// cat of it ran), never write there, and a denied path, warden's home, a
// symlink out of the home, the home listed whole and a tree holding a
// denied path stay refused. Without ReadHome nothing changes.
func TestHomeIsReadAsTheSandboxReadsIt(t *testing.T) {
	w := newWorld(t)
	write(t, w.home+"/.gitconfig", "[user]\n\tname = u\n")
	mkdir(t, w.home+"/src/other")
	write(t, w.home+"/src/other/main.go", "package main")
	write(t, w.home+"/.config/gh/hosts.yml", "oauth_token: SECRET")
	mkdir(t, w.home+"/.config/git")
	write(t, w.home+"/.config/git/ignore", "*.swp")
	if err := os.Symlink(w.outside+"/secret.txt", w.home+"/src/out"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(w.home+"/.ssh", w.home+"/src/keys"); err != nil {
		t.Fatal(err)
	}
	policy := func(readHome bool) Policy {
		return Policy{
			Workspace:  w.workspace,
			Denied:     []string{"~/.ssh/**", "~/.config/gh/**"},
			WardenHome: w.wardenHome,
			UserHome:   w.home,
			ReadHome:   readHome,
		}
	}
	g, err := New(policy(true))
	if err != nil {
		t.Fatal(err)
	}
	off, err := New(policy(false))
	if err != nil {
		t.Fatal(err)
	}
	cases := []decision{
		{Read, "~/.gitconfig", warden.Allow, "fs.home_read"},
		{Read, w.home + "/src/other/main.go", warden.Allow, "fs.home_read"},
		{List, "~/src/other", warden.Allow, "fs.home_read"},
		{List, "~/src/**/*.go", warden.Allow, "fs.home_read"},
		{Read, "~/.config/git/ignore", warden.Allow, "fs.home_read"},
		{Write, "~/.gitconfig", warden.Deny, "fs.no_rule"},
		{Delete, "~/src/other/main.go", warden.Deny, "fs.no_rule"},
		{Read, "~/.ssh/id_ed25519", warden.Deny, "fs.denied"},
		{Read, "~/src/keys/id_ed25519", warden.Deny, "fs.denied"},
		{Read, "~/.config/gh/hosts.yml", warden.Deny, "fs.denied"},
		{List, "~/.config", warden.Deny, "fs.denied_within"},
		{List, "~", warden.Deny, "fs.no_rule"},
		{List, "~/**/*.yml", warden.Deny, "fs.no_rule"},
		{Read, "~/.warden/warden.yaml", warden.Deny, "fs.self_protect"},
		{Read, "~/src/out", warden.Deny, "fs.no_rule"},
		{Read, w.outside + "/secret.txt", warden.Deny, "fs.no_rule"},
	}
	expectDecisions(t, g, w.project, cases)
	for _, c := range cases {
		if c.rule == "fs.home_read" {
			if d := off.Decide(c.action, c.path, w.project); d.Rule != "fs.no_rule" {
				t.Errorf("without ReadHome, Decide(%s, %s) = %s %s; want fs.no_rule", c.action, c.path, d.Verdict, d.Rule)
			}
		}
	}
}

// TestBoundedListingsOfTheHome: a listing of names to a fixed depth (LS
// of the home, Glob ~/*.md) shows a denied directory's name, as ls does,
// and is refused only where it would list what is inside a denied path or
// warden's home.
func TestBoundedListingsOfTheHome(t *testing.T) {
	w := newWorld(t)
	mkdir(t, w.home+"/src/other")
	write(t, w.home+"/src/other/main.go", "package main")
	mkdir(t, w.home+"/.config/git")
	g, err := New(Policy{
		Workspace:  w.workspace,
		Denied:     []string{"~/.ssh", "~/.ssh/**", "~/.config/gh/**"},
		WardenHome: w.wardenHome,
		UserHome:   w.home,
		ReadHome:   true,
	})
	if err != nil {
		t.Fatal(err)
	}
	expectDecisions(t, g, w.project, []decision{
		{List, "~/*", warden.Allow, "fs.home_read"},
		{List, "~/*.md", warden.Allow, "fs.home_read"},
		{List, "~/.config/*", warden.Allow, "fs.home_read"},
		{List, "~/src/*/*.go", warden.Allow, "fs.home_read"},
		{List, "~/.config/*/*", warden.Deny, "fs.denied_within"},
		{List, "~/*/*", warden.Deny, "fs.self_within"},
		{List, "~/.s*/*", warden.Deny, "fs.denied_within"},
		{List, "~/.warden/*", warden.Deny, "fs.self_protect"},
		{List, "~/.ssh/*", warden.Deny, "fs.denied"},
		{List, "~/**/*.go", warden.Deny, "fs.no_rule"},
		{List, "~", warden.Deny, "fs.no_rule"},
		{List, "~/.config", warden.Deny, "fs.denied_within"},
	})
}

// TestListingNameThatNamesAnEntry: a listing's name with glob characters
// that names an existing entry as written (a Grep's path is never a
// pattern; a command made a symlink called k[e]ys) is judged as that
// entry too, the strictest answer kept: red-team-15 read ~/.ssh, ~/.aws
// and warden's home through such names in the project, a cache and the
// home.
func TestListingNameThatNamesAnEntry(t *testing.T) {
	w := newWorld(t)
	mkdir(t, w.home+"/.aws")
	write(t, w.home+"/.aws/credentials", "SECRET")
	mkdir(t, w.project+"/cfg")
	mkdir(t, w.home+"/.cache")
	for link, to := range map[string]string{
		w.project + "/k[e]ys":      w.home + "/.ssh",
		w.project + "/cfg/*":       w.home + "/.aws/credentials",
		w.project + "/w?":          w.wardenHome,
		w.home + "/.cache/s[o]l":   w.home + "/.ssh",
		w.home + "/src/{g}h":       w.home + "/.aws",
		w.project + "/plain[1].go": w.project + "/src/main.go",
	} {
		mkdir(t, filepath.Dir(link))
		if err := os.Symlink(to, link); err != nil {
			t.Fatal(err)
		}
	}
	g, err := New(Policy{
		Workspace:  w.workspace,
		Allowed:    []Rule{{Pattern: "**", Actions: []Action{Read, List}, Level: Auto}},
		Denied:     []string{"~/.ssh/**", "~/.ssh", "~/.aws/**", "~/.aws"},
		WardenHome: w.wardenHome,
		UserHome:   w.home,
		Caches:     []string{"~/.cache"},
		ReadHome:   true,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		want warden.Verdict
	}{
		{w.project + "/k[e]ys", warden.Deny},
		{"k[e]ys", warden.Deny},
		{w.project + "/cfg/*", warden.Deny},
		{w.project + "/w?", warden.Deny},
		{"~/.cache/s[o]l", warden.Deny},
		{"~/src/{g}h", warden.Deny},
		{w.project + "/plain[1].go", warden.Allow},
		{w.project + "/src/*.go", warden.Allow},
		{w.project + "/*", warden.Allow},
	} {
		if d := g.Decide(List, c.name, w.project); d.Verdict != c.want {
			t.Errorf("Decide(list, %s) = %s %s (%s); want %s", c.name, d.Verdict, d.Rule, d.Reason, c.want)
		}
	}
}

// TestProtectedPathsAskToBeWritten: where a rule lets the file tools write
// the project without asking, a write or delete of a protected path
// (sandbox.protected_paths: agent-host settings, .mcp.json; at the root or
// in any directory below, letter case ignored) or of anything in a .git
// directory still asks: a host or git runs what they say.
func TestProtectedPathsAskToBeWritten(t *testing.T) {
	w := newWorld(t)
	g, err := New(Policy{
		Workspace:  w.workspace,
		Allowed:    []Rule{{Pattern: "**", Actions: []Action{Read, List, Write, Delete}, Level: Auto}},
		WardenHome: w.wardenHome,
		UserHome:   w.home,
		Protected:  []string{".git/config", ".claude/", ".mcp.json", ".warden.yaml"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		action Action
		path   string
		want   warden.Verdict
	}{
		{Write, "src/main.go", warden.Allow},
		{Write, "docs/claude.md", warden.Allow},
		{Write, "notes/.mcp.json.bak", warden.Allow},
		{Write, ".claude/settings.json", warden.Ask},
		{Write, "packages/web/.claude/settings.local.json", warden.Ask},
		{Write, ".CLAUDE/settings.json", warden.Ask},
		{Write, ".mcp.json", warden.Ask},
		{Write, "sub/.mcp.json", warden.Ask},
		{Write, ".git/config", warden.Ask},
		{Write, ".git/HEAD", warden.Ask},
		{Write, "vendor/lib/.git/hooks/pre-commit", warden.Ask},
		{Delete, ".warden.yaml", warden.Ask},
		{Read, ".claude/settings.json", warden.Allow},
	} {
		if d := g.Decide(c.action, c.path, w.project); d.Verdict != c.want {
			t.Errorf("Decide(%s, %s) = %s %s (%s); want %s", c.action, c.path, d.Verdict, d.Rule, d.Reason, c.want)
		}
	}
	// A filesystem workspace the user pointed at a project keeps its
	// protected paths too (fs.workspace allowed every write there).
	ws, err := New(Policy{Workspace: w.project, WardenHome: w.wardenHome, UserHome: w.home, Protected: []string{".claude/"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want warden.Verdict
	}{{"src/main.go", warden.Allow}, {".git/hooks/pre-commit", warden.Ask}, {".claude/settings.json", warden.Ask}} {
		if d := ws.Decide(Write, filepath.Join(w.project, c.path), "/"); d.Verdict != c.want {
			t.Errorf("with the project as the workspace, Decide(write, %s) = %s %s; want %s", c.path, d.Verdict, d.Rule, c.want)
		}
	}
}

// TestFileToolsInASubdirectoryWriteTheWorkTree: the project whose files a
// rule's relative pattern (**) names is the git work tree the working
// directory lies in, as the workspace sandbox makes it writable: from
// services/api, a write of the root's go.mod or of another package is the
// project's (agent-shapes-13: it was fs.no_rule, a deny), its protected
// paths stay protected, and outside a work tree the working directory is
// the project still.
func TestFileToolsInASubdirectoryWriteTheWorkTree(t *testing.T) {
	w := newWorld(t)
	g, err := New(Policy{
		Workspace:  w.workspace,
		Allowed:    []Rule{{Pattern: "**", Actions: []Action{Read, List, Write, Delete}, Level: Auto}},
		WardenHome: w.wardenHome,
		UserHome:   w.home,
		Protected:  []string{".claude/"},
	})
	if err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(w.project, "services", "api")
	mkdir(t, sub)
	// No work tree yet: the subdirectory is the project.
	if d := g.Decide(Write, "../../go.mod", sub); d.Verdict == warden.Allow {
		t.Errorf("outside a work tree, write ../../go.mod from a subdirectory = %s %s; want it outside the project", d.Verdict, d.Rule)
	}
	// An empty .git is no repository (git passes over it): still none.
	mkdir(t, filepath.Join(w.project, ".git"))
	if d := g.Decide(Write, "../../go.mod", sub); d.Verdict == warden.Allow {
		t.Errorf("with an empty .git, write ../../go.mod from a subdirectory = %s %s; want it outside the project", d.Verdict, d.Rule)
	}
	mkdir(t, filepath.Join(w.project, ".git", "objects"))
	mkdir(t, filepath.Join(w.project, ".git", "refs"))
	write(t, filepath.Join(w.project, ".git", "HEAD"), "ref: refs/heads/main\n")
	for _, c := range []struct {
		path string
		want warden.Verdict
	}{
		{"../../go.mod", warden.Allow},
		{filepath.Join(w.project, "pkg", "strutil", "x.go"), warden.Allow},
		{"main.go", warden.Allow},
		{"../../.claude/settings.json", warden.Ask},
	} {
		if d := g.Decide(Write, c.path, sub); d.Verdict != c.want {
			t.Errorf("from services/api, Decide(write, %s) = %s %s (%s); want %s", c.path, d.Verdict, d.Rule, d.Reason, c.want)
		}
	}
}
