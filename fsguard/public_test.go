package fsguard

import (
	"os"
	"testing"
)

// TestDeniedToReadKeepsNarrowerDenials: a public system file gives way
// only to a denied path that holds a whole system directory (/etc/**); one
// the user denied by name or by a pattern of its own (/etc/passwd,
// /etc/pass*, **/passwd) stays denied to read, as the sandbox masks it.
func TestDeniedToReadKeepsNarrowerDenials(t *testing.T) {
	const public = "/etc/passwd"
	fi, err := os.Stat(public)
	if err != nil {
		t.Skipf("%s is not here (%v): this system does not keep its users in /etc", public, err)
	}
	if fi.Mode().Perm()&0o004 == 0 {
		t.Skipf("%s is not readable by others here", public)
	}
	w := newWorld(t)
	for _, extra := range []string{"", "/etc/passwd", "/etc/pass*", "/etc/**/passwd", "**/passwd", "/**"} {
		denied := append([]string(nil), DefaultDenied...)
		if extra != "" {
			denied = append(denied, extra)
		}
		g, err := New(Policy{Workspace: w.workspace, Denied: denied, WardenHome: w.wardenHome, UserHome: w.home})
		if err != nil {
			t.Fatal(err)
		}
		_, got := g.DeniedToRead(public, "")
		if want := extra != "" && extra != "/**"; got != want {
			t.Errorf("with %q also denied, DeniedToRead(%s) denied = %v, want %v", extra, public, got, want)
		}
	}
}
