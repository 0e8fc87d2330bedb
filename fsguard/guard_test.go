package fsguard

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentwarden/warden"
)

// world is a small filesystem for the tests: a user home with secrets, a
// warden home with its workspace, a project, and an outside directory.
type world struct {
	root, home, wardenHome, workspace, project, outside string
	g                                                   *Guard
}

func newWorld(t testing.TB, allowed ...Rule) *world {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &world{
		root:       root,
		home:       filepath.Join(root, "home", "u"),
		wardenHome: filepath.Join(root, "home", "u", ".warden"),
		project:    filepath.Join(root, "home", "u", "proj"),
		outside:    filepath.Join(root, "outside"),
	}
	w.workspace = filepath.Join(w.wardenHome, SandboxDir, "files")
	for _, d := range []string{w.workspace, w.project + "/src", w.outside, w.home + "/.ssh", w.home + "/docs", w.home + "/.config/gh", w.home + "/.local/bin"} {
		mkdir(t, d)
	}
	write(t, w.home+"/.ssh/id_ed25519", "KEY")
	write(t, w.wardenHome+"/warden.yaml", "version: 1")
	write(t, w.outside+"/secret.txt", "OUTSIDE")
	write(t, w.project+"/src/main.go", "package main")
	write(t, w.workspace+"/notes.txt", "notes")
	if allowed == nil {
		allowed = []Rule{
			{Pattern: "**", Actions: []Action{Read, List}, Level: Auto},
			{Pattern: "**", Actions: []Action{Write, Delete}, Level: Ask},
			{Pattern: "~/docs/**", Actions: []Action{Read}, Level: Auto},
		}
	}
	g, err := New(Policy{
		Workspace:  w.workspace,
		Allowed:    allowed,
		Denied:     append(append([]string(nil), DefaultDenied...), root+"/outside/private/**"),
		WardenHome: w.wardenHome,
		UserHome:   w.home,
	})
	if err != nil {
		t.Fatal(err)
	}
	w.g = g
	return w
}

func mkdir(t testing.TB, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t testing.TB, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestDecisionOrder(t *testing.T) {
	w := newWorld(t)
	cases := []struct {
		name   string
		action Action
		path   string
		cwd    string
		want   warden.Verdict
		rule   string
	}{
		{"workspace read", Read, w.workspace + "/notes.txt", w.project, warden.Allow, "fs.workspace"},
		{"workspace write new file", Write, w.workspace + "/new/deep/file.txt", w.project, warden.Allow, "fs.workspace"},
		{"workspace delete", Delete, w.workspace + "/notes.txt", "", warden.Allow, "fs.workspace"},
		{"workspace root listed", List, w.workspace, "", warden.Allow, "fs.workspace"},
		{"project read auto", Read, "src/main.go", w.project, warden.Allow, "fs.allowed"},
		{"project root listed", List, ".", w.project, warden.Allow, "fs.allowed"},
		{"project write asks", Write, "src/main.go", w.project, warden.Ask, "fs.allowed_ask"},
		{"project delete asks", Delete, w.project + "/src/main.go", w.project, warden.Ask, "fs.allowed_ask"},
		{"~ rule", Read, "~/docs/a.txt", w.project, warden.Allow, "fs.allowed"},
		{"~ rule is read only", Write, "~/docs/a.txt", w.project, warden.Deny, "fs.no_rule"},
		{"outside the project", Read, w.outside + "/secret.txt", w.project, warden.Deny, "fs.no_rule"},
		{"ssh key denied", Read, "~/.ssh/id_ed25519", w.project, warden.Deny, "fs.denied"},
		{"ssh dir listed", List, w.home + "/.ssh", w.project, warden.Deny, "fs.denied"},
		{"netrc exact", Write, "~/.netrc", w.project, warden.Deny, "fs.denied"},
		{"etc", Read, "/etc/shadow", w.project, warden.Deny, "fs.denied"},
		{"a system file every user may read", Read, "/etc/passwd", w.project, warden.Allow, "fs.public_system"},
		{"a system file every user may read is not written", Write, "/etc/passwd", w.project, warden.Deny, "fs.denied"},
		{"usr listed", List, "/usr", w.project, warden.Deny, "fs.denied"},
		{"warden policy", Read, w.wardenHome + "/warden.yaml", w.project, warden.Deny, "fs.self_protect"},
		{"warden database", Write, w.wardenHome + "/warden.db-wal", w.project, warden.Deny, "fs.self_protect"},
		{"warden keys", Read, w.wardenHome + "/keys/k.json", w.project, warden.Deny, "fs.self_protect"},
		{"warden home listed", List, w.wardenHome, w.project, warden.Deny, "fs.self_protect"},
		{"unknown action", Action("exec"), "src/main.go", w.project, warden.Deny, "fs.unknown_action"},
		{"home as project does not count", Read, w.home + "/notes.txt", w.home, warden.Deny, "fs.no_rule"},
		{"hidden directory of the home as project does not count", Read, w.home + "/.config/gh/hosts.yml", w.home + "/.config", warden.Deny, "fs.no_rule"},
		{"deeper in a hidden directory of the home", Read, "hosts.yml", w.home + "/.config/gh", warden.Deny, "fs.no_rule"},
		{"hidden directory of the home listed as project", List, ".", w.home + "/.config", warden.Deny, "fs.no_rule"},
		{"write into a hidden directory of the home as project", Write, "git", w.home + "/.local/bin", warden.Deny, "fs.no_rule"},
		{"root as project does not count", Read, w.outside + "/secret.txt", "/", warden.Deny, "fs.no_rule"},
		{"ancestor of home as project does not count", Read, w.outside + "/secret.txt", w.root, warden.Deny, "fs.no_rule"},
		{"glob listing in the project", List, "**/*.go", w.project, warden.Allow, "fs.allowed"},
		{"glob listing of a denied dir", List, "~/.ssh/*", w.project, warden.Deny, "fs.denied"},
		{"glob listing climbing out", List, "*/../../*", w.project, warden.Deny, "fs.invalid_path"},
		{"glob listing whose literal part climbs out", List, "src/../../.ssh/*", w.project, warden.Deny, "fs.denied"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := w.g.Decide(c.action, c.path, c.cwd)
			if d.Verdict != c.want || d.Rule != c.rule {
				t.Fatalf("Decide(%s, %q, cwd %q) = %s %s (%s); want %s %s", c.action, c.path, c.cwd, d.Verdict, d.Rule, d.Reason, c.want, c.rule)
			}
			if d.Reason == "" {
				t.Fatal("no reason")
			}
		})
	}
}

func TestNoRuleReasonNamesActionAndPath(t *testing.T) {
	w := newWorld(t)
	d := w.g.Decide(Write, w.outside+"/x", w.project)
	if !strings.Contains(d.Reason, "no rule for write on "+w.outside+"/x") {
		t.Fatalf("reason %q", d.Reason)
	}
}

// TestSpecialFilesAreRefused: a named pipe in the workspace (or a socket)
// is no file an agent's tool may read or write, however the rules would
// allow its path: opening one blocks the tool as long as the other end
// likes. A regular file beside it, and a directory, are judged as before.
func TestSpecialFilesAreRefused(t *testing.T) {
	w := newWorld(t)
	fifo := w.workspace + "/pipe"
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, a := range []Action{Read, Write} {
		if d := w.g.Decide(a, fifo, w.project); d.Verdict != warden.Deny || d.Rule != "fs.special_file" || !strings.Contains(d.Reason, "named pipe") {
			t.Errorf("%s of a named pipe in the workspace = %v (%s: %s), want denied as fs.special_file", a, d.Verdict, d.Rule, d.Reason)
		}
	}
	if d := w.g.Decide(List, w.workspace, w.project); d.Verdict != warden.Allow {
		t.Errorf("listing the workspace = %v (%s)", d.Verdict, d.Reason)
	}
	if d := w.g.Decide(Write, w.workspace+"/notes.txt", w.project); d.Verdict != warden.Allow {
		t.Errorf("writing a new file in the workspace = %v (%s)", d.Verdict, d.Reason)
	}
}

// TestDeniedWithin checks the judgement of a tree read whole: a tree that
// holds a denied path or warden's home is reported, by either name; one that
// holds neither, or lies inside a denied path (Denied's case), is not.
func TestDeniedWithin(t *testing.T) {
	w := newWorld(t)
	symlink(t, w.home, w.root+"/homelink")
	cases := []struct {
		dir, cwd string
		rule     string // "" when not reported
	}{
		{w.home, "", "fs.self_within"},                // holds warden's home (and ~/.ssh)
		{"~", "", "fs.self_within"},                   // the same, as the policy writes it
		{".", w.home, "fs.self_within"},               // relative to the working directory
		{w.root + "/homelink", "", "fs.self_within"},  // through a symlink
		{"/", "", "fs.self_within"},                   // holds /etc
		{w.root + "/outside", "", "fs.denied_within"}, // holds outside/private/**, which need not exist
		{w.project, "", ""},                           // a project beside the secrets
		{w.home + "/docs", "", ""},
		{w.home + "/.ssh", "", "fs.denied_within"}, // the denied directory itself: its files match
		{w.workspace, "", ""},                      // warden's workspace, inside its home, is not its home
		{"relative", "", ""},                       // nothing to resolve against: not judged here
	}
	for _, c := range cases {
		d, ok := w.g.DeniedWithin(c.dir, c.cwd)
		if got := map[bool]string{true: d.Rule}[ok]; got != c.rule {
			t.Errorf("DeniedWithin(%q, %q) = %q (%s); want %q", c.dir, c.cwd, got, d.Reason, c.rule)
		}
	}
	// With warden's home elsewhere, the user's home is reported for ~/.ssh.
	elsewhere := w.root + "/warden"
	mkdir(t, elsewhere+"/"+SandboxDir+"/files")
	g, err := New(Policy{Workspace: elsewhere + "/" + SandboxDir + "/files", WardenHome: elsewhere, UserHome: w.home, Denied: DefaultDenied})
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := g.DeniedWithin(w.home, ""); !ok || d.Rule != "fs.denied_within" || !strings.Contains(d.Reason, "~/.ssh/**") {
		t.Errorf("DeniedWithin(home) = %+v, %v; want fs.denied_within naming ~/.ssh/**", d, ok)
	}
	// "**/…" may match in any tree: not counted.
	g, err = New(Policy{Workspace: w.workspace, WardenHome: w.wardenHome, Denied: []string{"**/.env"}})
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := g.DeniedWithin(w.project, ""); ok {
		t.Errorf("DeniedWithin(project) with only **/.env denied = %+v; want not reported", d)
	}
}

// TestDeniedToRead: reading a file every user may read in a system
// directory is not denied by a denied path that holds the directory
// (/etc/**); a file there that only some may read, a directory holding one
// (/etc), one outside the system directories, and a system file named
// through a link elsewhere still are.
func TestDeniedToRead(t *testing.T) {
	w := newWorld(t)
	public, private := "/etc/passwd", "/etc/shadow"
	for _, p := range []string{public, private} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s is not here (%v): this system does not keep its users in /etc", p, err)
		}
	}
	if fi, _ := os.Stat(public); fi.Mode().Perm()&0o004 == 0 {
		t.Skipf("%s is not readable by others here", public)
	}
	mkdir(t, w.outside+"/private")
	write(t, w.outside+"/private/notes.txt", "OUTSIDE")
	if err := os.Chmod(w.outside+"/private/notes.txt", 0o644); err != nil {
		t.Fatal(err)
	}
	symlink(t, public, w.home+"/.ssh/passwd-link")
	cases := []struct {
		name   string
		denied bool
	}{
		{public, false},
		{"/etc/../etc/passwd", false},
		{w.home + "/.ssh/passwd-link", true}, // named in ~/.ssh: its pattern stands
		{w.outside + "/private/notes.txt", true},
		{w.home + "/.ssh/id_ed25519", true},
		{w.wardenHome + "/warden.yaml", true},
	}
	if fi, _ := os.Stat(private); fi.Mode().Perm()&0o004 == 0 {
		cases = append(cases, struct {
			name   string
			denied bool
		}{private, true}, struct {
			name   string
			denied bool
		}{"/etc", true}) // it holds /etc/shadow: read whole (grep -r) or through a glob, denied
	}
	for _, c := range cases {
		if _, denied := w.g.DeniedToRead(c.name, ""); denied != c.denied {
			t.Errorf("DeniedToRead(%q) denied = %v, want %v", c.name, denied, c.denied)
		}
		// Denied, for writes and deletes, still denies them all.
		if _, denied := w.g.Denied(c.name, ""); !denied {
			t.Errorf("Denied(%q) = not denied, want denied", c.name)
		}
	}
}
