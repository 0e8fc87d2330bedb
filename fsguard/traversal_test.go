package fsguard

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
)

// TestTraversalAndConfusion is the table of tricks an agent can play with a
// path. Every case names the verdict and the rule, so a trick that starts
// working again fails here.
func TestTraversalAndConfusion(t *testing.T) {
	w := newWorld(t)
	ws := w.workspace
	// Links inside the workspace.
	symlink(t, w.outside+"/secret.txt", ws+"/to_outside_file")
	symlink(t, w.outside, ws+"/to_outside_dir")
	symlink(t, w.home+"/.ssh", ws+"/to_ssh")
	symlink(t, "../../../../../../../../../../etc", ws+"/rel_etc")
	symlink(t, "notes.txt", ws+"/rel_in")
	symlink(t, ws+"/notes.txt", ws+"/abs_in")
	symlink(t, "chain2", ws+"/chain1")
	symlink(t, "chain3", ws+"/chain2")
	symlink(t, "notes.txt", ws+"/chain3")
	symlink(t, "out2", ws+"/out1")
	symlink(t, w.outside+"/secret.txt", ws+"/out2")
	symlink(t, "loop_b", ws+"/loop_a")
	symlink(t, "loop_a", ws+"/loop_b")
	symlink(t, "self", ws+"/self")
	symlink(t, "/proc/self/root", ws+"/proc_root")
	symlink(t, w.wardenHome, ws+"/to_warden")
	mkdir(t, ws+"/sub")
	symlink(t, w.outside, ws+"/sub/up")
	// A link deep inside the workspace: ".." after it climbs from its
	// target for the kernel, but from the link for a tool that cleans
	// the path as text first (Node's path.resolve).
	mkdir(t, ws+"/a/b/c/d")
	symlink(t, "a/b/c/d", ws+"/deep")
	// A link in the denied area that points into the workspace is still
	// denied by where it is named.
	symlink(t, ws+"/notes.txt", w.home+"/.ssh/innocent")
	// A hard link to a file outside every allowed area.
	if err := os.Link(w.outside+"/secret.txt", ws+"/hard"); err != nil {
		t.Fatal(err)
	}
	// Names that look like a denied directory but are others.
	mkdir(t, ws+"/.ѕsh") // Cyrillic s
	write(t, ws+"/.ѕsh/id_rsa", "fake")

	long := strings.Repeat("a/", 32*1024) // 64 KB
	cases := []struct {
		name, path string
		action     Action
		want       warden.Verdict
		rule       string
	}{
		// ../ chains
		{"dotdot chain out of the workspace", ws + "/../../../../../../../../../../etc/shadow", Read, warden.Deny, "fs.denied"},
		{"dotdot chain to a public system file", ws + "/../../../../../../../../../../etc/passwd", Read, warden.Allow, "fs.public_system"},
		{"dotdot chain to the warden policy", ws + "/../../warden.yaml", Read, warden.Deny, "fs.self_protect"},
		{"dotdot that comes back in", ws + "/../files/notes.txt", Read, warden.Allow, "fs.workspace"},
		{"relative dotdot from the project", "../../../outside/secret.txt", Read, warden.Deny, "fs.no_rule"},
		{"dotdot after a symlink climbs from its target", ws + "/to_outside_dir/../outside/secret.txt", Read, warden.Deny, "fs.no_rule"},
		{"relative dotdot after a symlink", "../.warden/sandbox/files/to_outside_dir/../outside/secret.txt", Read, warden.Deny, "fs.no_rule"},
		// red-team-24: the kernel's walk stays in the workspace, the
		// host tool's cleaned path is the home's .bashrc, or the home.
		{"dotdot after a deep symlink, cleaned as text by the tool", ws + "/deep/../../../../.bashrc", Write, warden.Deny, "fs.no_rule"},
		{"relative dotdot after a deep symlink", "../.warden/sandbox/files/deep/../../../../.profile", Write, warden.Deny, "fs.no_rule"},
		{"listing through a deep symlink climbs to the home", ws + "/deep/../../../..", List, warden.Deny, "fs.no_rule"},
		// absolute paths
		{"absolute outside", w.outside + "/secret.txt", Read, warden.Deny, "fs.no_rule"},
		{"absolute inside", ws + "/notes.txt", Read, warden.Allow, "fs.workspace"},
		{"root itself", "/", List, warden.Deny, "fs.no_rule"},
		// ~user
		{"tilde user", "~root/.ssh/id_rsa", Read, warden.Deny, "fs.invalid_path"},
		{"tilde other user", "~u/docs", Read, warden.Deny, "fs.invalid_path"},
		// symlinks
		{"symlink to an outside file", ws + "/to_outside_file", Read, warden.Deny, "fs.no_rule"},
		{"symlink to an outside dir, file below", ws + "/to_outside_dir/secret.txt", Read, warden.Deny, "fs.no_rule"},
		{"symlink into a denied dir", ws + "/to_ssh/id_ed25519", Read, warden.Deny, "fs.denied"},
		{"relative symlink to /etc", ws + "/rel_etc/passwd", Read, warden.Deny, "fs.denied"},
		{"relative symlink inside", ws + "/rel_in", Read, warden.Allow, "fs.workspace"},
		{"absolute symlink inside", ws + "/abs_in", Read, warden.Allow, "fs.workspace"},
		{"chain ending inside", ws + "/chain1", Read, warden.Allow, "fs.workspace"},
		{"chain ending outside", ws + "/out1", Read, warden.Deny, "fs.no_rule"},
		{"symlink loop", ws + "/loop_a", Read, warden.Deny, "fs.symlink_loop"},
		{"self loop", ws + "/self/x", Write, warden.Deny, "fs.symlink_loop"},
		{"symlink into warden's home", ws + "/to_warden/warden.yaml", Read, warden.Deny, "fs.self_protect"},
		{"symlink in a subdirectory", ws + "/sub/up/secret.txt", Write, warden.Deny, "fs.no_rule"},
		{"write through a symlink creates outside", ws + "/to_outside_dir/new.txt", Write, warden.Deny, "fs.no_rule"},
		{"denied name pointing inside", w.home + "/.ssh/innocent", Read, warden.Deny, "fs.denied"},
		// hard links
		{"hard link to an outside file is asked about", ws + "/hard", Read, warden.Ask, "fs.hard_link"},
		{"hard link write is asked about", ws + "/hard", Write, warden.Ask, "fs.hard_link"},
		{"hard link may be deleted", ws + "/hard", Delete, warden.Allow, "fs.workspace"},
		// bind-style tricks
		{"/proc/self/root", "/proc/self/root" + w.outside + "/secret.txt", Read, warden.Deny, "fs.proc"},
		{"/proc/self/root to the workspace", "/proc/self/root" + ws + "/notes.txt", Read, warden.Deny, "fs.proc"},
		{"symlink to /proc/self/root", ws + "/proc_root/etc/passwd", Read, warden.Deny, "fs.proc"},
		{"/dev/fd", "/dev/fd/3", Read, warden.Deny, "fs.proc"},
		{"/dev/stdin", "/dev/stdin", Read, warden.Deny, "fs.proc"},
		{"/proc/1/environ", "/proc/1/environ", Read, warden.Deny, "fs.proc"},
		// case and Unicode
		{"upper case denied dir", "~/.SSH/id_ed25519", Read, warden.Deny, "fs.denied"},
		{"long s in a denied dir", "~/.ſsh/id_ed25519", Read, warden.Deny, "fs.denied"},
		{"upper case ETC", "/ETC/passwd", Read, warden.Deny, "fs.denied"},
		{"upper case warden home", strings.ToUpper(w.wardenHome) + "/warden.yaml", Read, warden.Deny, "fs.self_protect"},
		{"Cyrillic lookalike is another directory", ws + "/.ѕsh/id_rsa", Read, warden.Allow, "fs.workspace"},
		{"fullwidth lookalike outside is no rule", "~/.ｓsh/id_ed25519", Read, warden.Deny, "fs.no_rule"},
		// trailing slashes and dots
		{"trailing slash on a denied dir", "~/.ssh/", List, warden.Deny, "fs.denied"},
		{"trailing dot on a denied dir", "~/.ssh/.", List, warden.Deny, "fs.denied"},
		{"double slashes", w.home + "//.ssh//id_ed25519", Read, warden.Deny, "fs.denied"},
		{"dot segments", w.home + "/./.ssh/./id_ed25519", Read, warden.Deny, "fs.denied"},
		{"trailing slash in the workspace", ws + "/sub/", List, warden.Allow, "fs.workspace"},
		// malformed
		{"NUL byte", ws + "/notes.txt\x00/../../etc/passwd", Read, warden.Deny, "fs.invalid_path"},
		{"invalid UTF-8", ws + "/\xff\xfe", Read, warden.Deny, "fs.invalid_path"},
		{"64 KB path", "/" + long, Read, warden.Deny, "fs.invalid_path"},
		{"empty", "", Read, warden.Deny, "fs.invalid_path"},
		{"component too long", ws + "/" + strings.Repeat("x", 300) + "/y", Write, warden.Deny, "fs.invalid_path"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := w.g.Decide(c.action, c.path, w.project)
			if d.Verdict != c.want || d.Rule != c.rule {
				t.Fatalf("Decide(%s, %s) = %s %s (%s); want %s %s", c.action, strconv.QuoteToASCII(short(c.path)), d.Verdict, d.Rule, d.Reason, c.want, c.rule)
			}
			if len(d.Reason) > 1024 {
				t.Fatalf("reason is %d bytes; a reason must stay readable", len(d.Reason))
			}
		})
	}
}

func short(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
