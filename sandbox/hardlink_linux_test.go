//go:build amd64 || arm64

package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwarden/warden/sandbox"
)

const secretBytes = "AKIA-hard-link-secret-7f3c"

// link makes newname a hard link to oldname, skipping the test where the
// two lie on different filesystems.
func link(t *testing.T, oldname, newname string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(newname), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(oldname, newname); err != nil {
		if os.IsExist(err) || !strings.Contains(err.Error(), "cross-device") {
			t.Fatal(err)
		}
		t.Skipf("cannot hard-link across filesystems here: %v", err)
	}
}

// TestHardLinkToMaskedFileStaysHidden makes, on the host and before the
// run, a hard link to a denied file inside what the sandbox can read, and
// checks that reading the link inside prints nothing of the secret.
func TestHardLinkToMaskedFileStaysHidden(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	cases := []struct {
		name  string
		setup func(t *testing.T, s *sandbox.Spec) (link string)
	}{
		{"denied directory inside the project, link in the project", func(t *testing.T, s *sandbox.Spec) string {
			dir := filepath.Join(s.Project, ".secrets")
			mustWrite(t, filepath.Join(dir, "key"), secretBytes)
			s.Hidden = []string{dir}
			link(t, filepath.Join(dir, "key"), filepath.Join(s.Project, "leak"))
			return filepath.Join(s.Project, "leak")
		}},
		{"denied file outside every grant, link in the workspace", func(t *testing.T, s *sandbox.Spec) string {
			secret := outsideFile(t)
			mustWrite(t, secret, secretBytes)
			s.Hidden = []string{secret}
			link(t, secret, filepath.Join(s.Workspace, "deep", "er", "copy"))
			return filepath.Join(s.Workspace, "deep", "er", "copy")
		}},
		{"denied directory outside every grant, link in the project", func(t *testing.T, s *sandbox.Spec) string {
			dir := filepath.Dir(outsideFile(t))
			mustWrite(t, filepath.Join(dir, "ssh", "id_ed25519"), secretBytes)
			s.Hidden = []string{dir}
			link(t, filepath.Join(dir, "ssh", "id_ed25519"), filepath.Join(s.Project, "src", "fixture"))
			return filepath.Join(s.Project, "src", "fixture")
		}},
		{"two links, one in a writable directory", func(t *testing.T, s *sandbox.Spec) string {
			secret := outsideFile(t)
			mustWrite(t, secret, secretBytes)
			s.Hidden = []string{secret}
			extra := t.TempDir()
			s.ReadWrite = []string{extra}
			link(t, secret, filepath.Join(s.Project, "a"))
			link(t, secret, filepath.Join(extra, "b"))
			return filepath.Join(extra, "b")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := guardSpec(t)
			leak := c.setup(t, &s)
			r := runIn(t, s, "cat", leak)
			if r.err != nil {
				t.Fatalf("sandbox failed: %v", r)
			}
			if strings.Contains(r.stdout+r.stderr, secretBytes) {
				t.Fatalf("cat %s printed the denied file's content: %v", leak, r)
			}
			for _, w := range r.res.Warnings {
				if strings.Contains(w, secretBytes) {
					t.Errorf("a warning carries the secret: %q", w)
				}
			}
			// The same run without the denial reads it: the link is real.
			s.Hidden = nil
			if r := runIn(t, s, "cat", leak); !strings.Contains(r.stdout, secretBytes) {
				t.Fatalf("without the denial the link does not read the file (%v); the test proves nothing", r)
			}
		})
	}
}

// TestNoNewHardLinkInsideTheSandbox checks that a command cannot make a
// hard link of its own to a denied or read-only file in a place it can
// write. The project, the workspace and the files outside lie on one mount
// (under /var/tmp, not the private /tmp, whose kept paths are mounts of
// their own), so that what refuses is the mask or Landlock, which refuses
// to link across directories without the REFER right, and not a mount
// boundary; a link inside the workspace shows that links work there.
func TestNoNewHardLinkInsideTheSandbox(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	cases := []struct {
		name   string
		source func(t *testing.T, s *sandbox.Spec) string
		works  bool
	}{
		{name: "masked file in the project", source: func(t *testing.T, s *sandbox.Spec) string {
			mustWrite(t, filepath.Join(s.Project, ".env"), secretBytes)
			s.Hidden = []string{filepath.Join(s.Project, ".env")}
			return filepath.Join(s.Project, ".env")
		}},
		{name: "denied file outside every grant", source: func(t *testing.T, s *sandbox.Spec) string {
			secret := filepath.Join(filepath.Dir(s.Project), "outside", "key")
			mustWrite(t, secret, secretBytes)
			s.Hidden = []string{secret}
			return secret
		}},
		{name: "file outside every grant", source: func(t *testing.T, s *sandbox.Spec) string {
			path := filepath.Join(filepath.Dir(s.Project), "outside", "notes")
			mustWrite(t, path, "not for the sandbox")
			return path
		}},
		{name: "read-only project file", source: func(t *testing.T, s *sandbox.Spec) string {
			mustWrite(t, filepath.Join(s.Project, "readme"), "hello")
			return filepath.Join(s.Project, "readme")
		}},
		{name: "workspace file", works: true, source: func(t *testing.T, s *sandbox.Spec) string {
			mustWrite(t, filepath.Join(s.Workspace, "mine"), "hello")
			return filepath.Join(s.Workspace, "mine")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := guardSpec(t)
			base, err := os.MkdirTemp("/var/tmp", "warden-link-test-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(base) })
			s.Project, s.Workspace = filepath.Join(base, "project"), filepath.Join(base, "workspace")
			for _, d := range []string{s.Project, s.Workspace} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			src := c.source(t, &s)
			dst := filepath.Join(s.Workspace, "linked")
			r := runIn(t, s, "ln", src, dst)
			if r.err != nil {
				t.Fatalf("sandbox failed: %v", r)
			}
			_, statErr := os.Lstat(dst)
			if c.works {
				if r.res.ExitCode != 0 || statErr != nil {
					t.Fatalf("ln %s %s inside the sandbox: %v (%v); want it to work", src, dst, r, statErr)
				}
				return
			}
			if r.res.ExitCode == 0 || statErr == nil {
				t.Fatalf("ln %s %s succeeded inside the sandbox: %v", src, dst, r)
			}
			t.Logf("refused: %s", strings.TrimSpace(r.stderr))
		})
	}
}

// TestHardLinkInLightModeRefuses checks that light mode, which cannot mask,
// refuses to run when a denied file has a name where the command can read.
func TestHardLinkInLightModeRefuses(t *testing.T) {
	requireMode(t, sandbox.ModeLight)
	s := guardSpec(t)
	s.Mode = sandbox.ModeLight
	secret := outsideFile(t)
	mustWrite(t, secret, secretBytes)
	s.Hidden = []string{secret}
	link(t, secret, filepath.Join(s.Project, "leak"))
	r := runIn(t, s, "cat", filepath.Join(s.Project, "leak"))
	if r.err == nil || strings.Contains(r.stdout, secretBytes) {
		t.Fatalf("light mode with a hard link to a denied file in the project: %v; want a refusal", r)
	}
	if !strings.Contains(r.err.Error(), "hard link") || strings.Contains(r.err.Error(), secretBytes) {
		t.Errorf("refusal %q should say it is about a hard link, and never carry the secret", r.err)
	}
}
