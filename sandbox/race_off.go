//go:build !race

package sandbox

// helperEnv is the environment the sandbox's own re-executed helpers (the
// init and the stage) start with: nothing.
var helperEnv = []string{}
