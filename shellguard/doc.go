// Package shellguard classifies shell command lines for the "shell"
// capability. It takes what package walk found in a command line (the simple
// commands it would run, with evaluated words, wrappers unwrapped and code
// strings recursed into) and decides each command from data: command specs
// with option grammars and subcommand trees, operand roles, per-flag effects,
// path zones and an effect×zone table. Pipelines and lists are checked for
// dataflow (network code into a shell, secrets into a network sink).
//
// The verdict lattice is allow < sandbox < ask < deny; the strongest verdict
// of any command wins. Nothing fails open: parse errors, budget overruns,
// unknown walk issues and panics give ask (deny on an autonomous turn).
//
// Files: classify.go (entry point and accumulation), command.go (one simple
// command), options.go (option grammars), spec*.go (command specs as data),
// zones.go (path zones), table.go (effect×zone verdicts), dataflow.go
// (pipelines and lists), interp.go (shells and interpreter one-liners),
// prefilter.go (the read-only fast path), policy.go, stage.go, explain.go.
package shellguard
