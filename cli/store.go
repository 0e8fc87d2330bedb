package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
)

// logStore is the audit store as the front end uses it.
type logStore interface {
	warden.AuditStore
	Close() error
}

// store opens the home's database alone, without reading the policy file:
// reading the log, verifying it and recording security events must work even
// when the policy is broken.
func (e *env) store(ctx context.Context) (logStore, error) {
	home, err := e.homeDir()
	if err != nil {
		return nil, err
	}
	return app.OpenLogStore(ctx, home, e.storeDSN)
}

// entries reads the audit rows that the flags select.
func (e *env) entries(c *cobra.Command, f *auditFlags) ([]warden.AuditEntry, warden.AuditFilter, logStore, error) {
	af, err := f.filter(c, time.Now())
	if err != nil {
		return nil, af, nil, err
	}
	s, err := e.store(c.Context())
	if err != nil {
		return nil, af, nil, err
	}
	rows, err := s.Entries(c.Context(), af)
	if err != nil {
		s.Close()
		return nil, af, nil, warden.Errorf(warden.EUnavailable, "read the audit log").Wrap(err)
	}
	return rows, af, s, nil
}

// event records a security event in the home's log. When the log is lost
// (its database deleted or replaced), the event is kept in the spool, which
// enters the new chain at recovery, and a warning says so: turning the
// emergency stop on must not fail for want of an audit log.
func (e *env) event(ctx context.Context, typ string, sev warden.Severity, summary string, meta []byte) error {
	s, err := e.store(ctx)
	if err != nil && app.AuditLost(err) {
		home, herr := e.homeDir()
		if herr != nil {
			return err
		}
		if serr := app.SpoolEvent(home, time.Now(), typ, sev, summary, meta); serr != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "warning: %s\nthe %s event is kept in the spool until the audit log is recovered\n", warden.UserMessage(err), typ)
		return nil
	}
	if err != nil {
		return err
	}
	defer s.Close()
	return app.AppendEvent(ctx, s, time.Now(), typ, sev, summary, meta)
}
