package app

import (
	"io"
	"sync/atomic"

	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/sandbox"
)

// earlySpec is a run's sandbox spec computed while the gate decides the
// run and makes its decision durable: in the supervisor of a sandbox kept
// for one-shot runs, nearly every run is the workspace profile's, alone in
// that sandbox, and the spec (a few hundred file system calls) and the
// decision (the guard's walk, then an fdatasync) take about as long as each
// other. The spec depends on nothing the decision adds: the profile, the
// directory, the overrides, and who asks (the request's identity, which
// the decision copies); it is used only when the decision names the same
// profile, and dropped (its egress proxy closed) otherwise, and when the
// decision waited for a human: what the file system held when the spec was
// computed (a secret path made meanwhile) may have changed by the answer.
type earlySpec struct {
	profile string
	done    chan struct{}
	spec    sandbox.Spec
	err     error
	taken   bool
	asked   atomic.Bool // the decision opened an approval and waits for it
}

// startEarlySpec starts computing r's spec in the workspace profile when r
// is a plain one-shot run in a kept sandbox's supervisor (no session, whose
// /tmp the spec would make, no approval or host answer, which decide
// otherwise); nil otherwise. It notes in r's wait when the decision asks
// a human.
func (a *App) startEarlySpec(r *ExecRequest) *earlySpec {
	if !IsOneShotWorld(a.Supervises) || r.Dir == "" || r.Base.Session != "" || r.Approval != "" || r.HostApproved ||
		r.Profile != "" && r.Profile != config.ProfileWorkspace {
		return nil
	}
	e := &earlySpec{profile: config.ProfileWorkspace, done: make(chan struct{})}
	who, dir, o, wait := r.Base, r.Dir, r.Override, r.Wait
	go func() {
		defer close(e.done)
		e.spec, e.err = a.sandboxSpec(e.profile, dir, o, &who, wait)
	}()
	if wait != nil {
		w := *wait
		w.Notify = func(id string) {
			e.asked.Store(true)
			if wait.Notify != nil {
				wait.Notify(id)
			}
		}
		r.Wait = &w
	}
	return e
}

// take returns the spec computed early for profile, ok false when there is
// none for it or the decision waited for a human.
func (e *earlySpec) take(profile string) (spec sandbox.Spec, ok bool, err error) {
	if e == nil || profile != e.profile || e.asked.Load() {
		return sandbox.Spec{}, false, nil
	}
	<-e.done
	e.taken = true
	return e.spec, true, e.err
}

// drop waits for a spec that was not taken and closes its egress proxy.
func (e *earlySpec) drop() {
	if e == nil || e.taken {
		return
	}
	<-e.done
	if c, ok := e.spec.Egress.(io.Closer); ok {
		c.Close()
	}
}
