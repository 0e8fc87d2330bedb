// Package crc32c computes CRC-32C (Castagnoli) checksums, the same values as
// hash/crc32 with crc32.MakeTable(crc32.Castagnoli), without making every
// short-lived warden process pay for hash/crc32's Castagnoli tables.
//
// hash/crc32 builds those tables on the first MakeTable(Castagnoli): with
// SSE4.2 it runs the CRC instruction over ~1.5 MB of zeros to fill them,
// about 0.16 ms on the CI-class machine, more than a whole policy-cache read.
// A one-shot `warden check` checksums a few KB (the policy cache's body), so
// Checksum first goes byte by byte through a 1 KB table built in a few
// microseconds, and switches to hash/crc32's hardware path for good once the
// process has checksummed more than a budget that costs about as much as the
// tables (long inputs and long-lived processes: the daemon, the Postgres
// journal).
package crc32c

import (
	"hash/crc32"
	"sync"
	"sync/atomic"
)

// budget is how many bytes a process checksums byte by byte before it builds
// hash/crc32's tables: at ~1 ns a byte, about what building them costs.
const budget = 64 << 10

// bytewise counts the bytes checksummed byte by byte so far.
var bytewise atomic.Int64

// simple is the 256-entry CRC-32C table (reflected polynomial), built on
// first use. Being a table of its own, not hash/crc32's, crc32.Update walks
// it byte by byte and never builds the hardware tables.
var simple = sync.OnceValue(func() *crc32.Table {
	t := new(crc32.Table)
	for i := range t {
		crc := uint32(i)
		for range 8 {
			if crc&1 == 1 {
				crc = crc>>1 ^ crc32.Castagnoli
			} else {
				crc >>= 1
			}
		}
		t[i] = crc
	}
	return t
})

// fast is hash/crc32's Castagnoli table: passing it selects the hardware
// path (SSE4.2, ARMv8 CRC32, …). Built on first use.
var fast = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// Checksum returns the CRC-32C checksum of b. It is safe for concurrent use.
func Checksum(b []byte) uint32 {
	return Update(0, b)
}

// Update returns the CRC-32C checksum crc updated with the bytes of b, as
// crc32.Update with the Castagnoli table.
func Update(crc uint32, b []byte) uint32 {
	if len(b) < budget && bytewise.Load() < budget && bytewise.Add(int64(len(b))) <= budget {
		return crc32.Update(crc, simple(), b)
	}
	return crc32.Update(crc, fast(), b)
}
