package app

import (
	"io"
	"slices"
	"testing"

	warden "github.com/agentwarden/warden"
	"github.com/agentwarden/warden/config"
)

// TestEarlySpecIsTheRunsSpec: in a kept sandbox's supervisor, a plain
// one-shot run's spec computed beside its decision is the one computed
// after it; a run of a session, another profile, an approval or a host
// answer gets none, and one taken for another profile than the decision's
// is not used.
func TestEarlySpecIsTheRunsSpec(t *testing.T) {
	a := openTestApp(t)
	project := t.TempDir()
	a.Supervises = OneShotWorld("", project)
	r := ExecRequest{Args: []string{"true"}, Dir: project}

	e := a.startEarlySpec(&r)
	if e == nil {
		t.Fatal("no early spec for a plain one-shot run in a kept sandbox's supervisor")
	}
	if _, ok, _ := e.take(config.ProfileGuard); ok {
		t.Error("the early spec was taken for the guard profile")
	}
	got, ok, err := e.take(config.ProfileWorkspace)
	if !ok || err != nil {
		t.Fatalf("take(workspace) = ok %v, err %v", ok, err)
	}
	if c, ok := got.Egress.(io.Closer); ok {
		c.Close()
	}
	want, err := a.sandboxSpec(config.ProfileWorkspace, project, r.Override, &warden.Request{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := want.Egress.(io.Closer); ok {
		c.Close()
	}
	if got.Project != want.Project || !slices.Equal(got.ReadWrite, want.ReadWrite) || !slices.Equal(got.Hidden, want.Hidden) ||
		!slices.Equal(got.Protected, want.Protected) || got.ProjectWritable != want.ProjectWritable || got.Limits != want.Limits {
		t.Errorf("the early spec differs from the run's:\n got %+v\nwant %+v", got, want)
	}
	e.drop() // taken: nothing to close twice

	for name, r := range map[string]ExecRequest{
		"a session's run":   {Args: r.Args, Dir: project, Base: warden.Request{Session: "s1"}},
		"the guard profile": {Args: r.Args, Dir: project, Profile: config.ProfileGuard},
		"an approval's run": {Args: r.Args, Dir: project, Approval: "ap-1"},
		"a host answer":     {Args: r.Args, Dir: project, HostApproved: true},
		"no directory":      {Args: r.Args},
	} {
		if e := a.startEarlySpec(&r); e != nil {
			e.drop()
			t.Errorf("%s got an early spec", name)
		}
	}
	// A decision that waited for a human's answer: the file system may
	// have changed meanwhile, and the spec is computed anew.
	notified := ""
	asking := ExecRequest{Args: r.Args, Dir: project, Wait: &AskWait{Channel: "exec", Notify: func(id string) { notified = id }}}
	e = a.startEarlySpec(&asking)
	asking.Wait.Notify("ap-2")
	if _, ok, _ := e.take(config.ProfileWorkspace); ok || notified != "ap-2" {
		t.Errorf("after an approval was opened the early spec was taken %v, and the run's own Notify saw %q", ok, notified)
	}
	e.drop()
	a.Supervises = "world-1" // a session's world
	if e := a.startEarlySpec(&r); e != nil {
		e.drop()
		t.Error("a session world's supervisor got an early spec")
	}
}
