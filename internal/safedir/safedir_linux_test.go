package safedir

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNothingFollowsASymlink: a path with a symlink on it does not open;
// in an opened directory a symlink is neither read nor written through,
// and the descriptor keeps naming the directory after its path is swapped
// for a symlink.
func TestNothingFollowsASymlink(t *testing.T) {
	root := t.TempDir()
	real, outside := filepath.Join(root, "real"), filepath.Join(root, "outside")
	for _, d := range []string{real + "/sub", outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(filepath.Join(root, "link")); err == nil {
		t.Error("Open followed a symlink at the end of the path")
	}
	if _, err := Open(filepath.Join(root, "link", ".")); err == nil {
		t.Error("Open followed a symlink on the way")
	}
	d, err := Open(real)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := os.Symlink(secret, filepath.Join(real, "cfg")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ReadNoFollow("cfg", 1<<10); err == nil {
		t.Error("ReadNoFollow read through a symlink")
	}
	if err := d.CreateNew("cfg", []byte("x"), 0o644); err == nil {
		t.Error("CreateNew wrote through a symlink")
	}
	if b, _ := os.ReadFile(secret); string(b) != "s" {
		t.Errorf("the file outside changed: %q", b)
	}
	if _, err := d.Sub("cfg"); err == nil {
		t.Error("Sub opened a symlink")
	}
	// The directory swapped for a symlink: the descriptor still names it.
	if err := os.Rename(real, real+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, real); err != nil {
		t.Fatal(err)
	}
	if err := d.CreateNew("new", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(real+".moved", "new")); err != nil {
		t.Errorf("CreateNew wrote elsewhere than the directory it opened: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
		t.Error("CreateNew followed the symlink that replaced the directory")
	}
}

// TestSubWritableGivesItsOwnerTheDirectoryBack: a directory a command made
// 0000 is its owner's to read and write again (u+rwx), the rest of its
// mode kept.
func TestSubWritableGivesItsOwnerTheDirectoryBack(t *testing.T) {
	base := t.TempDir()
	locked := filepath.Join(base, "locked")
	if err := os.Mkdir(locked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(locked, 0o050); err != nil {
		t.Fatal(err)
	}
	d, err := Open(base)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	sub, err := d.SubWritable("locked")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	st, err := os.Stat(locked)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o750 {
		t.Errorf("mode after SubWritable = %o, want 750", st.Mode().Perm())
	}
	if err := sub.CreateNew("f", []byte("x"), 0o644); err != nil {
		t.Errorf("create in it: %v", err)
	}
}
