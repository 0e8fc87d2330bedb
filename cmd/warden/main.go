// Command warden is the security gate every action of an AI agent passes
// through. See `warden --help`.
package main

import (
	"os"

	"github.com/agentwarden/warden/cli"
)

func main() { os.Exit(cli.Run()) }
