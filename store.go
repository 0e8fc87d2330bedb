package warden

import (
	"context"
	"time"
)

// AuditStore is the append-only, hash-chained audit log. Implementations enforce
// append-only in the database itself (UPDATE and DELETE fail).
//
// Errors: every method returns an error only when it could not do what it says;
// after an error from Record, nothing of the entry (and no debit) was stored.
type AuditStore interface {
	// Record durably appends e (its stages included), chained to the previous
	// row, filling e.Seq, e.PrevHash and e.Hash. A store may first write e to a
	// durable journal and chain it later (the SQLite store's spool); then those
	// three stay zero, and every read of the store chains it first. Either way,
	// once Record returns nil the entry survives a crash. When debit is non-nil, the store
	// first checks, in the same transaction, that the ledger's spend since
	// debit.Since plus debit.Amount stays within debit.Cap; if so it debits the
	// ledger with the entry's trace id, and if not it stores nothing and returns a
	// *CapExceededError. The check and the debit are atomic across processes.
	Record(ctx context.Context, e *AuditEntry, debit *Debit) error
	// RecordBatch appends entries in one transaction (group commit), in order.
	RecordBatch(ctx context.Context, es []*AuditEntry) error
	// Entries returns the entries matching f, in log order.
	Entries(ctx context.Context, f AuditFilter) ([]AuditEntry, error)
	// AppendEvent durably appends a security event to its own chain.
	AppendEvent(ctx context.Context, ev *SecurityEvent) error
	// Events returns the security events matching f, in log order.
	Events(ctx context.Context, f EventFilter) ([]SecurityEvent, error)
	// Verify walks both chains and reports the first row that does not verify.
	Verify(ctx context.Context) (VerifyReport, error)
}

// Ledger reads the daily spend ledger. Debits are written only through
// AuditStore.Record, atomically with the decision that allowed them.
type Ledger interface {
	// SpentSince returns the sum of ledger amounts recorded at or after t,
	// less the reservations released since.
	SpentSince(ctx context.Context, t time.Time) (USD, error)
	// Release gives back the reservations that the decision traceID took
	// (its spend debit and its rate slot), because what it allowed did not
	// happen (a failed or rejected execution, a denied approval). Releasing
	// again does nothing; a trace with neither is an *Error with code
	// ENotFound. The release is durable when it returns.
	Release(ctx context.Context, traceID, reason string, at time.Time) error
}

// SpendWindow is the span the daily spend cap covers: a rolling 24 hours.
const SpendWindow = 24 * time.Hour
