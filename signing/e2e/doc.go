// Package e2e holds the signing service's end-to-end test: warden serve with
// an unlocked key signs, over its HTTP API, a transfer that a real EVM node
// on loopback (internal/devchain) then mines, and refuses what its policy
// refuses before anything reaches the node. It has no code of its own.
package e2e
