// Package nestedgit finds the git repositories inside a project that git
// on the host enters on its own, and takes out of them what would run a
// program there.
//
// The workspace sandbox keeps the project's own .git/config and hooks
// read-only, and those of every git directory under .git/modules and
// .git/worktrees that exists when the sandbox starts. A command can still
// make a repository of its own inside the project (git init sub, a
// submodule added from a local path, a .git file naming a directory it
// wrote) and put it in the project's index as a gitlink: the user's next
// git status on the host runs git in it too, which obeys its config
// (core.fsmonitor, core.pager, diff.external, filters, aliases…) and its
// hooks. A Guard takes a baseline of every such git directory before a
// command runs; Sweep, after it, looks at each one that is new or changed
// and moves the config keys that are not known to be inert, and every
// hook, into warden's quarantine, where the user can read them and put
// them back.
package nestedgit
