package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/gate"
	"github.com/agentwarden/warden/httpapi"
	"github.com/agentwarden/warden/sandbox"
	"github.com/agentwarden/warden/signing"
	"github.com/agentwarden/warden/signing/keystore"
	"github.com/agentwarden/warden/signing/policy"
	"github.com/agentwarden/warden/signing/service"
)

// SigningSettings is the signing policy of p.
func SigningSettings(p *config.Policy) policy.Settings {
	s := p.Signing
	return policy.Settings{
		ChainIDs: s.ChainIDs, MaxValue: s.MaxValue, ApprovalAbove: s.ApprovalAbove, MaxFee: s.MaxFee,
		PerHour: s.PerHour, PerDay: s.PerDay, PendingPerRequester: s.PendingPerRequester,
		Recipients: s.Recipients, Contracts: s.Contracts, Selectors: s.Selectors, MessageDomains: s.MessageDomains,
		RequireHuman: s.RequireHuman, Legacy: s.Legacy, UnsafeContractCreation: s.UnsafeContractCreation,
	}
}

// KeystoreDir is where the home's signing keys are: signing.keystore, or
// $WARDEN_HOME/keys.
func KeystoreDir(home Home, p *config.Policy) string {
	if p.Signing.Keystore != "" {
		return expandHome(p.Signing.Keystore)
	}
	return filepath.Join(string(home), "keys")
}

// SignerAddress is the address that signs: signing.address, or the only key
// in the keystore. ok is false when there is no key (or several and none is
// named); the signing stages then refuse every from and sign-in.
func SignerAddress(home Home, p *config.Policy) (a signing.Address, ok bool) {
	if p.Signing.Address != "" {
		a, err := signing.ParseAddress(p.Signing.Address)
		return a, err == nil
	}
	es, err := keystore.List(KeystoreDir(home, p))
	if err != nil || len(es) != 1 {
		return a, false
	}
	return es[0].Address, true
}

// signingStages are the sign capability's stages under p.
func signingStages(home Home, p *config.Policy, slots warden.SlotReader, now func() time.Time) []warden.Stage {
	addr, _ := SignerAddress(home, p)
	return policy.Stages(SigningSettings(p), addr, slots, now)
}

// Passphrase reads the passphrase that unlocks the signing key: from
// signing.passphraseFile, the variable signing.passphraseEnv names, or
// prompt (the daemon's terminal); nil prompt means there is none.
func Passphrase(p *config.Policy, prompt func(msg string) ([]byte, error)) ([]byte, error) {
	switch {
	case p.Signing.PassphraseFile != "":
		return keystore.FromFile(expandHome(p.Signing.PassphraseFile))
	case p.Signing.PassphraseEnv != "":
		return keystore.FromEnv(p.Signing.PassphraseEnv, os.LookupEnv)
	case prompt != nil:
		return prompt("passphrase of the signing key: ")
	}
	return nil, warden.Errorf(warden.EInvalid, "the signing key cannot be unlocked: no passphrase source").
		WithHint("set signing.passphraseFile or signing.passphraseEnv, or start `warden serve` on a terminal to be asked")
}

// CheckSetting refuses a value for key that `warden serve` would refuse
// when it starts: a signing.passphraseFile that is missing, not a regular
// file, open to group or others (mode 0644), empty or too large. "" (no
// file) is accepted. Other keys are checked by config.Set.
func CheckSetting(key, value string) error {
	if !strings.EqualFold(key, "signing.passphraseFile") {
		return nil
	}
	path := strings.Trim(strings.TrimSpace(value), `"'`)
	if path == "" {
		return nil
	}
	pass, err := keystore.FromFile(expandHome(path))
	clear(pass)
	if err == nil {
		return nil
	}
	e := warden.Errorf(warden.EInvalid, "cannot set signing.passphraseFile: %s, and `warden serve` would refuse it", warden.UserMessage(err))
	var we *warden.Error
	if errors.As(err, &we) && we.Hint != "" {
		e = e.WithHint(we.Hint)
	}
	return e
}

// UnlockSigner opens the home's signing key once, for the daemon's life.
// nil, nil means the home has no key: the daemon serves no signing. The
// unlock takes about a second (scrypt); how long it took is returned.
func UnlockSigner(home Home, p *config.Policy, prompt func(string) ([]byte, error)) (*keystore.Key, time.Duration, error) {
	dir := KeystoreDir(home, p)
	es, err := keystore.List(dir) // a missing directory holds no keys
	if err != nil {
		return nil, 0, err
	}
	if len(es) == 0 {
		return nil, 0, nil
	}
	var addr *signing.Address
	if p.Signing.Address != "" {
		a, err := signing.ParseAddress(p.Signing.Address)
		if err != nil {
			return nil, 0, err
		}
		addr = &a
	}
	pass, err := Passphrase(p, prompt)
	if err != nil {
		return nil, 0, err
	}
	defer clear(pass)
	start := time.Now()
	k, err := keystore.Open(dir, addr, pass)
	if err != nil {
		return nil, 0, err
	}
	return k, time.Since(start), nil
}

// signingUnavailable starts the daemon without signing because the key could
// not be unlocked (why): the signing endpoints refuse saying so, and a
// critical event is recorded. An error means the event could not be recorded,
// and the daemon must not start.
func (d *Daemon) signingUnavailable(ctx context.Context, why error) error {
	msg := warden.UserMessage(why)
	d.Server.SigningOff = warden.Errorf(warden.EUnavailable, "signing is off in this warden: its signing key could not be unlocked when `warden serve` started (%s), so nothing is signed", msg).
		WithHint("set signing.passphraseFile (mode 0600) or signing.passphraseEnv, or start `warden serve` on a terminal to be asked; then restart it")
	d.App.Log.Error("the signing key could not be unlocked; serving everything but signing", "error", msg)
	meta, _ := json.Marshal(map[string]string{"error": msg})
	if err := AppendEvent(ctx, d.store, d.App.Now(), warden.EventSigningUnavailable, warden.SevCritical,
		"warden serve started without signing: the signing key could not be unlocked: "+msg, meta); err != nil {
		return warden.Errorf(warden.EUnavailable, "could not record that signing is off, so the daemon does not start").Wrap(err)
	}
	return nil
}

// newSigning is the daemon's signing service over the current gate.
func (d *Daemon) newSigning(k *keystore.Key) *service.Service {
	svc := &service.Service{
		Gate:   func() *gate.Gate { return d.current().gate },
		Signer: k,
		Events: func(ctx context.Context, typ string, sev warden.Severity, traceID, summary string, meta map[string]any) error {
			return d.Queue.Events(ctx, typ, sev, traceID, summary, meta)
		},
		NewID: NewID,
	}
	if b, err := d.App.Backend(); err == nil {
		svc.Valuer = policy.Valuer{Prices: b}
	} else {
		d.App.Log.Warn("signing requests cannot be valued in USD: the finance backend is unavailable", "error", warden.UserMessage(err))
	}
	return svc
}

// settleSigning settles signing requests whose approvals ended from any
// channel, so that an ended ask never keeps its slot.
func (d *Daemon) settleSigning(ctx context.Context) {
	if d.Signing == nil {
		return
	}
	if err := d.Signing.Settle(ctx); err != nil && ctx.Err() == nil {
		d.App.Log.Warn("could not settle signing requests", "error", warden.UserMessage(err))
	}
}

// describeUnlock is the log line of a key unlocked at start.
func describeUnlock(k *keystore.Key, took time.Duration) string {
	return fmt.Sprintf("signing key %s unlocked in %s", signing.Checksum(k.Address()), took.Round(time.Millisecond))
}

// sandboxSigner is the signing endpoint of a `warden exec --signer` run: a
// fresh token for this sandbox alone, and a forwarder of the agent's signing
// calls to the running daemon, which holds the key.
func (a *App) sandboxSigner() (sandbox.Signer, []string, error) {
	sock := a.Home.SocketPath(a.Policy)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := httpapi.UnixClient(sock, "").Health(ctx); err != nil {
		return nil, nil, warden.Errorf(warden.EUnavailable, "--signer needs the warden daemon, which holds the signing key, and it is not running at %s", sock).
			WithHint("start it with `warden serve` (after `warden signer init`)")
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, nil, err
	}
	token := hex.EncodeToString(b)
	return handlerServer{httpapi.SigningForwarder(sock, token)}, sandbox.SignerEnv(token), nil
}

// handlerServer serves an HTTP handler on the listener a sandbox hands out.
type handlerServer struct{ h http.Handler }

func (s handlerServer) Serve(l net.Listener) error {
	srv := &http.Server{Handler: s.h, ReadHeaderTimeout: 10 * time.Second}
	err := srv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
