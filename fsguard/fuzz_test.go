//go:build unix

package fsguard

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentwarden/warden"
)

// inode identifies a file independently of any name for it.
type inode struct{ dev, ino uint64 }

func inodeOf(fi fs.FileInfo) (inode, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return inode{}, false
	}
	return inode{uint64(st.Dev), uint64(st.Ino)}, true
}

// allowedInodes walks dirs without following symlinks and returns every file
// and directory found: what an allowed path may open.
func allowedInodes(t testing.TB, dirs ...string) map[inode]bool {
	out := map[inode]bool{}
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.Type()&fs.ModeSymlink != 0 {
				return nil
			}
			fi, err := e.Info()
			if err != nil {
				return err
			}
			if in, ok := inodeOf(fi); ok {
				out[in] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// FuzzDecide checks the guard against the kernel: whenever the guard allows a
// path, the file the kernel opens for it (or, for a path that does not exist
// yet, the directory it would be created in) is one found by walking the
// workspace or the project. The oracle shares no code with the guard: it
// compares inodes, not names.
func FuzzDecide(f *testing.F) {
	w := newWorld(f, Rule{Pattern: "**", Actions: Actions, Level: Auto})
	ws := w.workspace
	for _, l := range [][2]string{
		{w.outside + "/secret.txt", ws + "/to_outside_file"},
		{w.outside, ws + "/to_outside_dir"},
		{w.home + "/.ssh", ws + "/to_ssh"},
		{"../../../../../../../../etc", ws + "/rel_etc"},
		{"notes.txt", ws + "/rel_in"},
		{"loop_b", ws + "/loop_a"},
		{"loop_a", ws + "/loop_b"},
		{"/proc/self/root", ws + "/proc_root"},
		{w.wardenHome, ws + "/to_warden"},
		{"..", ws + "/up"},
		{"../..", w.project + "/src/up2"},
		{w.project, ws + "/to_project"},
	} {
		symlink(f, l[0], l[1])
	}
	mkdir(f, ws+"/d")
	allowed := allowedInodes(f, ws, w.project)
	for _, s := range []string{
		"@/outside/secret.txt", "to_outside_file", "to_outside_dir/secret.txt", "to_ssh/id_ed25519",
		"rel_etc/passwd", "rel_in", "loop_a", "proc_root/etc/passwd", "to_warden/warden.yaml",
		"up/up/warden.yaml", "up/files/notes.txt", "../../.ssh/id_ed25519", "src/up2/.ssh/id_ed25519",
		"to_outside_dir/../outside/secret.txt", "d/../../files/notes.txt", "~/.ssh/id_ed25519",
		"to_project/src/main.go", "new/file", "/etc/passwd", "@//home/u/.SSH", "**/*",
	} {
		for _, cwd := range []byte{0, 1, 2} {
			f.Add(s, cwd, byte(0))
		}
	}
	cwds := []string{ws, w.project, w.home}
	f.Fuzz(func(t *testing.T, name string, cwdIndex, action byte) {
		if rest, ok := strings.CutPrefix(name, "@/"); ok {
			name = w.root + "/" + rest
		}
		cwd := cwds[int(cwdIndex)%len(cwds)]
		a := Actions[int(action)%len(Actions)]
		d := w.g.Decide(a, name, cwd)
		if d.Verdict != warden.Allow {
			return
		}
		if a == List && strings.ContainsAny(name, "*?[{") {
			return // a listing pattern is judged by its literal directory, checked below
		}
		p := name
		if strings.HasPrefix(p, "~") {
			p = w.home + p[1:]
		}
		if !filepath.IsAbs(p) {
			p = cwd + "/" + p
		}
		if d.Rule == "fs.public_system" {
			// Allowed as what every user may read: it must be one.
			if a != Read && a != List {
				t.Fatalf("Decide(%s, %q) allowed a public system file for %s", a, name, a)
			}
			if real, err := filepath.EvalSymlinks(p); err != nil || !publicSystemFile(real) {
				t.Fatalf("Decide(%s, %q, cwd %q) allowed it as a public system file (%s), but it is not one", a, name, cwd, d.Reason)
			}
			return
		}
		// The longest prefix the kernel can open must be an allowed inode.
		for q := p; ; {
			fi, err := os.Stat(q)
			if err == nil {
				in, _ := inodeOf(fi)
				if !allowed[in] {
					t.Fatalf("Decide(%s, %q, cwd %q) allowed (%s), but the kernel opens %q outside the allowed areas", a, name, cwd, d.Reason, q)
				}
				return
			}
			i := strings.LastIndexByte(q, '/')
			if i <= 0 {
				t.Fatalf("Decide(%s, %q) allowed (%s), but no prefix of it exists", a, name, d.Reason)
			}
			q = q[:i]
		}
	})
}
