// Package audit holds the backend-neutral parts of warden's tamper-evident audit
// log: the canonical byte encoding of audit entries and security events, the
// hash chain over them, a Verifier that walks a chain and names the first row
// that does not verify, and the normalisation every store applies before it
// hashes and stores a row.
//
// A store (package sqlite, later postgres) owns the rows; this package owns what
// a row's hash means, so every backend chains and verifies identically. It
// imports only the root package warden and the standard library.
//
// # Chain
//
// Each chain (audit entries, security events) starts at GenesisHash. Row n's
// hash is the hex SHA-256 of row n-1's hash (64 ASCII hex digits) followed by
// row n's canonical encoding; row n stores that predecessor hash as PrevHash.
// Seq starts at 1 and has no gaps. Altering, removing, inserting or reordering
// any row therefore breaks the chain at that row or the next one. Removing rows
// from the end cannot be detected from the rows alone.
package audit
