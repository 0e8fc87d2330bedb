package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// ApprovalChannel is the LISTEN/NOTIFY channel on which every change to an
// approval (created, answered, expired) is announced, with the approval's
// id as payload, when its transaction commits.
const ApprovalChannel = "warden_approvals"

// notify announces the approval id to every listening daemon when tx
// commits (NOTIFY is transactional).
func notify(ctx context.Context, tx pgx.Tx, id string) error {
	_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, ApprovalChannel, col(id))
	return err
}
