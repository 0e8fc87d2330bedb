package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// TestWriteDiff: viewing a write shows a unified diff of the file as it is
// on this machine against what the call leaves (Claude Code's Write, Edit
// and MultiEdit, Gemini CLI's write_file and replace); where the file
// cannot be read (not a regular file, not text) or an edit's text is not
// in it, the text the call replaces and writes, saying why. A FIFO never
// blocks the view.
func TestWriteDiff(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	goFile := write("a.go", "package a\n\nfunc f() {\n\tx := 1\n\treturn\n}\n")
	notes := write("notes.txt", "one\ntwo\nthree\ntwo\n")
	binary := write("blob.bin", "\x00\x01\x02")
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	tests := []struct {
		name, path, raw string
		want            []string
		notWant         []string
	}{
		{name: "claude edit", path: goFile, raw: `{"tool_name":"Edit","tool_input":{"file_path":` + quote(goFile) + `,"old_string":"x := 1\n","new_string":"x := 2\n\ty := 3\n"}}`,
			want: []string{"the change, against the file on this machine now:\n--- " + goFile + " (now)\n+++ " + goFile + " (after the write)\n",
				"@@ -1,6 +1,7 @@\n", " func f() {\n-\tx := 1\n+\tx := 2\n+\ty := 3\n \treturn\n"}},
		{name: "claude write over a file", path: notes, raw: `{"tool_name":"Write","tool_input":{"file_path":` + quote(notes) + `,"content":"one\n2\nthree\ntwo\n"}}`,
			want: []string{" one\n-two\n+2\n three\n"}},
		{name: "claude multi edit, replace all", path: notes, raw: `{"tool_name":"MultiEdit","tool_input":{"file_path":` + quote(notes) +
			`,"edits":[{"old_string":"two","new_string":"2","replace_all":true},{"old_string":"one","new_string":"1"}]}}`,
			want: []string{"-one\n-two\n+1\n+2\n three\n-two\n+2\n"}},
		{name: "gemini replace, a relative path", path: "notes.txt", raw: `{"tool_name":"replace","tool_input":{"file_path":"notes.txt","old_string":"three","new_string":"3"}}`,
			want: []string{"-three\n+3\n"}},
		{name: "gemini write_file, a new file", path: filepath.Join(dir, "new.txt"), raw: `{"tool_name":"write_file","tool_input":{"file_path":"new.txt","content":"fresh"}}`,
			want: []string{"@@ -0,0 +1 @@\n+fresh\n"}},
		{name: "the text to replace is gone", path: notes, raw: `{"tool_name":"Edit","tool_input":{"file_path":` + quote(notes) + `,"old_string":"four","new_string":"4"}}`,
			want: []string{"the change (the text to replace is not in the file on this machine; the text it replaces and writes):\n- four\n+ 4\n"}},
		{name: "not text", path: binary, raw: `{"tool_name":"Write","tool_input":{"file_path":` + quote(binary) + `,"content":"x"}}`,
			want: []string{"is not text", "+ x\n"}},
		{name: "a FIFO", path: fifo, raw: `{"tool_name":"Write","tool_input":{"file_path":` + quote(fifo) + `,"content":"x"}}`,
			want: []string{"not a regular file", "+ x\n"}},
		{name: "no change", path: notes, raw: `{"tool_name":"Write","tool_input":{"file_path":` + quote(notes) + `,"content":"one\ntwo\nthree\ntwo\n"}}`,
			want: []string{"the change: none"}},
		{name: "no content", path: notes, raw: `{"tool_name":"Write","tool_input":{"file_path":` + quote(notes) + `}}`},
		{name: "not JSON", path: notes, raw: `nope`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &warden.Request{Capability: "filesystem", Action: "write", Resource: tt.path, Cwd: dir, Raw: json.RawMessage(tt.raw)}
			got := writeDiff(r)
			if len(tt.want) == 0 && got != "" {
				t.Errorf("writeDiff(%s) = %q, want nothing", tt.name, got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("writeDiff(%s) =\n%s\nwant it to hold %q", tt.name, got, w)
				}
			}
		})
	}
	long := `{"tool_input":{"content":"` + strings.Repeat(`l\n`, 500) + `"}}`
	got := writeDiff(&warden.Request{Capability: "filesystem", Resource: filepath.Join(dir, "long.txt"), Raw: json.RawMessage(long)})
	if n := strings.Count(got, "\n"); n != maxDiffLines+2 || !strings.HasSuffix(got, "… (more lines not shown)\n") {
		t.Errorf("writeDiff of 500 lines showed %d lines, ending %q", n, got[max(0, len(got)-40):])
	}
}

// FuzzWriteDiff: whatever a host's payload and the file hold, the view of a
// write never panics and never shows more than its bound.
func FuzzWriteDiff(f *testing.F) {
	f.Add(`{"tool_input":{"old_string":"a","new_string":"b","replace_all":true}}`, "a a a\n")
	f.Add(`{"tool_input":{"content":"x\ny"}}`, "")
	f.Add(`{"args":{"edits":[{"old_string":"","new_string":"z"}]}}`, "q")
	f.Add(`{"tool_input":{"old_string":"\n","new_string":"\n\n","expected_replacements":2}}`, "\n\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, raw, file string) {
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
		got := writeDiff(&warden.Request{Capability: "filesystem", Action: "write", Resource: path, Raw: json.RawMessage(raw)})
		if n := strings.Count(got, "\n"); n > maxDiffLines+2 {
			t.Errorf("writeDiff showed %d lines, more than %d", n, maxDiffLines+2)
		}
	})
}
