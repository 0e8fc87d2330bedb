package service_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/approval"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/gate"
	"github.com/agentwarden/warden/pipeline"
	"github.com/agentwarden/warden/safety"
	"github.com/agentwarden/warden/signing"
	"github.com/agentwarden/warden/signing/policy"
	"github.com/agentwarden/warden/signing/service"
	"github.com/agentwarden/warden/sqlite"
)

var ctx = context.Background()

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// prices are the test's USD prices: USDC 1, ETH 3000.
type prices struct{}

func (prices) Price(_ context.Context, t finance.Token) (finance.Price, error) {
	switch t.AssetID {
	case "USDC":
		return finance.Price{USD: 1}, nil
	case "ETH":
		return finance.Price{USD: 3000}, nil
	}
	return finance.Price{}, fmt.Errorf("no price for %s", t)
}

// fakeSigner stands in for the key in policy tests: its signatures are a
// hash of what it signs, and it counts what it signed. Real signatures are
// verified in signing/keystore and the end-to-end test.
type fakeSigner struct {
	addr   signing.Address
	signed atomic.Int64
}

func (f *fakeSigner) Address() signing.Address { return f.addr }

func (f *fakeSigner) SignMessage(_ context.Context, msg []byte) ([]byte, error) {
	f.signed.Add(1)
	h := sha256.Sum256(msg)
	return append(h[:], make([]byte, 33)...), nil
}

func (f *fakeSigner) SignTransaction(_ context.Context, tx *signing.Tx) (signing.SignedTx, error) {
	f.signed.Add(1)
	h := sha256.Sum256(tx.Data)
	return signing.SignedTx{Raw: append([]byte{2}, h[:]...), Hash: h, From: f.addr}, nil
}

// signerAddr is the corpus's wallet, the address its sign-in message names.
var signerAddr = mustAddr("0x2c7536E3605D9C16a7a3D7b1898e529396a65c23")

func mustAddr(s string) signing.Address {
	a, err := signing.ParseAddress(s)
	if err != nil {
		panic(err)
	}
	return a
}

type harness struct {
	svc    *service.Service
	store  *sqlite.Store
	queue  *approval.Queue
	clock  *clock
	signer *fakeSigner
	kill   atomic.Bool
	events []string
	mu     sync.Mutex
}

// killable is the kill switch read at decision time, so a test can flip it
// between an ask and its approval.
type killable struct{ h *harness }

func (k killable) Name() string { return "kill-switch" }

func (k killable) Check(ctx context.Context, req *warden.Request) (warden.Decision, error) {
	return safety.KillSwitch{Active: k.h.kill.Load()}.Check(ctx, req)
}

// newHarness builds the service on a real SQLite store, approval queue and
// gate, with the global stages ($500 per transaction, $2,000 a day) and the
// signing stages of s.
func newHarness(t testing.TB, s policy.Settings) *harness {
	t.Helper()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	h := &harness{store: store, clock: &clock{t: time.Date(2026, 11, 21, 17, 0, 0, 0, time.UTC)}, signer: &fakeSigner{addr: signerAddr}}
	spend := safety.SpendCap{Cap: 2000 * warden.MicrosPerDollar, Ledger: store, Now: h.clock.Now}
	p := pipeline.New(pipeline.Config{
		Global: []warden.Stage{killable{h}, spend, safety.TxMax{Max: 500 * warden.MicrosPerDollar}, safety.TierGate{}, safety.ManualOnly{}},
		Capabilities: map[string][]warden.Stage{
			warden.CapSign: policy.Stages(s, signerAddr, store, h.clock.Now),
		},
	})
	var n atomic.Int64
	newID := func() string { return fmt.Sprintf("id-%d", n.Add(1)) }
	events := func(_ context.Context, typ string, _ warden.Severity, trace, summary string, _ map[string]any) error {
		h.mu.Lock()
		h.events = append(h.events, typ+" "+trace)
		h.mu.Unlock()
		return nil
	}
	h.queue = &approval.Queue{Store: store, Decider: func() approval.Decider { return p }, Events: approval.EventFunc(events), Now: h.clock.Now, NewID: newID}
	g := &gate.Gate{Decider: p, Store: store, Debit: s.Debit(spend.Debit), Now: h.clock.Now, NewID: newID, Approvals: h.queue}
	h.svc = &service.Service{Gate: func() *gate.Gate { return g }, Signer: h.signer, Valuer: policy.Valuer{Prices: prices{}}, Events: events, NewID: newID}
	return h
}

// seed takes n spent signing slots at now-ago, and held ones when hold.
func (h *harness) seed(t testing.TB, n int, ago time.Duration, hold bool, key string) {
	t.Helper()
	for i := range n {
		at := h.clock.Now().Add(-ago)
		slot := &warden.RateSlot{Kind: policy.Kind, Key: key} // seeds are past state: no limit
		if hold {
			slot.HoldUntil = h.clock.Now().Add(4 * time.Minute)
		}
		e := &warden.AuditEntry{TraceID: fmt.Sprintf("seed-%s-%d-%d", key, ago, i), CreatedAt: at, Capability: warden.CapSign,
			Action: signing.MethodSignTransaction, Verdict: warden.Allow, Reason: "seeded", Rule: "test.seed"}
		if err := h.store.Record(ctx, e, &warden.Debit{Slot: slot}); err != nil {
			t.Fatalf("seed slot: %v", err)
		}
	}
}

func (h *harness) eventCount(prefix string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := 0
	for _, e := range h.events {
		if len(e) >= len(prefix) && e[:len(prefix)] == prefix {
			c++
		}
	}
	return c
}

func serviceOptions() service.Options { return service.Options{} }

var whoOperator = approval.Who{Name: "operator", Channel: "console"}
