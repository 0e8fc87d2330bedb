//go:build race

package sandbox

// helperEnv is the environment the sandbox's own re-executed helpers (the
// init and the stage) start with. Under the race detector, whose runtime
// sleeps a second at every exit, that sleep is switched off: it would add
// two seconds to every run of a test binary.
var helperEnv = []string{"GORACE=atexit_sleep_ms=0"}
