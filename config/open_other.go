//go:build !unix

package config

// openNonBlocking is 0 where opening cannot wait for a writer.
const openNonBlocking = 0
