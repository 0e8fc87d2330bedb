package app

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/redact"
	"github.com/agentwarden/warden/sqlite"
)

// File names of the audit log's chain anchor and checkpoint key in a warden
// home. They sit beside the database but are not named after it, so that
// deleting warden.db* leaves them to tell what was lost.
const (
	AnchorFile = "audit.anchor"
	KeyFile    = "audit.key"
)

// AnchorPath is the chain anchor's path: what the home has recorded.
func (h Home) AnchorPath() string { return filepath.Join(string(h), AnchorFile) }

// KeyPath is the checkpoint key's path (mode 0600; never printed).
func (h Home) KeyPath() string { return filepath.Join(string(h), KeyFile) }

// storeOptions are the options every store of the home opens with.
func (h Home) storeOptions() sqlite.Options {
	return sqlite.Options{Anchor: h.AnchorPath(), Key: h.KeyPath()}
}

// deferredStore is the home's store, opening its database only when it
// must (see sqlite.OpenDeferredWith).
func (h Home) deferredStore() *sqlite.Store {
	return sqlite.OpenDeferredWith(h.DatabasePath(), h.storeOptions())
}

// openStore opens the home's database with opt on top of the home's
// anchor and key. A refusal that is already a *warden.Error (a lost or
// replaced log, a newer schema) is returned as it is.
func openStore(ctx context.Context, home Home, opt sqlite.Options) (*sqlite.Store, error) {
	o := home.storeOptions()
	o.Create, o.Inspect, o.LongLived = opt.Create, opt.Inspect, opt.LongLived
	s, err := sqlite.OpenWith(ctx, home.DatabasePath(), o)
	if err != nil {
		var we *warden.Error
		if errors.As(err, &we) {
			return nil, err
		}
		return nil, warden.Errorf(warden.EUnavailable, "open the audit database %s", home.DatabasePath()).Wrap(err).
			WithHint("run `warden init` to create the home, and check that the directory is writable")
	}
	return s, nil
}

// VerifyAudit checks the home's audit log without trusting it: the chains,
// the keyed checkpoints, the anchor and the spool. Unlike OpenStore it
// does not refuse a log that lost rows or was replaced; the report names
// what is missing and the first row that differs.
func VerifyAudit(ctx context.Context, home Home) (warden.VerifyReport, error) {
	return VerifyAuditWith(ctx, home, "")
}

// VerifyAuditWith is VerifyAudit of the fleet's database when the policy
// (or override, --store) names one: its chains, their keyed checkpoints
// and the spend ledger's running totals.
func VerifyAuditWith(ctx context.Context, home Home, override string) (warden.VerifyReport, error) {
	p, err := policyForStore(home)
	if err != nil {
		return warden.VerifyReport{}, err
	}
	f, err := fleetOf(home, p, override)
	if err != nil {
		return warden.VerifyReport{}, err
	}
	if f != nil {
		pg, err := f.open(ctx, false)
		if err != nil {
			return warden.VerifyReport{}, err
		}
		defer pg.Close()
		rep, err := pg.Verify(ctx)
		if err != nil {
			return rep, warden.Errorf(warden.EUnavailable, "verify the fleet's audit log").Wrap(err)
		}
		return rep, nil
	}
	s, err := openStore(ctx, home, sqlite.Options{Inspect: true})
	if err != nil {
		return warden.VerifyReport{}, err
	}
	defer s.Close()
	rep, err := s.Verify(ctx)
	if err != nil {
		return rep, warden.Errorf(warden.EUnavailable, "verify the audit log").Wrap(err)
	}
	return rep, nil
}

// RecoverAudit is `warden audit recover`: it brings back into use a home
// whose audit log is not what its anchor recorded, keeping what is left
// aside and recording the loss as the first rows of a new chain (or, when
// only the spool lost its tail, in the chain as it goes on). by names who
// recovered. It refuses a log that verifies.
func RecoverAudit(ctx context.Context, home Home, by string, now time.Time) (sqlite.RecoverResult, error) {
	if _, err := os.Stat(home.PolicyPath()); err != nil {
		return sqlite.RecoverResult{}, warden.Errorf(warden.EInvalid, "%s is not a warden home: it has no policy file", home.Abs()).Wrap(err).
			WithHint("`warden init` creates a new home")
	}
	if p, err := policyForStore(home); err == nil && p.Store.DSN != "" {
		return sqlite.RecoverResult{}, warden.Errorf(warden.EInvalid, "this home's audit log is the fleet's PostgreSQL database, which `warden audit recover` does not touch").
			WithHint("a fleet's database is restored from its backups (docs/fleet.md); `warden audit verify` says what it holds")
	}
	res, err := sqlite.Recover(ctx, home.DatabasePath(), home.storeOptions(), by, now)
	if err != nil {
		var we *warden.Error
		if errors.As(err, &we) {
			return res, err
		}
		return res, warden.Errorf(warden.EUnavailable, "recover the audit log").Wrap(err)
	}
	return res, nil
}

// AuditLost reports whether err is a refusal of a home whose audit log is
// not what its anchor recorded (see RecoverAudit).
func AuditLost(err error) bool { return errors.Is(err, sqlite.ErrLost) }

// SpoolEvent records a redacted security event in the home's spool whatever
// state its audit log is in; it enters the chain when the home is
// recovered. For the events that must not be lost with the log, such as
// the emergency stop turned on.
func SpoolEvent(home Home, at time.Time, typ string, sev warden.Severity, summary string, meta json.RawMessage) error {
	ev := &warden.SecurityEvent{ID: NewID(), CreatedAt: at, Type: typ, Severity: sev, Summary: redact.String(summary)}
	if len(meta) > 0 {
		ev.Metadata = redact.JSON(meta)
	}
	if err := sqlite.SpoolEvent(home.DatabasePath(), home.storeOptions(), ev); err != nil {
		return warden.Errorf(warden.EUnavailable, "could not record the %s security event", typ).Wrap(err)
	}
	return nil
}
