// Package shellguard classifies shell command lines for the "shell"
// capability. It takes what package walk found in a command line (the simple
// commands it would run, with evaluated words, wrappers unwrapped and code
// strings recursed into) and decides each command from data: command specs
// with option grammars and subcommand trees, operand roles, per-flag effects,
// path zones and an effect×zone table. Pipelines and lists are checked for
// dataflow (network code into a shell, secrets into a network sink).
//
// The verdict lattice is allow < sandbox < ask < deny; the strongest verdict
// of any command wins. Every command an agent runs goes into a sandbox the
// kernel enforces, so the verdict chooses which one and whether a human is
// asked: allow runs in the workspace sandbox, and code the guard cannot see
// (an unknown program, a script) is allowed there; sandbox is for code the
// guard finds suspicious (network content into a shell or interpreter,
// decoded payloads, obfuscation) and runs in the strict guard sandbox; ask
// is for effects beyond the machine or the project (push, publish, deploy,
// docker, kubectl, ssh) and for discarding uncommitted work, unless the
// caller saves that work first where `warden undo` brings it back
// (Env.Snapshots: warden exec does), which allows it; deny for what
// destroys or exfiltrates. Every URL or host a command names is judged by
// the network policy (Policy.Network), and the command's verdict is at least
// that decision. Nothing fails open: parse errors, budget overruns, unknown
// walk issues and panics give ask (deny on an autonomous turn).
//
// Files: classify.go (entry point and accumulation), command.go (one simple
// command), options.go (option grammars), spec*.go (command specs as data),
// network.go (destinations and the network policy), leave.go (effects that
// leave the machine), zones.go (path zones), table.go (effect×zone verdicts),
// dataflow.go (pipelines and lists), interp.go (shells and interpreter
// one-liners), prefilter.go (the read-only fast path), policy.go, stage.go,
// explain.go.
package shellguard
