// Package session holds warden's end-to-end session tests (issue 22): whole
// coding-agent sessions in real Go, Node, Python and C projects go through
// `warden hook claude` and then run as Claude Code would run them, in an
// isolated world (a fake home holding marked secrets, a warden home, projects
// under git, a listener on loopback).
//
// TestOrdinaryWork replays the corpus under testdata/sessions and fails when
// less than 97% of its commands work. TestAttacks replays the cases under
// testdata/attacks and fails on every case with an effect: a secret in the
// output or in a file the agent can read, a file outside the writable set
// changed, a connection that reached the listener. An ask counts as refused.
// TestJudge checks the judges themselves on commands run with no hook.
//
// The package has no code of its own; see testdata/README.md for the corpus
// format.
package session
