package service_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/signing/policy"
)

func nativeTx(id string, valueWei string) []byte {
	return []byte(fmt.Sprintf(`{"method":"eth_signTransaction","requestId":%q,"tx":{"type":2,"chainId":8453,"to":%q,"value":%q,"data":"0x","gas":"21000","maxFeePerGas":"2000000000","maxPriorityFeePerGas":"100000000","nonce":1}}`,
		id, corpusRecipient, valueWei))
}

// TestTokenTransferInCalldataCaught: a 10,000 USDC transfer has a native
// value of 0; decoding its calldata values it at $10,000, which the global
// per-transaction max and the daily cap refuse, and it never reaches the key.
func TestTokenTransferInCalldataCaught(t *testing.T) {
	h := newHarness(t, corpusSettings(nil))
	data := "0xa9059cbb" + strings.Repeat("0", 24) + strings.TrimPrefix(corpusRecipient, "0x") + fmt.Sprintf("%064x", 10_000_000_000)
	body := fmt.Sprintf(`{"method":"eth_signTransaction","tx":{"type":2,"chainId":8453,"to":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","value":"0","data":%q,"gas":"65000","maxFeePerGas":"1000000000","maxPriorityFeePerGas":"100000000","nonce":7}}`, data)
	res, err := h.svc.Submit(ctx, []byte(body), serviceOptions())
	if err != nil {
		t.Fatal(err)
	}
	if rule := res.PolicyDecision.Rule; res.Success || res.PolicyDecision.Verdict != "deny" || rule != "safety.max_transaction" && rule != "safety.daily_cap" {
		t.Fatalf("10,000 USDC transfer: %+v; want a deny by the money limits", res.PolicyDecision)
	}
	if !strings.Contains(res.PolicyDecision.Reason, "10000") {
		t.Errorf("reason %q does not name the $10,000 value", res.PolicyDecision.Reason)
	}
	if h.signer.signed.Load() != 0 {
		t.Error("the refused transfer reached the key")
	}
}

// TestBadChecksumRefused: a mixed-case address with a wrong EIP-55 checksum
// is a mistyped or altered address, refused with a reason that says so.
func TestBadChecksumRefused(t *testing.T) {
	h := newHarness(t, corpusSettings(nil))
	body := strings.Replace(string(nativeTx("r1", "1000")), corpusRecipient, "0x7a3F9e2b5C1d4E6f8A0b2C4d6E8f0A1b3C5d9E21", 1)
	res, err := h.svc.Submit(ctx, []byte(body), serviceOptions())
	if err != nil {
		t.Fatal(err)
	}
	if res.Success || res.PolicyDecision.Rule != "signing.invalid" || !strings.Contains(res.Error, "checksum") {
		t.Fatalf("bad checksum: %+v; want a signing.invalid deny naming the checksum", res)
	}
}

// TestConcurrentRequestsNeverExceedHourlyLimit: 60 requests at once, all
// within policy, never get more than 10 signatures in the hour.
func TestConcurrentRequestsNeverExceedHourlyLimit(t *testing.T) {
	h := newHarness(t, corpusSettings(nil))
	var (
		wg             sync.WaitGroup
		mu             sync.Mutex
		signed, denied int
		errs           []error
	)
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := h.svc.Submit(ctx, nativeTx(fmt.Sprint("c-", i), "1000000000000000"), serviceOptions())
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				errs = append(errs, err)
			case res.Success:
				signed++
			case res.PolicyDecision.Rule == "signing.rate":
				denied++
			default:
				errs = append(errs, fmt.Errorf("unexpected result %+v", res))
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	if signed != 10 || denied != 50 || h.signer.signed.Load() != 10 {
		t.Fatalf("signed %d (key used %d times), rate-denied %d; want 10, 10 and 50", signed, h.signer.signed.Load(), denied)
	}
}

// TestPendingExpiresNeverSigned: an ask nobody answers expires, is refused,
// never reaches the key, and gives its held slot back.
func TestPendingExpiresNeverSigned(t *testing.T) {
	s := corpusSettings(nil)
	s.PerHour = 1
	h := newHarness(t, s)
	res, err := h.svc.Submit(ctx, nativeTx("big", "50000000000000000"), serviceOptions())
	if err != nil || !res.Pending {
		t.Fatalf("ask: %+v %v", res, err)
	}
	// The held slot fills the hour (1 per hour here).
	if r2, err := h.svc.Submit(ctx, nativeTx("small", "1000"), serviceOptions()); err != nil || r2.PolicyDecision.Rule != "signing.rate" {
		t.Fatalf("while the ask holds the only slot: %+v %v; want a signing.rate deny", r2.PolicyDecision, err)
	}
	if ps, err := h.svc.Pending(ctx); err != nil || len(ps) != 1 || ps[0].RequestID != "big" {
		t.Fatalf("Pending = %+v, %v; want the one ask", ps, err)
	}
	h.clock.Add(5*time.Minute + time.Second)
	if err := h.svc.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := h.svc.Status(ctx, res.PolicyDecision.ApprovalID)
	if err != nil {
		t.Fatal(err)
	}
	if out.Success || out.Pending || out.PolicyDecision.Verdict != "deny" {
		t.Fatalf("after expiry: %+v; want a deny", out)
	}
	if h.signer.signed.Load() != 0 {
		t.Fatal("an expired request was signed")
	}
	if ps, _ := h.svc.Pending(ctx); len(ps) != 0 {
		t.Errorf("still pending after expiry: %+v", ps)
	}
	if r3, err := h.svc.Submit(ctx, nativeTx("after", "1000"), serviceOptions()); err != nil || !r3.Success {
		t.Fatalf("after the expired ask gave its slot back: %+v %v", r3, err)
	}
	if h.eventCount(warden.EventSigningRejected) != 2 || h.eventCount(warden.EventSigningApproved) != 1 || h.eventCount(warden.EventSigningSubmitted) != 3 {
		t.Errorf("events %v", h.events)
	}
}

// TestKillSwitchAfterAsk: an ask approved after the kill switch went on is
// re-checked, refused and never signed.
func TestKillSwitchAfterAsk(t *testing.T) {
	h := newHarness(t, corpusSettings(nil))
	res, err := h.svc.Submit(ctx, nativeTx("big", "50000000000000000"), serviceOptions())
	if err != nil || !res.Pending {
		t.Fatalf("ask: %+v %v", res, err)
	}
	h.kill.Store(true)
	out, err := h.svc.Answer(ctx, res.PolicyDecision.ApprovalID, true, whoOperator)
	if err != nil {
		t.Fatal(err)
	}
	if out.Success || h.signer.signed.Load() != 0 {
		t.Fatalf("approved under the kill switch: %+v, key used %d times", out, h.signer.signed.Load())
	}
}

// TestRejectReleasesSlot: an operator's reject refuses the ask and gives its
// slot back at once.
func TestRejectReleasesSlot(t *testing.T) {
	s := corpusSettings(nil)
	s.PerHour = 1
	h := newHarness(t, s)
	res, err := h.svc.Submit(ctx, nativeTx("big", "50000000000000000"), serviceOptions())
	if err != nil || !res.Pending {
		t.Fatalf("ask: %+v %v", res, err)
	}
	out, err := h.svc.Answer(ctx, res.PolicyDecision.ApprovalID, false, whoOperator)
	if err != nil || out.Success || out.PolicyDecision.Verdict != "deny" {
		t.Fatalf("reject: %+v %v", out, err)
	}
	if r2, err := h.svc.Submit(ctx, nativeTx("next", "1000"), serviceOptions()); err != nil || !r2.Success {
		t.Fatalf("after the reject: %+v %v", r2, err)
	}
	if _, err := h.svc.Answer(ctx, res.PolicyDecision.ApprovalID, true, whoOperator); warden.ErrorCodeOf(err) != warden.EConflict {
		t.Errorf("approving an ended request: %v, want EConflict", err)
	}
}

// failingPrices is a price source that is down.
type failingPrices struct{}

func (failingPrices) Price(context.Context, finance.Token) (finance.Price, error) {
	return finance.Price{}, fmt.Errorf("price source down")
}

// TestNativeValueWithoutPriceAsks: when the price source fails, native
// value on a priced chain is not waved through under the USD caps; a human
// confirms it.
func TestNativeValueWithoutPriceAsks(t *testing.T) {
	h := newHarness(t, corpusSettings(nil))
	h.svc.Valuer = policy.Valuer{Prices: failingPrices{}}
	res, err := h.svc.Submit(ctx, nativeTx("np", "5000000000000000"), serviceOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Pending || res.PolicyDecision.Rule != "signing.unvalued" || h.signer.signed.Load() != 0 {
		t.Fatalf("native value with the price source down: %+v; want a signing.unvalued ask, unsigned", res)
	}
}
