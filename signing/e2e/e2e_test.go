package e2e_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/httpapi"
	"github.com/agentwarden/warden/internal/devchain"
	"github.com/agentwarden/warden/signing"
	"github.com/agentwarden/warden/signing/keystore"
)

const recipient = "0x1111111111111111111111111111111111111111"

// TestSignBroadcastMined: fund warden's address from the dev account, sign a
// transfer through the daemon's API, broadcast it, and see it mined with the
// expected balance change; a denied request never reaches the node; an ask
// is signed only once an operator approves it, and the agent cannot approve.
func TestSignBroadcastMined(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	chain, err := devchain.Start(devchain.Options{ChainID: 1337})
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()

	home := app.Home(filepath.Join(t.TempDir(), "h"))
	if _, err := app.Init(ctx, home, false); err != nil {
		t.Fatal(err)
	}
	passFile := filepath.Join(t.TempDir(), "pass")
	if err := os.WriteFile(passFile, []byte("correct horse battery staple\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, _, err := keystore.Create(filepath.Join(string(home), "keys"), []byte("correct horse battery staple"), keystore.Light)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"signing.passphraseFile": passFile,
		"signing.chainIds":       "[1337]",
		"signing.recipients":     "[" + recipient + "]",
	} {
		if err := config.Set(home.PolicyPath(), k, v); err != nil {
			t.Fatalf("set %s: %v", k, err)
		}
	}
	d, err := app.NewDaemon(ctx, home, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d.ProxyListen = "" // this test needs no egress proxy
	if d.Signing == nil {
		t.Fatal("the daemon did not unlock the key")
	}
	t.Logf("key unlocked in %s (light scrypt)", d.UnlockTime)
	sctx, stop := context.WithCancel(ctx)
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- d.Serve(sctx, func(at app.Listening) { ready <- at.Socket }) }()
	var sock string
	select {
	case sock = <-ready:
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	}
	defer func() {
		stop()
		<-done
		d.Close()
	}()
	agent, op := httpapi.UnixClient(sock, ""), httpapi.UnixClient(sock, d.Operator)

	from := common.Address(addr)
	if _, err := chain.Fund(ctx, from, big.NewInt(1e18)); err != nil {
		t.Fatalf("fund warden's address: %v", err)
	}
	to := common.HexToAddress(recipient)
	tx := func(id string, valueWei *big.Int) []byte {
		nonce, err := chain.PendingNonce(ctx, from)
		if err != nil {
			t.Fatal(err)
		}
		return []byte(fmt.Sprintf(`{"method":"eth_signTransaction","requestId":%q,"tx":{"type":2,"chainId":1337,"to":%q,"value":"%s","data":"0x","gas":"21000","maxFeePerGas":"3000000000","maxPriorityFeePerGas":"1000000000","nonce":%d}}`,
			id, recipient, valueWei, nonce))
	}
	broadcast := func(sig string) {
		t.Helper()
		raw, err := hex.DecodeString(strings.TrimPrefix(sig, "0x"))
		if err != nil {
			t.Fatal(err)
		}
		h, err := chain.SendRaw(ctx, raw)
		if err != nil {
			t.Fatalf("broadcast: %v", err)
		}
		rc, err := chain.WaitMined(ctx, h)
		if err != nil || rc.Status != 1 {
			t.Fatalf("mined: %+v %v", rc, err)
		}
	}
	balance := func() *big.Int {
		b, err := chain.Balance(ctx, to)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	// Within policy: signed, broadcast, mined.
	small := big.NewInt(5e15) // 0.005 ETH
	res, err := agent.Sign(ctx, tx("e2e-1", small), 0)
	if err != nil || !res.Success {
		t.Fatalf("sign 0.005 ETH: %+v %v", res, err)
	}
	if res.From != signing.Checksum(addr) || res.HumanConfirmed {
		t.Errorf("result from %s humanConfirmed %v; want %s, false", res.From, res.HumanConfirmed, signing.Checksum(addr))
	}
	broadcast(res.Signature)
	if b := balance(); b.Cmp(small) != 0 {
		t.Fatalf("recipient balance %s, want %s", b, small)
	}

	// Over the value cap: refused, and nothing reaches the node.
	nonceBefore, _ := chain.PendingNonce(ctx, from)
	res, err = agent.Sign(ctx, tx("e2e-2", big.NewInt(5e17)), 0)
	if err != nil || res.Success || res.Signature != "" || res.PolicyDecision.Rule != "signing.max_value" {
		t.Fatalf("sign 0.5 ETH: %+v %v; want a signing.max_value deny with no signature", res, err)
	}
	if n, _ := chain.PendingNonce(ctx, from); n != nonceBefore || balance().Cmp(small) != 0 {
		t.Fatalf("a refused request changed the chain: nonce %d→%d, balance %s", nonceBefore, n, balance())
	}

	// Above the confirmation threshold: pending; the agent cannot approve;
	// an operator can, and then it is signed and mined.
	mid := big.NewInt(5e16) // 0.05 ETH
	res, err = agent.Sign(ctx, tx("e2e-3", mid), 0)
	if err != nil || !res.Pending || res.PolicyDecision.ApprovalID == "" {
		t.Fatalf("sign 0.05 ETH: %+v %v; want pending", res, err)
	}
	id := res.PolicyDecision.ApprovalID
	if _, err := agent.SignAnswer(ctx, id, true); err == nil || !strings.Contains(err.Error(), "operator") {
		t.Fatalf("the agent approved its own request: %v", err)
	}
	if st, err := agent.SignStatus(ctx, id); err != nil || !st.Pending {
		t.Fatalf("status after the agent's attempt: %+v %v; want still pending", st, err)
	}
	res, err = op.SignAnswer(ctx, id, true)
	if err != nil || !res.Success || !res.HumanConfirmed {
		t.Fatalf("operator approval: %+v %v", res, err)
	}
	if st, err := agent.SignStatus(ctx, id); err != nil || st.Signature != res.Signature {
		t.Fatalf("the agent's poll after approval: %+v %v; want the same signature", st, err)
	}
	broadcast(res.Signature)
	if b := balance(); b.Cmp(new(big.Int).Add(small, mid)) != 0 {
		t.Fatalf("recipient balance %s, want %s", b, new(big.Int).Add(small, mid))
	}

	// A personal_sign is signed by the same key.
	addrRes, err := agent.Sign(ctx, []byte(`{"method":"personal_sign","message":"hello from the sandbox"}`), 0)
	if err != nil || addrRes.Success || !addrRes.Pending {
		t.Fatalf("a plain readable message asks a human: %+v %v", addrRes, err)
	}

	// Every request is in the security events, and no event holds the key.
	evs, err := d.App.Store.Events(ctx, warden.EventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, e := range evs {
		counts[e.Type]++
	}
	if counts[warden.EventSigningSubmitted] != 4 || counts[warden.EventSigningApproved] != 2 || counts[warden.EventSigningRejected] != 1 {
		t.Errorf("signing events %v; want 4 submitted, 2 approved, 1 rejected", counts)
	}
}
