//go:build !unix

package fsguard

// publicSystemFile reports false: who may read a file is not read from its
// mode on this system, so no file is taken to be public.
func publicSystemFile(string) bool { return false }

// publicListing reports false, as publicSystemFile does.
func publicListing(string, []string) bool { return false }
