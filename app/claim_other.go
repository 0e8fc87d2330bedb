//go:build !unix

package app

import "os"

// claimWorld: no long-lived sandbox runs here.
func (a *App) claimWorld(string) *os.File { return nil }
