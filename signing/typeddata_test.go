package signing

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
)

const permit2 = "0x000000000022D473030F116dDEE9F6B43aC78BA3"

// typedBody is an eth_signTypedData_v4 body around typed data given as a
// Go value or raw JSON.
func typedBody(td any) string {
	b, err := json.Marshal(map[string]any{"method": MethodSignTypedData, "typedData": td})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// permitSingle is the corpus's unlimited Permit2 PermitSingle with the
// changes of edit applied to a copy.
func permitSingle(edit func(td, domain, msg, details map[string]any)) map[string]any {
	details := map[string]any{"token": usdc, "amount": "1461501637330902918203684832716283019655932542975", "expiration": 4102444800, "nonce": 0}
	msg := map[string]any{"details": details, "spender": addrB, "sigDeadline": 4102444800}
	domain := map[string]any{"name": "Permit2", "chainId": 8453, "verifyingContract": permit2}
	td := map[string]any{"domain": domain, "primaryType": "PermitSingle", "message": msg}
	if edit != nil {
		edit(td, domain, msg, details)
	}
	return td
}

// eip2612 is a USDC EIP-2612 permit with edit applied.
func eip2612(edit func(td, domain, msg map[string]any)) map[string]any {
	msg := map[string]any{"owner": addrA, "spender": addrB, "value": "1000000", "nonce": 0, "deadline": "1700000000"}
	domain := map[string]any{"name": "USD Coin", "version": "2", "chainId": 8453, "verifyingContract": usdc}
	td := map[string]any{"domain": domain, "primaryType": "Permit", "message": msg}
	if edit != nil {
		edit(td, domain, msg)
	}
	return td
}

var (
	permit2Types = map[string]any{
		"EIP712Domain":  []any{map[string]string{"name": "name", "type": "string"}, map[string]string{"name": "chainId", "type": "uint256"}, map[string]string{"name": "verifyingContract", "type": "address"}},
		"PermitSingle":  fieldsJSON(canonicalTypes["PermitSingle"]),
		"PermitDetails": fieldsJSON(canonicalTypes["PermitDetails"]),
	}
	mail = map[string]any{
		"domain":      map[string]any{"name": "Ether Mail", "version": "1", "chainId": 1, "verifyingContract": "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC"},
		"primaryType": "Mail",
		"types": map[string]any{
			"Person": []any{map[string]string{"name": "name", "type": "string"}, map[string]string{"name": "wallet", "type": "address"}},
			"Mail":   []any{map[string]string{"name": "from", "type": "Person"}, map[string]string{"name": "to", "type": "Person"}, map[string]string{"name": "contents", "type": "string"}},
		},
		"message": map[string]any{"from": map[string]any{"name": "Cow"}, "to": map[string]any{"name": "Bob"}, "contents": "Hello, Bob!"},
	}
)

func fieldsJSON(fs []TypedField) []any {
	out := make([]any, len(fs))
	for i, f := range fs {
		out[i] = map[string]string{"name": f.Name, "type": f.Type}
	}
	return out
}

// with returns a shallow copy of m with key set to v (deleted when v is
// nil).
func with(m map[string]any, key string, v any) map[string]any {
	c := maps.Clone(m)
	if v == nil {
		delete(c, key)
	} else {
		c[key] = v
	}
	return c
}

// typedDataCases are typed-data bodies and what ParseBody makes of them:
// "error: <substring>" or "primaryType/domain name/chain id/contract/#types/#message".
func typedDataCases() []bodyCase {
	return []bodyCase{
		{"mail", typedBody(mail), "Mail/Ether Mail/1/0xcccccccccccccccccccccccccccccccccccccccc/2/3"},
		{"permit2 without types", typedBody(permitSingle(nil)), "PermitSingle/Permit2/8453/" + strings.ToLower(permit2) + "/0/3"},
		{"given as a JSON string", typedBody(string(mustJSON(mail))), "Mail/Ether Mail/1/0xcccccccccccccccccccccccccccccccccccccccc/2/3"},
		{"chain id as hex", typedBody(with(mail, "domain", map[string]any{"chainId": "0x2105"})), "Mail//8453/-/2/3"},
		{"empty domain", typedBody(with(with(mail, "domain", map[string]any{}), "types", nil)), "Mail//-/-/0/3"},
		{"salt", typedBody(with(mail, "domain", map[string]any{"salt": "0x" + strings.Repeat("01", 32)})), "Mail//-/-/2/3"},
		{"HTML characters survive a stored round trip", `{"method":"eth_signTypedData_v4","typedData":{"domain":{},"message":{"":{"":"<a&b>` + "\u2028" + `"}},"primaryType":"0"}}`, "0//-/-/0/1"},
		{"not an object", typedBody([]any{1}), "error: typedData must be a JSON object"},
		{"a string that is not JSON", typedBody("{domain"), "error: typedData is not valid JSON"},
		{"a number", typedBody(5), "error: typedData must be a JSON object"},
		{"unknown key", typedBody(with(mail, "schema", "x")), `error: unknown key "schema" in typedData`},
		{"no domain", typedBody(with(mail, "domain", nil)), "error: typedData.domain is missing"},
		{"domain not an object", typedBody(with(mail, "domain", "Ether Mail")), "error: typedData.domain must be a JSON object"},
		{"domain unknown key", typedBody(with(mail, "domain", map[string]any{"name": "x", "chain": 1})), `error: unknown key "chain" in typedData.domain`},
		{"domain name not a string", typedBody(with(mail, "domain", map[string]any{"name": 5})), "error: typedData.domain.name must be a JSON string"},
		{"domain chain id negative", typedBody(with(mail, "domain", map[string]any{"chainId": -1})), "error: typedData.domain.chainId"},
		{"domain bad contract", typedBody(with(mail, "domain", map[string]any{"verifyingContract": "0x12"})), "error: typedData.domain.verifyingContract"},
		{"domain short salt", typedBody(with(mail, "domain", map[string]any{"salt": "0x01"})), "error: a salt is 32"},
		{"no primary type", typedBody(with(mail, "primaryType", nil)), "error: typedData.primaryType is missing"},
		{"empty primary type", typedBody(with(mail, "primaryType", "")), "error: typedData.primaryType is empty"},
		{"primary type not a string", typedBody(with(mail, "primaryType", 1)), "error: typedData.primaryType must be a JSON string"},
		{"primary type not in types", typedBody(with(mail, "primaryType", "Letter")), `error: typedData.primaryType "Letter" is not defined`},
		{"no message", typedBody(with(mail, "message", nil)), "error: typedData.message is missing"},
		{"message not an object", typedBody(with(mail, "message", "hi")), "error: typedData.message must be a JSON object"},
		{"types not an object", typedBody(with(mail, "types", []any{})), "error: typedData.types must be a JSON object"},
		{"type not an array", typedBody(with(mail, "types", map[string]any{"Mail": "string contents"})), "error: typedData.types.Mail must be a JSON array"},
		{"field without a type", typedBody(with(mail, "types", map[string]any{"Mail": []any{map[string]any{"name": "x"}}})), "error: typedData.types.Mail[0].type is missing"},
		{"field unknown key", typedBody(with(mail, "types", map[string]any{"Mail": []any{map[string]any{"name": "x", "type": "string", "size": 1}}})), `error: unknown key "size" in typedData.types.Mail[0]`},
		{"duplicate key deep in the message", `{"method":"eth_signTypedData_v4","typedData":{"domain":{},"primaryType":"M","message":{"a":{"b":1,"b":2}}}}`, `error: holds the key "b" twice`},
		{"duplicate key inside the string form", typedBody(`{"domain":{},"primaryType":"M","message":{},"message":{}}`), `error: holds the key "message" twice`},
		{"too large", typedBody(with(mail, "message", map[string]any{"contents": strings.Repeat("a", MaxTypedDataBytes)})), "error: typedData is"},
	}
}

func TestParseTypedData(t *testing.T) {
	for _, c := range typedDataCases() {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseBody([]byte(c.body))
			if want, isErr := strings.CutPrefix(c.want, "error: "); isErr {
				if err == nil {
					t.Fatalf("ParseBody(%.200s) = %+v; want an error", c.body, r.TypedData)
				}
				requireInvalid(t, err, want)
				return
			}
			if err != nil {
				t.Fatalf("ParseBody(%s) = %v", c.body, err)
			}
			td := r.TypedData
			chain, contract := "-", "-"
			if td.Domain.ChainID != nil {
				chain = td.Domain.ChainID.String()
			}
			if td.Domain.VerifyingContract != nil {
				contract = td.Domain.VerifyingContract.Hex()
			}
			got := fmt.Sprintf("%s/%s/%s/%s/%d/%d", td.PrimaryType, td.Domain.Name, chain, contract, len(td.Types), len(td.Message))
			if got != c.want {
				t.Errorf("ParseBody(%s) = %s, want %s", c.body, got, c.want)
			}
			requireRoundTrip(t, r)
		})
	}
}

// permitCase is typed data and what Permit makes of it: "nil", "error:
// <substring>", or the permit as permitString gives it.
type permitCase struct {
	name string
	td   any
	want string
}

func permitCases() []permitCase {
	maxU160 := maxUint(160)
	return []permitCase{
		{"not a permit", mail, "nil"},
		{"the corpus's unlimited Permit2", permitSingle(nil),
			"permit2.single spender=" + addrB + " deadline=4102444800 [" + usdc + " " + maxU160 + " until 4102444800 unlimited]"},
		{"Permit2 with its types", with(permitSingle(nil), "types", permit2Types),
			"permit2.single spender=" + addrB + " deadline=4102444800 [" + usdc + " " + maxU160 + " until 4102444800 unlimited]"},
		{"Permit2 with hex amounts", permitSingle(func(_, _, msg, d map[string]any) {
			d["amount"], d["expiration"], msg["sigDeadline"] = "0xf4240", "0x0", "0x1"
		}), "permit2.single spender=" + addrB + " deadline=1 [" + usdc + " 1000000 until 0]"},
		{"Permit2 batch", permitSingle(func(td, _, msg, d map[string]any) {
			td["primaryType"] = "PermitBatch"
			msg["details"] = []any{d, with(d, "amount", "5")}
		}), "permit2.batch spender=" + addrB + " deadline=4102444800 [" + usdc + " " + maxU160 + " until 4102444800 unlimited][" + usdc + " 5 until 4102444800]"},
		{"Permit2 empty batch", permitSingle(func(td, _, msg, _ map[string]any) {
			td["primaryType"] = "PermitBatch"
			msg["details"] = []any{}
		}), "permit2.batch spender=" + addrB + " deadline=4102444800 "},
		{"EIP-2612", eip2612(nil), "eip2612 spender=" + addrB + " owner=" + addrA + " deadline=1700000000 [" + usdc + " 1000000]"},
		{"EIP-2612 with its types", with(eip2612(nil), "types", map[string]any{"Permit": fieldsJSON(canonicalTypes["Permit"])}),
			"eip2612 spender=" + addrB + " owner=" + addrA + " deadline=1700000000 [" + usdc + " 1000000]"},
		{"EIP-2612 unlimited", eip2612(func(_, _, msg map[string]any) { msg["value"] = "0x" + strings.Repeat("f", 64) }),
			"eip2612 spender=" + addrB + " owner=" + addrA + " deadline=1700000000 [" + usdc + " " + maxUint(256) + " unlimited]"},
		{"Permit2's name at another contract", permitSingle(func(_, dom, _, _ map[string]any) { dom["verifyingContract"] = usdc }),
			"error: claims the domain Permit2 but its verifying contract is " + usdc},
		{"Permit2's name without a contract", permitSingle(func(_, dom, _, _ map[string]any) { delete(dom, "verifyingContract") }),
			"error: claims the domain Permit2 but its verifying contract is absent"},
		{"the Permit2 contract under another name", permitSingle(func(_, dom, _, _ map[string]any) { dom["name"] = "Uniswap" }),
			`error: names the domain "Uniswap", not Permit2`},
		{"the Permit2 contract with a transfer permit", permitSingle(func(td, _, _, _ map[string]any) { td["primaryType"] = "PermitTransferFrom" }),
			`error: has the primary type "PermitTransferFrom"`},
		{"the Permit2 contract with an EIP-2612 Permit", permitSingle(func(td, _, _, _ map[string]any) { td["primaryType"] = "Permit" }),
			`error: has the primary type "Permit"`},
		{"PermitSingle outside Permit2", permitSingle(func(_, dom, _, _ map[string]any) { dom["name"], dom["verifyingContract"] = "Permit3", usdc }),
			"error: Permit2's primary type PermitSingle outside the Permit2 domain"},
		{"Permit2 amount over uint160", permitSingle(func(_, _, _, d map[string]any) { d["amount"] = "0x1" + strings.Repeat("0", 40) }),
			"error: typedData.message.details.amount is 1461501637330902918203684832716283019655932542976, more than a uint160"},
		{"Permit2 expiration over uint48", permitSingle(func(_, _, _, d map[string]any) { d["expiration"] = "0x1000000000000" }),
			"error: typedData.message.details.expiration"},
		{"Permit2 negative amount", permitSingle(func(_, _, _, d map[string]any) { d["amount"] = "-1" }), "error: negative"},
		{"Permit2 fractional deadline", permitSingle(func(_, _, msg, _ map[string]any) { msg["sigDeadline"] = 1.5 }), "error: typedData.message.sigDeadline"},
		{"Permit2 without details", permitSingle(func(_, _, msg, _ map[string]any) { delete(msg, "details") }), "error: typedData.message.details is missing"},
		{"Permit2 without spender", permitSingle(func(_, _, msg, _ map[string]any) { delete(msg, "spender") }), "error: typedData.message.spender is missing"},
		{"Permit2 without sigDeadline", permitSingle(func(_, _, msg, _ map[string]any) { delete(msg, "sigDeadline") }), "error: typedData.message.sigDeadline is missing"},
		{"Permit2 without nonce", permitSingle(func(_, _, _, d map[string]any) { delete(d, "nonce") }), "error: typedData.message.details.nonce is missing"},
		{"Permit2 bad token", permitSingle(func(_, _, _, d map[string]any) { d["token"] = "USDC" }), "error: typedData.message.details.token"},
		{"Permit2 unknown message key", permitSingle(func(_, _, msg, _ map[string]any) { msg["witness"] = "x" }), `error: unknown key "witness" in typedData.message`},
		{"Permit2 unknown details key", permitSingle(func(_, _, _, d map[string]any) { d["recipient"] = addrA }), `error: unknown key "recipient" in typedData.message.details`},
		{"PermitSingle with an array of details", permitSingle(func(_, _, msg, d map[string]any) { msg["details"] = []any{d} }),
			"error: typedData.message.details must be a JSON object"},
		{"PermitBatch with one object", permitSingle(func(td, _, _, _ map[string]any) { td["primaryType"] = "PermitBatch" }),
			"error: typedData.message.details must be a JSON array"},
		{"Permit2 with other types", with(permitSingle(nil), "types", with(permit2Types, "PermitDetails", []any{map[string]string{"name": "token", "type": "address"}, map[string]string{"name": "amount", "type": "uint256"}})),
			"error: typedData.types.PermitDetails is not the PermitDetails type"},
		{"Permit2 with types missing details", with(permitSingle(nil), "types", with(permit2Types, "PermitDetails", nil)),
			"error: typedData.types.PermitDetails is not"},
		{"EIP-2612 without a contract", eip2612(func(_, dom, _ map[string]any) { delete(dom, "verifyingContract") }),
			"error: an EIP-2612 Permit names no token"},
		{"DAI-style permit", eip2612(func(_, _, msg map[string]any) {
			delete(msg, "owner")
			delete(msg, "value")
			msg["holder"], msg["allowed"], msg["expiry"] = addrA, true, 0
		}), `error: unknown key "allowed" in typedData.message`},
		{"EIP-2612 without value", eip2612(func(_, _, msg map[string]any) { delete(msg, "value") }), "error: typedData.message.value is missing"},
		{"EIP-2612 bad owner", eip2612(func(_, _, msg map[string]any) { msg["owner"] = 1 }), "error: typedData.message.owner must be a JSON string"},
		{"EIP-2612 with other types", with(eip2612(nil), "types", map[string]any{"Permit": fieldsJSON(canonicalTypes["Permit"][:4])}),
			"error: typedData.types.Permit is not"},
	}
}

func TestPermit(t *testing.T) {
	for _, c := range permitCases() {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseBody([]byte(typedBody(c.td)))
			if err != nil {
				t.Fatalf("ParseBody = %v", err)
			}
			p, err := r.TypedData.Permit()
			if want, isErr := strings.CutPrefix(c.want, "error: "); isErr {
				if err == nil {
					t.Fatalf("Permit() = %s; want an error", permitString(p))
				}
				requireInvalid(t, err, want)
				return
			}
			if err != nil {
				t.Fatalf("Permit() = %v", err)
			}
			if got := permitString(p); got != c.want {
				t.Errorf("Permit() = %s\nwant        %s", got, c.want)
			}
		})
	}
	if p, err := (*TypedData)(nil).Permit(); p != nil || err != nil {
		t.Errorf("nil.Permit() = %v, %v", p, err)
	}
}

func permitString(p *Permit) string {
	if p == nil {
		return "nil"
	}
	s := p.Kind + " spender=" + Checksum(p.Spender)
	if p.Owner != nil {
		s += " owner=" + Checksum(*p.Owner)
	}
	s += " deadline=" + p.Deadline.String() + " "
	for _, t := range p.Tokens {
		s += "[" + Checksum(t.Token) + " " + t.Amount.String()
		if t.Expiration != nil {
			s += " until " + t.Expiration.String()
		}
		if Unlimited(t.Amount) {
			s += " unlimited"
		}
		s += "]"
	}
	return s
}

// TestTypedDataJSON: typed data built in code (no raw JSON) encodes to a
// payload that parses back to the same fields.
func TestTypedDataJSON(t *testing.T) {
	r, err := ParseBody([]byte(typedBody(with(permitSingle(nil), "types", permit2Types))))
	if err != nil {
		t.Fatal(err)
	}
	built := *r.TypedData
	built.raw = nil
	again, err := parseTypedData(built.json())
	if err != nil {
		t.Fatalf("parseTypedData(%s) = %v", built.json(), err)
	}
	again.raw = nil
	if diff := typedDataDiff(&built, again); diff != "" {
		t.Fatalf("typed data built in code differs after encoding in %s: %s", diff, built.json())
	}
	if empty := (&TypedData{PrimaryType: "M"}).json(); string(empty) != `{"domain":{},"message":{},"primaryType":"M"}` {
		t.Errorf("empty typed data = %s", empty)
	}
}
