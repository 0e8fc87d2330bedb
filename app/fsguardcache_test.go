package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/gate"
)

// TestOneShotChecksSeeARuleDirectoryBecomeALink runs one-shot filesystem
// checks (open the home, decide, close) on a policy whose denied directory
// is turned into a symlink between two of them: every check after that must
// deny the link's real directory, whether its process compiled the rules or
// read them from the compiled-rules cache a process before it wrote.
func TestOneShotChecksSeeARuleDirectoryBecomeALink(t *testing.T) {
	ctx := context.Background()
	u, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", u)
	// 20 rules: ~/private holds 10 of the denied directories, so it is
	// read whole, and ~/projects the 10 allowed ones.
	for i := range 10 {
		for _, d := range []string{fmt.Sprintf("projects/p%d", i), fmt.Sprintf("private/d%d", i)} {
			if err := os.MkdirAll(filepath.Join(u, d), 0o700); err != nil {
				t.Fatal(err)
			}
		}
	}
	secret := filepath.Join(u, "outside", "secret")
	if err := os.MkdirAll(secret, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret+"/f", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	home := policyHome(t, 20)
	check := func() warden.Decision {
		t.Helper()
		a, err := Open(ctx, home, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		// The project is ~/outside, whose policy rule "**" allows reading.
		req := warden.Request{Capability: warden.CapFilesystem, Action: "read", Resource: secret + "/f", Cwd: filepath.Dir(secret)}
		d, err := a.Gate.CheckWith(ctx, &req, gate.CheckOptions{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	// The rules' directories must be older than the cache's racy window
	// (a second) for their answers to be cached.
	time.Sleep(1100 * time.Millisecond)
	if d := check(); d.Verdict != warden.Allow {
		t.Fatalf("before the link: %s %s (%s)", d.Verdict, d.Reason, d.Rule)
	}
	if d := check(); d.Verdict != warden.Allow {
		t.Fatalf("before the link, second check: %s %s (%s)", d.Verdict, d.Reason, d.Rule)
	}
	if _, err := os.Stat(home.FsguardCachePath()); err != nil {
		t.Fatalf("no compiled-rules cache was written: %v", err)
	}
	d0 := filepath.Join(u, "private", "d0")
	if err := os.Remove(d0); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, d0); err != nil {
		t.Fatal(err)
	}
	for i, wait := range []time.Duration{0, 0, 1100 * time.Millisecond, 0} {
		time.Sleep(wait) // after the wait, a process writes the cache and the next reads it
		if d := check(); d.Verdict != warden.Deny || d.Rule != "fs.denied" {
			t.Fatalf("check %d after ~/private/d0 became a link to %s: %s %s (%s)", i, secret, d.Verdict, d.Reason, d.Rule)
		}
	}
}
