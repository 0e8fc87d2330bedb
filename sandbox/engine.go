package sandbox

import "context"

// Engine runs commands in sandboxes: one-shot, or in long-lived sandboxes it
// keeps by name. The native engine (Manager, over Native) is the one there
// is; others (docker) implement the same interface. Every method's error
// means the sandbox could not do what was asked; a command that ran and
// failed, or was killed by a limit, is a Result.
type Engine interface {
	// Name is the engine's name in the policy file (sandbox.engine).
	Name() string
	// Run runs one command in a fresh sandbox built from spec (mounts,
	// environment, network, limits, read-only root) and removes it after.
	Run(ctx context.Context, spec Spec, c Command) (Result, error)
	// Start creates long-lived sandbox name and waits until it is ready.
	Start(ctx context.Context, name, profile string, spec Spec) (Info, error)
	// Exec runs a command (argv, working directory, environment, stdin) in
	// running sandbox name, bounded by lim's wall time and output (zero
	// fields: the sandbox's own).
	Exec(ctx context.Context, name string, c Command, lim Limits) (Result, error)
	// Status reports sandbox name.
	Status(name string) (Info, error)
	// List reports the sandboxes whose names start with prefix.
	List(prefix string) ([]Info, error)
	// Stop tears sandbox name down, keeping its records.
	Stop(ctx context.Context, name string) (Info, error)
	// Remove stops sandbox name and deletes its records.
	Remove(ctx context.Context, name string) error
}
