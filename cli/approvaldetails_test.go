package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
)

func TestApprovalDetails(t *testing.T) {
	const (
		recipient = "0x5B38Da6a701c568545dCfcB03FcB875f56beddC4"
		usdc      = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
		weth      = "0x4200000000000000000000000000000000000006"
		unlisted  = "0x1111111111111111111111111111111111111111"
	)
	params := func(kv ...string) map[string]json.RawMessage {
		m := map[string]json.RawMessage{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = json.RawMessage(kv[i+1])
		}
		return m
	}
	// transfer(recipient, 25 USDC): selector, then two 32-byte words.
	transfer := "0xa9059cbb" + strings.Repeat("0", 24) + strings.ToLower(recipient[2:]) + strings.Repeat("0", 57) + "17d7840"
	// transferOf and approveOf are calldata: the selector, an address and
	// an amount in hex, as 32-byte words.
	word := func(hexAmount string) string { return strings.Repeat("0", 64-len(hexAmount)) + hexAmount }
	transferOf := func(to, hexAmount string) string {
		return "0xa9059cbb" + strings.Repeat("0", 24) + strings.ToLower(to[2:]) + word(hexAmount)
	}
	approveOf := func(spender, hexAmount string) string {
		return "0x095ea7b3" + strings.Repeat("0", 24) + strings.ToLower(spender[2:]) + word(hexAmount)
	}
	txOn := func(chain int, to, value, data string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"type": 2, "chainId": chain, "to": to, "value": value, "data": data,
			"gas": "60000", "maxFeePerGas": "2000000000", "maxPriorityFeePerGas": "100000000", "nonce": 1})
		return b
	}
	tx := func(to, value, data string) json.RawMessage { return txOn(8453, to, value, data) }
	tests := []struct {
		name string
		req  warden.Request
		want []string
	}{
		{name: "trade transfer", req: warden.Request{Capability: warden.CapTrade, Action: "transfer", Resource: "USDC",
			Params: params("amount_usd", "50", "chain", `"base"`, "recipient", `"`+recipient+`"`)},
			want: []string{"amount:   $50", "token:    USDC", "chain:    base", "recipient: " + recipient}},
		{name: "tool call moving funds", req: warden.Request{Capability: "tool", Action: "call", Resource: "transfer_token",
			Params: params("amount_usd", "25", "token", `"USDC"`, "to", `"0xabc"`)},
			want: []string{"amount:   $25", "token:    USDC", "recipient: 0xabc"}},
		{name: "sign ether", req: warden.Request{Capability: warden.CapSign, Action: "eth_signTransaction",
			Params: map[string]json.RawMessage{"tx": tx(recipient, "5000000000000000", "0x"), "amount_usd": json.RawMessage("15.1")}},
			want: []string{"value:    0.005 ETH ($15.1)", "to:       " + recipient, "chain:    base (8453)"}},
		{name: "sign token transfer", req: warden.Request{Capability: warden.CapSign, Action: "eth_signTransaction",
			Params: map[string]json.RawMessage{"tx": tx(usdc, "0", transfer)}},
			want: []string{"value:    0 ETH", "chain:    base (8453)",
				"calls:    transfer of 25 USDC (25000000 base units) to " + recipient + " on token " + usdc + "\n"}},
		{name: "sign 18-decimal token transfer", req: warden.Request{Capability: warden.CapSign, Action: "eth_signTransaction",
			Params: map[string]json.RawMessage{"tx": tx(weth, "0", transferOf(recipient, "14d1120d7b160000"))}},
			want: []string{"calls:    transfer of 1.5 WETH (1500000000000000000 base units) to " + recipient}},
		{name: "sign unlimited approval", req: warden.Request{Capability: warden.CapSign, Action: "eth_signTransaction",
			Params: map[string]json.RawMessage{"tx": tx(usdc, "0", approveOf(recipient, strings.Repeat("f", 64)))}},
			want: []string{"calls:    approve of an unlimited amount of USDC, spender " + recipient + " on token " + usdc}},
		{name: "sign unlisted token transfer", req: warden.Request{Capability: warden.CapSign, Action: "eth_signTransaction",
			Params: map[string]json.RawMessage{"tx": tx(unlisted, "0", transfer)}},
			want: []string{"calls:    transfer of 25000000 base units to " + recipient + " on token " + unlisted + " (not in warden's token registry)"}},
		{name: "sign on an unknown chain", req: warden.Request{Capability: warden.CapSign, Action: "eth_signTransaction",
			Params: map[string]json.RawMessage{"tx": txOn(999999, usdc, "0", transfer)}},
			want: []string{"chain:    999999", "transfer of 25000000 base units", "(not in warden's token registry)"}},
		{name: "file write", req: warden.Request{Capability: "filesystem", Action: "write", Resource: "/w/notes.txt", Params: params("bytes", "2048")},
			want: []string{"size:     2.0 KB (2048 bytes)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(approvalDetails(&tt.req), "\n") + "\n"
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("approvalDetails(%s) =\n%s\nwant a line %q", tt.name, got, w)
				}
			}
		})
	}
}

func TestWriteDiff(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want string
	}{
		{name: "claude edit", raw: `{"tool_name":"Edit","tool_input":{"file_path":"/p/a.go","old_string":"x := 1\n","new_string":"x := 2\ny := 3"}}`,
			want: "- x := 1\n+ x := 2\n+ y := 3\n"},
		{name: "claude write", raw: `{"tool_name":"Write","tool_input":{"file_path":"/p/b.txt","content":"hello\nworld\n"}}`,
			want: "+ hello\n+ world\n"},
		{name: "gemini write_file", raw: `{"tool_name":"write_file","tool_input":{"file_path":"/p/c","content":"one"}}`,
			want: "+ one\n"},
		{name: "no content", raw: `{"tool_name":"Write","tool_input":{"file_path":"/p/d"}}`, want: ""},
		{name: "not JSON", raw: `nope`, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &warden.Request{Capability: "filesystem", Action: "write", Raw: json.RawMessage(tt.raw)}
			if got := writeDiff(r); got != tt.want {
				t.Errorf("writeDiff(%s) = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
	long := `{"tool_input":{"content":"` + strings.Repeat(`l\n`, 500) + `"}}`
	got := writeDiff(&warden.Request{Capability: "filesystem", Raw: json.RawMessage(long)})
	if n := strings.Count(got, "\n"); n != maxDiffLines+1 || !strings.HasSuffix(got, "… (more lines not shown)\n") {
		t.Errorf("writeDiff of 500 lines showed %d lines, ending %q", n, got[max(0, len(got)-40):])
	}
}
