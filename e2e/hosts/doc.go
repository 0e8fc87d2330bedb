// Package hosts holds warden's end-to-end tests with the real agent hosts
// (issue 24): Claude Code, Codex CLI and Gemini CLI, pinned and installed
// from the npm registry by scripts/hosts.sh, each run headless (`claude -p`,
// `codex exec`, `gemini -p`) against a scripted model server that speaks
// its wire protocol, with warden's hook installed by `warden install HOST
// --project` in an isolated world (a fake home with a sentinel and a marked
// SSH key, a warden home, a project under git).
//
// Each scenario has the model ask for tool calls and then judges by effect:
// what happened to the world's files, and what the model server received as
// the tools' results. The suite skips only when the npm registry cannot be
// reached (scripts/hosts.sh says why) or no sandbox can run here.
//
// The package has no code of its own.
package hosts
