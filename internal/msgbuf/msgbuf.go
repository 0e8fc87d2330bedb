// Package msgbuf lends the buffers a whole message of a Unix socket of
// SOCK_SEQPACKET (one read, one message, up to Size bytes) is read into.
// warden's supervisors and sandbox inits read one such message for every
// command they run; a fresh 1 MiB buffer for each was cleared, then left to
// the garbage collector, on the path of every command.
package msgbuf

import "sync"

// Size is the largest message read: execwire's requests and the sandbox's
// control messages.
const Size = 1 << 20

var pool = sync.Pool{New: func() any { return new([Size]byte) }}

// Get lends a buffer. What was read into it is to be decoded (copied) before
// Put gives it back.
func Get() *[Size]byte { return pool.Get().(*[Size]byte) }

// Put gives back a buffer Get lent; nothing may use it after.
func Put(b *[Size]byte) { pool.Put(b) }
