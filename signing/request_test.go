package signing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
)

const (
	// addrA is the corpus's recipient with a valid EIP-55 checksum; the
	// corpus writes it 0x7a3F9e2b5C1d4E6f8A0b2C4d6E8f0A1b3C5d9E21, which
	// fails the checksum (see corpus_test.go).
	addrA = "0x7a3F9e2B5C1d4e6F8A0b2C4d6E8f0A1b3C5d9e21"
	addrB = "0x5B38Da6a701c568545dCfcB03FcB875f56beddC4"
	usdc  = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
)

// txBody is an eth_signTransaction body whose tx is a valid type-2
// transfer with the fields of extra merged in (a nil value deletes one).
func txBody(extra map[string]any) string {
	tx := map[string]any{
		"type": 2, "chainId": 8453, "to": addrA, "value": "5000000000000000", "data": "0x",
		"gas": "21000", "maxFeePerGas": "2000000000", "maxPriorityFeePerGas": "100000000", "nonce": 1,
	}
	for k, v := range extra {
		if v == nil {
			delete(tx, k)
		} else {
			tx[k] = v
		}
	}
	b, err := json.Marshal(map[string]any{"method": MethodSignTransaction, "tx": tx})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// txBodyRaw is txBody with field given as the raw text, which need not be
// valid JSON.
func txBodyRaw(field, text string) string {
	return strings.Replace(txBody(map[string]any{field: "\x00placeholder"}), `"\u0000placeholder"`, text, 1)
}

// deleted marks a field txBody removes.
var deleted any

// null is a field given as JSON null.
var null = json.RawMessage("null")

func mustAddress(s string) Address {
	a, err := ParseAddress(s)
	if err != nil {
		panic(err)
	}
	return a
}

// bodyCase is a request body and the error it must give.
type bodyCase struct{ name, body, want string }

// requireInvalid fails unless err is an EInvalid *warden.Error whose message
// contains want.
func requireInvalid(t *testing.T, err error, want string) {
	t.Helper()
	var e *warden.Error
	if !errors.As(err, &e) || e.Code != warden.EInvalid {
		t.Fatalf("error = %v (%T); want an EInvalid *warden.Error", err, err)
	}
	if !strings.Contains(e.Message, want) {
		t.Fatalf("error = %q; want it to mention %q", e.Message, want)
	}
}

// bodyErrorCases are bodies ParseBody refuses, with what the error says.
func bodyErrorCases() []bodyCase {
	big257 := "0x1" + strings.Repeat("0", 64)
	return []bodyCase{
		{"not JSON", `{"method":`, "not valid JSON"},
		{"empty body", ``, "not valid JSON"},
		{"not an object", `["eth_sign"]`, "must be a JSON object"},
		{"trailing data", `{"method":"eth_sign","hash":"0x` + strings.Repeat("ab", 32) + `"} {}`, "data after"},
		{"duplicate top-level key", `{"method":"personal_sign","message":"a","message":"b"}`, `key "message" twice`},
		{"duplicate key in tx", `{"method":"eth_signTransaction","tx":{"to":"` + addrA + `","to":"` + addrB + `"}}`, `key "to" twice`},
		{"duplicate key by escape", `{"method":"personal_sign","message":"a","mess\u0061ge":"b"}`, "twice"},
		{"invalid UTF-8", "{\"method\":\"personal_sign\",\"message\":\"\xff\"}", "UTF-8"},
		{"too deep", `{"method":"personal_sign","message":"a","decoded":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`, "nested"},
		{"too large", `{"method":"personal_sign","message":"` + strings.Repeat("a", maxBodyBytes) + `"}`, "request body is"},
		{"no method", `{"message":"hi"}`, "names no method"},
		{"method not a string", `{"method":1,"message":"hi"}`, "method must be a JSON string"},
		{"unknown method", `{"method":"eth_sendTransaction","tx":{}}`, "unknown signing method"},
		{"approvePending is not a signing request", `{"method":"approvePending","requestId":"req-1"}`, "unknown signing method"},
		{"unknown top-level key", `{"method":"personal_sign","message":"hi","chain":"base"}`, `unknown key "chain"`},
		{"key of another method", `{"method":"personal_sign","message":"hi","tx":{}}`, `unknown key "tx"`},
		{"module key", `{"module":"signing","method":"personal_sign","message":"hi"}`, `unknown key "module"`},
		{"empty requestId", `{"method":"personal_sign","requestId":"","message":"hi"}`, "requestId"},
		{"requestId with a space", `{"method":"personal_sign","requestId":"req 1","message":"hi"}`, "requestId"},
		{"requestId too long", `{"method":"personal_sign","requestId":"` + strings.Repeat("r", 129) + `","message":"hi"}`, "requestId"},
		{"requestId not a string", `{"method":"personal_sign","requestId":7,"message":"hi"}`, "requestId must be a JSON string"},
		{"no tx", `{"method":"eth_signTransaction"}`, `has no "tx"`},
		{"null tx", `{"method":"eth_signTransaction","tx":null}`, `has no "tx"`},
		{"no message", `{"method":"personal_sign"}`, `has no "message"`},
		{"no typed data", `{"method":"eth_signTypedData_v4"}`, `has no "typedData"`},
		{"no hash", `{"method":"eth_sign"}`, `has no "hash"`},
		{"tx not an object", `{"method":"eth_signTransaction","tx":"0x02f8"}`, "tx must be a JSON object"},
		{"unknown tx key", txBody(map[string]any{"gasPremium": "1"}), `unknown key "gasPremium" in tx`},
		{"amount_usd inside tx", txBody(map[string]any{"amount_usd": "5"}), `unknown key "amount_usd" in tx`},
		{"blob key", txBody(map[string]any{"type": 3, "blobVersionedHashes": []string{}}), `unknown key "blobVersionedHashes"`},
		{"type 5", txBody(map[string]any{"type": 5}), "tx.type 5 is not a transaction type"},
		{"type negative", txBody(map[string]any{"type": -1}), "tx.type is -1: a quantity cannot be negative"},
		{"type fractional", txBody(map[string]any{"type": 1.5}), "whole number"},
		{"type huge", txBody(map[string]any{"type": "0x10000000000000000"}), "more than a uint64"},
		{"nonce missing", txBody(map[string]any{"nonce": deleted}), "tx.nonce is missing"},
		{"nonce null", txBody(map[string]any{"nonce": null}), "tx.nonce is missing"},
		{"nonce over uint64", txBody(map[string]any{"nonce": "18446744073709551616"}), "tx.nonce is 18446744073709551616, more than a uint64"},
		{"nonce negative", txBody(map[string]any{"nonce": -1}), "negative"},
		{"chainId negative", txBody(map[string]any{"chainId": "-8453"}), "tx.chainId"},
		{"chainId empty string", txBody(map[string]any{"chainId": ""}), "tx.chainId is an empty string"},
		{"value negative", txBody(map[string]any{"value": "-1"}), `tx.value is "-1": a quantity cannot be negative`},
		{"value negative number", txBody(map[string]any{"value": json.RawMessage("-1")}), "negative"},
		{"value fractional", txBody(map[string]any{"value": "1.5"}), "tx.value is \"1.5\": a quantity must be a whole number"},
		{"value exponent string", txBody(map[string]any{"value": "1e18"}), "exponent"},
		{"value exponent number", txBody(map[string]any{"value": json.RawMessage("1e18")}), "exponent"},
		{"value JSON float", txBody(map[string]any{"value": json.RawMessage("1.0")}), "whole number"},
		{"value leading zero number", txBodyRaw("value", "01"), "not valid JSON"},
		{"value over 256 bits", txBody(map[string]any{"value": big257}), "more than a uint256"},
		{"value over 256 bits decimal", txBody(map[string]any{"value": "1" + strings.Repeat("0", 78)}), "more than a uint256"},
		{"value whitespace", txBody(map[string]any{"value": " 1"}), "whitespace"},
		{"value plus", txBody(map[string]any{"value": "+1"}), "has no sign"},
		{"value empty", txBody(map[string]any{"value": ""}), "empty string"},
		{"value bare 0x", txBody(map[string]any{"value": "0x"}), `"0x" with no digits`},
		{"value bad hex", txBody(map[string]any{"value": "0xg1"}), "not 0x followed by hex digits"},
		{"value upper-case prefix", txBody(map[string]any{"value": "0X10"}), "not a decimal or 0x-hex quantity"},
		{"value bool", txBody(map[string]any{"value": true}), "want a number or a string"},
		{"value object", txBody(map[string]any{"value": map[string]any{}}), "want a number or a string"},
		{"data without 0x", txBody(map[string]any{"data": "a9059cbb"}), "tx.data is \"a9059cbb\": hex data must start with 0x"},
		{"data odd length", txBody(map[string]any{"data": "0xa905c"}), "odd number of hex digits"},
		{"data not hex", txBody(map[string]any{"data": "0xzz"}), "not 0x followed by hex digits"},
		{"data not a string", txBody(map[string]any{"data": 12}), "tx.data must be a JSON string"},
		{"data too large", txBody(map[string]any{"data": "0x" + strings.Repeat("00", MaxDataBytes+1)}), "at most 131072"},
		{"data and input differ", txBody(map[string]any{"data": "0xa9059cbb", "input": "0x095ea7b3"}), "tx.data and tx.input differ"},
		{"gas missing", txBody(map[string]any{"gas": deleted}), "tx.gas is missing"},
		{"gas and gasLimit differ", txBody(map[string]any{"gasLimit": "21001"}), "tx.gas and tx.gasLimit differ"},
		{"gas over uint64", txBody(map[string]any{"gas": "0x10000000000000000"}), "tx.gas"},
		{"gasLimit bad", txBody(map[string]any{"gas": deleted, "gasLimit": "lots"}), "tx.gasLimit"},
		{"maxFeePerGas missing", txBody(map[string]any{"maxFeePerGas": deleted}), "tx.maxFeePerGas is missing"},
		{"maxPriorityFeePerGas missing", txBody(map[string]any{"maxPriorityFeePerGas": deleted}), "tx.maxPriorityFeePerGas is missing"},
		{"legacy without gasPrice", txBody(map[string]any{"type": 0}), "tx.gasPrice is missing; a legacy (type 0) transaction"},
		{"gasPrice negative", txBody(map[string]any{"gasPrice": "-5"}), "tx.gasPrice"},
		{"to not an address", txBody(map[string]any{"to": "0x1234"}), "tx.to: address"},
		{"to with the corpus's bad checksum", txBody(map[string]any{"to": "0x7a3F9e2b5C1d4E6f8A0b2C4d6E8f0A1b3C5d9E21"}), "tx.to: address 0x7a3F9e2b5C1d4E6f8A0b2C4d6E8f0A1b3C5d9E21 has a wrong EIP-55 checksum"},
		{"to a number", txBody(map[string]any{"to": 5}), "tx.to must be a JSON string"},
		{"from not an address", txBody(map[string]any{"from": "me"}), "tx.from: address"},
		{"accessList not an array", txBody(map[string]any{"accessList": map[string]any{}}), "tx.accessList must be a JSON array"},
		{"accessList entry unknown key", txBody(map[string]any{"accessList": []any{map[string]any{"address": addrA, "storageKeys": []string{}, "x": 1}}}), `unknown key "x" in tx.accessList[0]`},
		{"accessList entry bad address", txBody(map[string]any{"accessList": []any{map[string]any{"address": "0x1", "storageKeys": []string{}}}}), "tx.accessList[0].address"},
		{"accessList short storage key", txBody(map[string]any{"accessList": []any{map[string]any{"address": addrA, "storageKeys": []string{"0x01"}}}}), "a storage key is 32"},
		{"authorization without chainId", txBody(map[string]any{"type": 4, "authorizationList": []any{map[string]any{"address": addrB, "nonce": 2}}}), "tx.authorizationList[0].chainId is missing"},
		{"authorization unknown key", txBody(map[string]any{"type": 4, "authorizationList": []any{map[string]any{"chainId": 1, "address": addrB, "nonce": 2, "contract": addrA}}}), `unknown key "contract"`},
		{"authorization bad r", txBody(map[string]any{"type": 4, "authorizationList": []any{map[string]any{"chainId": 1, "address": addrB, "nonce": 2, "r": "-1"}}}), "tx.authorizationList[0].r"},
		{"authorizationList not an array", txBody(map[string]any{"authorizationList": "none"}), "must be a JSON array"},
		{"message not a string", `{"method":"personal_sign","message":["hi"]}`, "message must be a JSON string"},
		{"message odd hex", `{"method":"personal_sign","message":"0xabc"}`, "odd number of hex digits"},
		{"message too large", `{"method":"personal_sign","message":"` + strings.Repeat("a", MaxMessageBytes+1) + `"}`, "message is 16385 bytes"},
		{"message hex too large", `{"method":"personal_sign","message":"0x` + strings.Repeat("ab", MaxMessageBytes+1) + `"}`, "at most 16384"},
		{"hash short", `{"method":"eth_sign","hash":"0x` + strings.Repeat("ab", 31) + `"}`, "hash is 31 bytes"},
		{"hash long", `{"method":"eth_sign","hash":"0x` + strings.Repeat("ab", 33) + `"}`, "hash is 33 bytes"},
		{"hash not hex", `{"method":"eth_sign","hash":"` + strings.Repeat("ab", 32) + `"}`, "must start with 0x"},
	}
}

func TestParseBodyErrors(t *testing.T) {
	for _, c := range bodyErrorCases() {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseBody([]byte(c.body))
			if err == nil {
				t.Fatalf("ParseBody(%.120q) = %+v, nil; want an error mentioning %q", c.body, r, c.want)
			}
			requireInvalid(t, err, c.want)
		})
	}
}

// txCase is a transaction body ParseBody accepts and a check of the result.
type txCase struct {
	name  string
	body  string
	check func(t *testing.T, r *Request)
}

func txCases() []txCase {
	a, b := mustAddress(addrA), mustAddress(addrB)
	return []txCase{
		{"the corpus's small transfer", txBody(nil), func(t *testing.T, r *Request) {
			tx := r.Tx
			if tx.Type != TypeDynamicFee || tx.ChainID.Int64() != 8453 || *tx.To != a || tx.Value.String() != "5000000000000000" ||
				len(tx.Data) != 0 || tx.Gas != 21000 || tx.Nonce != 1 || tx.MaxFeePerGas.Int64() != 2e9 || tx.MaxPriorityFeePerGas.Int64() != 1e8 ||
				tx.GasPrice != nil || tx.AccessList || tx.Authorizations != nil || r.From != nil {
				t.Errorf("tx = %+v", tx)
			}
		}},
		{"type defaults to 2", txBody(map[string]any{"type": deleted}), func(t *testing.T, r *Request) { wantInt(t, "type", r.Tx.Type, TypeDynamicFee) }},
		{"type null defaults to 2", txBody(map[string]any{"type": null}), func(t *testing.T, r *Request) { wantInt(t, "type", r.Tx.Type, TypeDynamicFee) }},
		{"type as 0x string", txBody(map[string]any{"type": "0x2"}), func(t *testing.T, r *Request) { wantInt(t, "type", r.Tx.Type, TypeDynamicFee) }},
		{"legacy with gasPrice", txBody(map[string]any{"type": 0, "gasPrice": "2000000000"}), func(t *testing.T, r *Request) {
			wantInt(t, "type", r.Tx.Type, TypeLegacy)
			wantBig(t, "gasPrice", r.Tx.GasPrice, "2000000000")
		}},
		{"chainId null", txBody(map[string]any{"chainId": null}), func(t *testing.T, r *Request) { wantBig(t, "chainId", r.Tx.ChainID, "") }},
		{"chainId absent", txBody(map[string]any{"chainId": deleted}), func(t *testing.T, r *Request) { wantBig(t, "chainId", r.Tx.ChainID, "") }},
		{"chainId hex", txBody(map[string]any{"chainId": "0x2105"}), func(t *testing.T, r *Request) { wantBig(t, "chainId", r.Tx.ChainID, "8453") }},
		{"chainId hex leading zeros", txBody(map[string]any{"chainId": "0x002105"}), func(t *testing.T, r *Request) { wantBig(t, "chainId", r.Tx.ChainID, "8453") }},
		{"chainId decimal string", txBody(map[string]any{"chainId": "8453"}), func(t *testing.T, r *Request) { wantBig(t, "chainId", r.Tx.ChainID, "8453") }},
		{"chainId zero", txBody(map[string]any{"chainId": "0x0"}), func(t *testing.T, r *Request) { wantBig(t, "chainId", r.Tx.ChainID, "0") }},
		{"to null creates", txBody(map[string]any{"to": null}), func(t *testing.T, r *Request) { wantNilTo(t, r) }},
		{"to empty creates", txBody(map[string]any{"to": ""}), func(t *testing.T, r *Request) { wantNilTo(t, r) }},
		{"to absent creates", txBody(map[string]any{"to": deleted}), func(t *testing.T, r *Request) { wantNilTo(t, r) }},
		{"to lower case", txBody(map[string]any{"to": strings.ToLower(addrA)}), func(t *testing.T, r *Request) {
			if *r.Tx.To != a {
				t.Errorf("to = %v", r.Tx.To)
			}
		}},
		{"from", txBody(map[string]any{"from": addrB}), func(t *testing.T, r *Request) {
			if r.From == nil || *r.From != b {
				t.Errorf("from = %v", r.From)
			}
		}},
		{"value defaults to 0", txBody(map[string]any{"value": deleted}), func(t *testing.T, r *Request) { wantBig(t, "value", r.Tx.Value, "0") }},
		{"value hex", txBody(map[string]any{"value": "0xde0b6b3a7640000"}), func(t *testing.T, r *Request) {
			wantBig(t, "value", r.Tx.Value, "1000000000000000000")
		}},
		{"value JSON number beyond float64", txBody(map[string]any{"value": json.RawMessage("123456789012345678901234567890")}), func(t *testing.T, r *Request) {
			wantBig(t, "value", r.Tx.Value, "123456789012345678901234567890")
		}},
		{"value max uint256", txBody(map[string]any{"value": "0x" + strings.Repeat("f", 64)}), func(t *testing.T, r *Request) {
			if r.Tx.Value.BitLen() != 256 {
				t.Errorf("value = %v", r.Tx.Value)
			}
		}},
		{"value decimal leading zeros", txBody(map[string]any{"value": "007"}), func(t *testing.T, r *Request) { wantBig(t, "value", r.Tx.Value, "7") }},
		{"data", txBody(map[string]any{"data": "0xA9059CBB"}), func(t *testing.T, r *Request) { wantBytes(t, "data", r.Tx.Data, "a9059cbb") }},
		{"input alias", txBody(map[string]any{"data": deleted, "input": "0xa9059cbb"}), func(t *testing.T, r *Request) { wantBytes(t, "data", r.Tx.Data, "a9059cbb") }},
		{"data and input equal", txBody(map[string]any{"data": "0xa9059cbb", "input": "0xA9059CBB"}), func(t *testing.T, r *Request) {
			wantBytes(t, "data", r.Tx.Data, "a9059cbb")
		}},
		{"gasLimit alias", txBody(map[string]any{"gas": deleted, "gasLimit": "0x5208"}), func(t *testing.T, r *Request) { wantInt(t, "gas", int(r.Tx.Gas), 21000) }},
		{"gas and gasLimit equal", txBody(map[string]any{"gasLimit": 21000}), func(t *testing.T, r *Request) { wantInt(t, "gas", int(r.Tx.Gas), 21000) }},
		{"gas max uint64", txBody(map[string]any{"gas": "18446744073709551615"}), func(t *testing.T, r *Request) {
			if r.Tx.Gas != 1<<64-1 {
				t.Errorf("gas = %d", r.Tx.Gas)
			}
		}},
		{"empty access list", txBody(map[string]any{"accessList": []any{}}), func(t *testing.T, r *Request) {
			if r.Tx.AccessList {
				t.Error("AccessList = true for []")
			}
		}},
		{"access list", txBody(map[string]any{"type": 1, "gasPrice": "1", "accessList": []any{map[string]any{"address": addrA, "storageKeys": []string{"0x" + strings.Repeat("00", 32)}}}}), func(t *testing.T, r *Request) {
			if !r.Tx.AccessList {
				t.Error("AccessList = false")
			}
		}},
		{"authorization list", txBody(map[string]any{"type": 4, "authorizationList": []any{map[string]any{"chainId": 8453, "address": addrB, "nonce": 2, "yParity": "0x1", "r": "0x01", "s": "0x02"}}}), func(t *testing.T, r *Request) {
			au := r.Tx.Authorizations
			if r.Tx.Type != TypeSetCode || len(au) != 1 || au[0].ChainID.Int64() != 8453 || au[0].Address != b || au[0].Nonce != 2 {
				t.Errorf("authorizations = %+v", au)
			}
		}},
		{"gate params are ignored", `{"method":"eth_signTransaction","amount_usd":"12.5","decoded":{"x":1},"tx":` + txJSON() + `}`, func(t *testing.T, r *Request) {}},
		{"requestId", `{"method":"eth_signTransaction","requestId":"req-79:a_b.c","tx":` + txJSON() + `}`, func(t *testing.T, r *Request) {
			if r.RequestID != "req-79:a_b.c" {
				t.Errorf("requestId = %q", r.RequestID)
			}
		}},
	}
}

func TestParseBodyTx(t *testing.T) {
	for _, c := range txCases() {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseBody([]byte(c.body))
			if err != nil {
				t.Fatalf("ParseBody(%s) = %v", c.body, err)
			}
			if r.Method != MethodSignTransaction || r.Tx == nil {
				t.Fatalf("ParseBody = %+v", r)
			}
			c.check(t, r)
			requireRoundTrip(t, r)
		})
	}
}

// txJSON is txBody's tx alone.
func txJSON() string {
	var body map[string]json.RawMessage
	if err := json.Unmarshal([]byte(txBody(nil)), &body); err != nil {
		panic(err)
	}
	return string(body["tx"])
}

func wantInt(t *testing.T, what string, got, want int) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %d, want %d", what, got, want)
	}
}

// wantBig checks a big.Int against its decimal form; "" wants nil.
func wantBig(t *testing.T, what string, got *big.Int, want string) {
	t.Helper()
	if got == nil && want != "" || got != nil && got.String() != want {
		t.Errorf("%s = %v, want %q", what, got, want)
	}
}

func wantBytes(t *testing.T, what string, got []byte, wantHex string) {
	t.Helper()
	if fmt.Sprintf("%x", got) != wantHex {
		t.Errorf("%s = %x, want %s", what, got, wantHex)
	}
}

func wantNilTo(t *testing.T, r *Request) {
	t.Helper()
	if r.Tx.To != nil {
		t.Errorf("to = %v, want nil (contract creation)", r.Tx.To)
	}
}

// messageCase is a personal_sign or eth_sign body and what it parses to.
type messageCase struct {
	name, body string
	method     string
	msg        string // hex of Message or Hash
	hex        bool
}

func messageCases() []messageCase {
	hash := strings.Repeat("cd", 32)
	return []messageCase{
		{"text", `{"method":"personal_sign","message":"hello\nworld"}`, MethodPersonalSign, "68656c6c6f0a776f726c64", false},
		{"hex", `{"method":"personal_sign","message":"0x68656C6C6F"}`, MethodPersonalSign, "68656c6c6f", true},
		{"empty hex", `{"method":"personal_sign","message":"0x"}`, MethodPersonalSign, "", true},
		{"empty text", `{"method":"personal_sign","message":""}`, MethodPersonalSign, "", false},
		{"0x that is not hex is text", `{"method":"personal_sign","message":"0xZZ marks"}`, MethodPersonalSign, "30785a5a206d61726b73", false},
		{"0X upper-case prefix is text", `{"method":"personal_sign","message":"0XAB"}`, MethodPersonalSign, "30584142", false},
		{"requestId", `{"method":"personal_sign","requestId":"r1","message":"hi"}`, MethodPersonalSign, "6869", false},
		{"eth_sign", `{"method":"eth_sign","hash":"0x` + hash + `"}`, MethodSign, hash, false},
		{"eth_sign gate params", `{"method":"eth_sign","hash":"0x` + hash + `","amount_usd":"1"}`, MethodSign, hash, false},
	}
}

func TestParseBodyMessages(t *testing.T) {
	for _, c := range messageCases() {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseBody([]byte(c.body))
			if err != nil {
				t.Fatalf("ParseBody(%s) = %v", c.body, err)
			}
			got := r.Message
			if c.method == MethodSign {
				got = r.Hash
			}
			if r.Method != c.method || fmt.Sprintf("%x", got) != c.msg || r.MessageHex != c.hex {
				t.Fatalf("ParseBody(%s) = %+v; want method %s, payload %s, hex %v", c.body, r, c.method, c.msg, c.hex)
			}
			requireRoundTrip(t, r)
		})
	}
}

func TestParseQuantity(t *testing.T) {
	cases := []struct {
		name, raw string
		bits      int
		want      string // decimal, or "error: <substring>"
	}{
		{"number", `1000`, 256, "1000"},
		{"zero number", `0`, 256, "0"},
		{"decimal string", `"1000"`, 256, "1000"},
		{"hex", `"0x3e8"`, 256, "1000"},
		{"hex zero", `"0x0"`, 256, "0"},
		{"hex upper digits", `"0x3E8"`, 256, "1000"},
		{"hex leading zeros", `"0x00003e8"`, 256, "1000"},
		{"max uint256", `"0x` + strings.Repeat("f", 64) + `"`, 256, new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1)).String()},
		{"max uint64", `18446744073709551615`, 64, "18446744073709551615"},
		{"uint64 overflow", `18446744073709551616`, 64, "error: more than a uint64"},
		{"uint160 overflow", `"0x1` + strings.Repeat("0", 40) + `"`, 160, "error: more than a uint160"},
		{"hex with 65 digits", `"0x1` + strings.Repeat("0", 64) + `"`, 256, "error: more than a uint256"},
		{"hex with many leading zeros", `"0x` + strings.Repeat("0", 100) + `1"`, 256, "1"},
		{"negative number", `-1`, 256, "error: negative"},
		{"negative zero", `-0`, 256, "error: negative"},
		{"negative string", `"-1"`, 256, "error: negative"},
		{"negative hex", `"-0x1"`, 256, "error: negative"},
		{"fraction", `1.5`, 256, "error: whole number"},
		{"fraction string", `"1.0"`, 256, "error: whole number"},
		{"exponent", `1e3`, 256, "error: exponent"},
		{"exponent string", `"1E3"`, 256, "error: exponent"},
		{"plus", `"+1"`, 256, "error: no sign"},
		{"leading space", `" 1"`, 256, "error: whitespace"},
		{"trailing newline", `"1\n"`, 256, "error: whitespace"},
		{"inner space", `"1 000"`, 256, "error: whitespace"},
		{"empty string", `""`, 256, "error: empty string"},
		{"empty raw", ``, 256, "error: is empty"},
		{"bare 0x", `"0x"`, 256, "error: no digits"},
		{"bad hex", `"0x12g"`, 256, "error: hex digits"},
		{"word", `"ten"`, 256, "error: not a decimal or 0x-hex"},
		{"bool", `true`, 256, "error: want a number or a string"},
		{"null", `null`, 256, "error: not a JSON integer"},
		{"array", `[1]`, 256, "error: want a number or a string"},
		{"leading zero number", `01`, 256, "error: not a JSON integer"},
		{"bad escape", `"\x"`, 256, "error: not a valid JSON string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, err := parseUint("tx.value", json.RawMessage(c.raw), c.bits)
			if want, isErr := strings.CutPrefix(c.want, "error: "); isErr {
				if err == nil {
					t.Fatalf("parseUint(%s) = %v; want an error", c.raw, n)
				}
				requireInvalid(t, err, "tx.value")
				requireInvalid(t, err, want)
				return
			}
			if err != nil || n.String() != c.want {
				t.Fatalf("parseUint(%s) = %v, %v; want %s", c.raw, n, err, c.want)
			}
		})
	}
}

// TestParamsCanonical: Params gives quantities as decimal strings and
// addresses in EIP-55 form, and drops the gate's params.
func TestParamsCanonical(t *testing.T) {
	r, err := ParseBody([]byte(txBody(map[string]any{"to": strings.ToLower(addrA), "chainId": "0x2105", "input": "0xab", "data": deleted})))
	if err != nil {
		t.Fatal(err)
	}
	var tx map[string]any
	if err := json.Unmarshal(r.Params()[keyTx], &tx); err != nil {
		t.Fatal(err)
	}
	if tx["to"] != addrA || tx["chainId"] != "8453" || tx["data"] != "0xab" || tx["input"] != nil || tx["type"] != float64(2) {
		t.Errorf("Params tx = %v", tx)
	}
	if (&Request{}).Params()[keyTx] != nil {
		t.Error("the zero Request has params")
	}
}

// TestParamsMessageBytes: a message built in code is given back as the
// bytes it holds, as hex when text would not read back the same.
func TestParamsMessageBytes(t *testing.T) {
	cases := []struct {
		name string
		msg  string
		want string
	}{
		{"text", "hi", `"hi"`},
		{"invalid UTF-8", "\xff", `"0xff"`},
		{"text spelling hex", "0xab", `"0x30786162"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Request{Method: MethodPersonalSign, Message: []byte(c.msg)}
			got := r.Params()[keyMessage]
			if string(got) != c.want {
				t.Fatalf("Params()[message] = %s, want %s", got, c.want)
			}
			again, err := ParseParams(MethodPersonalSign, r.Params())
			if err != nil || string(again.Message) != c.msg {
				t.Fatalf("ParseParams(Params()) = %+v, %v; want the message %q", again, err, c.msg)
			}
		})
	}
}

func TestParseParams(t *testing.T) {
	hash := json.RawMessage(`"0x` + strings.Repeat("ab", 32) + `"`)
	cases := []struct {
		name   string
		method string
		params map[string]json.RawMessage
		want   string // "" for success, else what the error says
	}{
		{"eth_sign", MethodSign, map[string]json.RawMessage{keyHash: hash}, ""},
		{"gate params are not read", MethodSign, map[string]json.RawMessage{keyHash: hash, "amount_usd": json.RawMessage("{"), "decoded": nil}, ""},
		{"nil params", MethodSign, nil, `has no "hash"`},
		{"empty method", "", map[string]json.RawMessage{keyHash: hash}, "unknown signing method"},
		{"method inside params", MethodSign, map[string]json.RawMessage{keyHash: hash, keyMethod: json.RawMessage(`"eth_sign"`)}, `unknown key "method"`},
		{"invalid JSON param", MethodSign, map[string]json.RawMessage{keyHash: json.RawMessage(`"0x`)}, "hash is not valid JSON"},
		{"param with trailing data", MethodSign, map[string]json.RawMessage{keyHash: json.RawMessage(string(hash) + ` 1`)}, "hash has data after"},
		{"oversized params", MethodPersonalSign, map[string]json.RawMessage{keyMessage: json.RawMessage(`"` + strings.Repeat("a", maxBodyBytes) + `"`)}, "more than 1048576 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseParams(c.method, c.params)
			if c.want == "" {
				if err != nil {
					t.Fatalf("ParseParams = %v", err)
				}
				requireRoundTrip(t, r)
				return
			}
			if err == nil {
				t.Fatalf("ParseParams = %+v; want an error", r)
			}
			requireInvalid(t, err, c.want)
		})
	}
}

// requireRoundTrip: a parsed request's Params parse to an equal request,
// both as they are and once marshalled into a body (as a stored request
// is).
func requireRoundTrip(t testing.TB, r *Request) {
	t.Helper()
	params := r.Params()
	again, err := ParseParams(r.Method, params)
	if err != nil {
		t.Fatalf("ParseParams(%s, Params()) = %v; params %s", r.Method, err, mustJSON(params))
	}
	if diff := requestDiff(r, again); diff != "" {
		t.Fatalf("ParseParams(Params()) differs in %s; params %s", diff, mustJSON(params))
	}
	params[keyMethod] = mustJSON(r.Method)
	body := mustJSON(params)
	again, err = ParseBody(body)
	if err != nil {
		t.Fatalf("ParseBody(re-encoded %s) = %v", body, err)
	}
	if diff := requestDiff(r, again); diff != "" {
		t.Fatalf("the re-encoded body %s parses differently in %s", body, diff)
	}
}

// requestDiff names the first field in which a and b differ, or "".
func requestDiff(a, b *Request) string {
	switch {
	case a.Method != b.Method:
		return "method"
	case a.RequestID != b.RequestID:
		return "requestId"
	case !sameAddr(a.From, b.From):
		return "from"
	case !bytes.Equal(a.Message, b.Message) || a.MessageHex != b.MessageHex:
		return "message"
	case !bytes.Equal(a.Hash, b.Hash):
		return "hash"
	case !bytes.Equal(a.accessList, b.accessList):
		return "accessList"
	case (a.Tx == nil) != (b.Tx == nil) || a.Tx != nil && txDiff(a.Tx, b.Tx) != "":
		if a.Tx == nil || b.Tx == nil {
			return "tx"
		}
		return "tx." + txDiff(a.Tx, b.Tx)
	case (a.TypedData == nil) != (b.TypedData == nil) || a.TypedData != nil && typedDataDiff(a.TypedData, b.TypedData) != "":
		return "typedData"
	}
	return ""
}

func txDiff(a, b *Tx) string {
	switch {
	case a.Type != b.Type:
		return "type"
	case !sameBig(a.ChainID, b.ChainID):
		return "chainId"
	case a.Nonce != b.Nonce:
		return "nonce"
	case !sameAddr(a.To, b.To):
		return "to"
	case !sameBig(a.Value, b.Value):
		return "value"
	case !bytes.Equal(a.Data, b.Data):
		return "data"
	case a.Gas != b.Gas:
		return "gas"
	case !sameBig(a.MaxFeePerGas, b.MaxFeePerGas) || !sameBig(a.MaxPriorityFeePerGas, b.MaxPriorityFeePerGas) || !sameBig(a.GasPrice, b.GasPrice):
		return "fees"
	case a.AccessList != b.AccessList:
		return "accessList"
	case !slices.EqualFunc(a.Authorizations, b.Authorizations, func(x, y Authorization) bool {
		return sameBig(x.ChainID, y.ChainID) && x.Address == y.Address && x.Nonce == y.Nonce
	}):
		return "authorizationList"
	}
	return ""
}

func typedDataDiff(a, b *TypedData) string {
	switch {
	case !bytes.Equal(a.raw, b.raw):
		return "raw"
	case a.PrimaryType != b.PrimaryType:
		return "primaryType"
	case a.Domain.Name != b.Domain.Name || a.Domain.Version != b.Domain.Version ||
		!sameBig(a.Domain.ChainID, b.Domain.ChainID) || !sameAddr(a.Domain.VerifyingContract, b.Domain.VerifyingContract):
		return "domain"
	case fmt.Sprint(a.Types) != fmt.Sprint(b.Types):
		return "types"
	case fmt.Sprint(rawStrings(a.Message)) != fmt.Sprint(rawStrings(b.Message)):
		return "message"
	}
	return ""
}

func rawStrings(m map[string]json.RawMessage) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

func sameBig(a, b *big.Int) bool {
	return a == nil && b == nil || a != nil && b != nil && a.Cmp(b) == 0
}

func sameAddr(a, b *Address) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}
