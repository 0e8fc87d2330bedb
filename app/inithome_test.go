package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInitKeepsAPolicyFileItCannotRead: warden init (with or without
// --force) on a home whose policy file is there but cannot be read (a
// named pipe, a symlink leading nowhere) stops at once and says what is
// wrong, leaving the file as it was: it neither hangs on the pipe nor
// replaces a policy it could not keep a backup of.
func TestInitKeepsAPolicyFileItCannotRead(t *testing.T) {
	for _, force := range []bool{false, true} {
		t.Run(fmt.Sprintf("pipe force=%v", force), func(t *testing.T) {
			home := Home(t.TempDir())
			if err := syscall.Mkfifo(home.PolicyPath(), 0o600); err != nil {
				t.Skipf("no named pipes here: %v", err)
			}
			done := make(chan error, 1)
			go func() { _, err := InitHome(context.Background(), home, force); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "named pipe") {
					t.Errorf("init (force=%v) over a named pipe: %v, want an error naming it", force, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("init (force=%v) hung on a named pipe at the policy file", force)
			}
			if fi, err := os.Lstat(home.PolicyPath()); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("the named pipe was replaced: %v %v", fi, err)
			}
		})
		t.Run(fmt.Sprintf("dangling symlink force=%v", force), func(t *testing.T) {
			home := Home(t.TempDir())
			target := filepath.Join(t.TempDir(), "dotfiles", "warden.yaml")
			if err := os.Symlink(target, home.PolicyPath()); err != nil {
				t.Fatal(err)
			}
			_, err := InitHome(context.Background(), home, force)
			if err == nil || !strings.Contains(err.Error(), "symlink") {
				t.Errorf("init (force=%v) over a dangling symlink: %v, want an error naming the link", force, err)
			}
			if got, err := os.Readlink(home.PolicyPath()); err != nil || got != target {
				t.Errorf("the symlink was replaced: %q %v", got, err)
			}
		})
	}
}
