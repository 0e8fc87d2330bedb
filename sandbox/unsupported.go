//go:build !linux || !(amd64 || arm64)

package sandbox

import (
	"context"
	"errors"
	"os/exec"
	"time"
)

var errUnsupported = errors.New("the native sandbox needs Linux on amd64 or arm64")

// Native is the engine that isolates commands with the Linux kernel's own
// features; on this platform it can only refuse.
type Native struct {
	Exe      string
	GitGuard GitGuard
}

// Run refuses: there is no native sandbox on this platform.
func (n *Native) Run(context.Context, Spec, Command) (Result, error) { return Result{}, errUnsupported }

// StartEarly does nothing: there is no init on this platform.
func StartEarly(string, bool) {}

// KeepEarly does nothing: there is no init on this platform.
func KeepEarly(string) {}

// RefillEarly does nothing: there is no init on this platform.
func RefillEarly() {}

// DiscardEarly does nothing: there is no init on this platform.
func DiscardEarly() {}

// Main returns at once: there is no init or stage on this platform.
func Main() {}

// Probe reports that no mode runs here.
func Probe() Platform {
	return Platform{Engine: "native", UserNamespacesError: errUnsupported.Error()}
}

// Supported reports that no sandbox runs on this platform.
func Supported() error { return errUnsupported }

// LandlockABI is 0: there is no Landlock on this platform.
func LandlockABI() int { return 0 }

// Manager runs long-lived sandboxes; on this platform it can only refuse.
type Manager struct {
	Dir         string
	Native      Native
	Supervisor  func(name string) *exec.Cmd
	Emit        func(Event)
	HealthEvery time.Duration
	Now         func() time.Time
	Egress      func(Info) (Egress, error)
	Self        string
}

// Start refuses: there is no native sandbox on this platform.
func (m *Manager) Start(context.Context, string, string, Spec) (Info, error) {
	return Info{}, errUnsupported
}

// Supervise refuses: there is no native sandbox on this platform.
func (m *Manager) Supervise(context.Context, string) error { return errUnsupported }

// Ready: no sandbox runs here.
func (m *Manager) Ready(string, string) bool { return false }

// Warm refuses: there are no sandboxes here.
func (m *Manager) Warm(context.Context, string, string, Spec) error { return errUnsupported }

// Ensure refuses: there are no sandboxes here.
func (m *Manager) Ensure(context.Context, string, string, Spec) (Info, bool, error) {
	return Info{}, false, errUnsupported
}

// Exec refuses: there is no native sandbox on this platform.
func (m *Manager) Exec(context.Context, string, Command, Limits) (Result, error) {
	return Result{}, errUnsupported
}

// RunIn refuses: there is no native sandbox on this platform.
func (m *Manager) RunIn(context.Context, Info, Command, Limits) (Result, error) {
	return Result{}, errUnsupported
}

// Hold refuses: there is no native sandbox on this platform.
func (m *Manager) Hold(context.Context, string) error { return errUnsupported }

// Release refuses: there is no native sandbox on this platform.
func (m *Manager) Release(context.Context, string) error { return errUnsupported }

// HoldLease refuses: there is no native sandbox on this platform.
func (m *Manager) HoldLease(context.Context, string, string, time.Duration) error {
	return errUnsupported
}

// ReleaseLeases has nothing to release: there is no native sandbox on this
// platform, so nothing was held.
func (m *Manager) ReleaseLeases(context.Context, string, bool, ...string) error { return nil }

// Status refuses: there is no native sandbox on this platform.
func (m *Manager) Status(string) (Info, error) { return Info{}, errUnsupported }

// Stop refuses: there is no native sandbox on this platform.
func (m *Manager) Stop(context.Context, string) (Info, error) { return Info{}, errUnsupported }

// Recover refuses: there is no native sandbox on this platform.
func (m *Manager) Recover(context.Context, string) (Info, error) { return Info{}, errUnsupported }

// Events refuses: there is no native sandbox on this platform.
func (m *Manager) Events(string) ([]Event, error) { return nil, errUnsupported }

// List finds nothing: there is no native sandbox on this platform.
func (m *Manager) List(string) ([]Info, error) { return nil, nil }

// Name is "native".
func (m *Manager) Name() string { return "native" }

// Run refuses: there is no native sandbox on this platform.
func (m *Manager) Run(context.Context, Spec, Command) (Result, error) {
	return Result{}, errUnsupported
}

// Remove refuses: there is no native sandbox on this platform.
func (m *Manager) Remove(context.Context, string) error { return errUnsupported }

var _ Engine = (*Manager)(nil)

// Protect has nothing to protect on this platform.
func (m *Manager) Protect(context.Context, string) error { return nil }

// HoldRuns does nothing: there are no runs to hold on this platform.
func HoldRuns(string, string, time.Duration) error { return nil }

// ReleaseRuns does nothing: there are no runs to hold on this platform.
func ReleaseRuns(string, bool, ...string) error { return nil }
