// Command warden-sandbox is the init and the stage of warden's sandboxes: a
// small binary that links only the sandbox package, so that each of the two
// processes a one-shot run starts inside its sandbox starts in about a
// millisecond instead of warden's three. warden uses it only when it sits
// beside warden with the Go build ID warden was built to expect (make build
// builds both); otherwise warden re-executes itself, which works the same.
// It is started by warden, never by hand.
package main

import (
	"fmt"
	"os"

	"github.com/agentwarden/warden/sandbox"
)

func main() {
	sandbox.Main() // an init, stage or launcher never returns from here
	fmt.Fprintln(os.Stderr, "warden-sandbox is the init and stage of warden's sandboxes, started by warden; run `warden exec -- CMD` instead")
	os.Exit(2)
}
