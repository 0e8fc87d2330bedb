//go:build !linux

package fsguard

// stampsSupported says whether lstamp can tell changes here: not on this
// system (ctime is read on Linux only), so NewCached always compiles.
const stampsSupported = false

func lstamp(string, bool) stamp { return stamp{errno: 1} }
