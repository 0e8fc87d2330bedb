//go:build !linux || !(amd64 || arm64)

package sandbox

import (
	"context"
	"errors"
)

var errUnsupported = errors.New("the native sandbox needs Linux on amd64 or arm64; only mode off runs here")

// Native is the engine that isolates commands with the Linux kernel's own
// features; on this platform it can only refuse.
type Native struct{ Exe string }

// Run refuses: there is no native sandbox on this platform.
func (n *Native) Run(context.Context, Spec, Command) (Result, error) { return Result{}, errUnsupported }

// Main returns at once: there is no init or stage on this platform.
func Main() {}

// Probe reports that no mode but off runs here.
func Probe() Platform {
	return Platform{Engine: "native", UserNamespacesError: errUnsupported.Error(), Modes: []Mode{ModeOff}}
}

// LandlockABI is 0: there is no Landlock on this platform.
func LandlockABI() int { return 0 }
