package signing

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
)

// requireEInvalid fails unless err is an EInvalid *warden.Error: the parsers
// never fail any other way.
func requireEInvalid(t *testing.T, what string, err error) {
	t.Helper()
	var e *warden.Error
	if !errors.As(err, &e) || e.Code != warden.EInvalid || e.Message == "" {
		t.Fatalf("%s: error %v (%T) is not an EInvalid *warden.Error with a message", what, err, err)
	}
}

// seedBodies are the corpus's bodies and the table tests' bodies.
func seedBodies(f *testing.F) []string {
	var seeds []string
	if cases, ok := corpusCases(f); ok {
		for _, c := range cases {
			seeds = append(seeds, string(c.body))
		}
	}
	for _, c := range bodyErrorCases() {
		if len(c.body) < 4096 {
			seeds = append(seeds, c.body)
		}
	}
	for _, c := range txCases() {
		seeds = append(seeds, c.body)
	}
	for _, c := range messageCases() {
		seeds = append(seeds, c.body)
	}
	for _, c := range typedDataCases() {
		if len(c.body) < 4096 {
			seeds = append(seeds, c.body)
		}
	}
	for _, c := range permitCases() {
		seeds = append(seeds, typedBody(c.td))
	}
	return seeds
}

// FuzzParseBody: any body is either an EInvalid error or a request that
// holds the parser's promises (a known method and its one payload, amounts
// within their widths, payloads within their limits), whose Params parse
// back to the same request, both as params and as a body.
func FuzzParseBody(f *testing.F) {
	for _, s := range seedBodies(f) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseBody(body)
		if err != nil {
			requireEInvalid(t, "ParseBody", err)
			return
		}
		checkRequest(t, r)
		requireRoundTrip(t, r)
	})
}

// checkRequest holds a parsed request to the parser's promises.
func checkRequest(t *testing.T, r *Request) {
	t.Helper()
	payloads := 0
	for _, set := range []bool{r.Tx != nil, r.TypedData != nil, r.Hash != nil, r.Method == MethodPersonalSign} {
		if set {
			payloads++
		}
	}
	if _, ok := methodParam[r.Method]; !ok || payloads != 1 {
		t.Fatalf("request %+v: method %q with %d payloads", r, r.Method, payloads)
	}
	if r.RequestID != "" && !validRequestID(r.RequestID) {
		t.Fatalf("requestId %q", r.RequestID)
	}
	switch r.Method {
	case MethodSignTransaction:
		tx := r.Tx
		if tx.Type < 0 || tx.Type > maxKnownTxType || tx.Value == nil || len(tx.Data) > MaxDataBytes {
			t.Fatalf("tx %+v", tx)
		}
		for _, n := range []*big.Int{tx.ChainID, tx.Value, tx.MaxFeePerGas, tx.MaxPriorityFeePerGas, tx.GasPrice} {
			if n != nil && (n.Sign() < 0 || n.BitLen() > 256) {
				t.Fatalf("tx %+v has an amount out of range: %v", tx, n)
			}
		}
		if tx.Type <= TypeAccessList && tx.GasPrice == nil || tx.Type >= TypeDynamicFee && (tx.MaxFeePerGas == nil || tx.MaxPriorityFeePerGas == nil) {
			t.Fatalf("tx %+v lacks the fees of its type", tx)
		}
		_ = tx.MaxFee()
	case MethodPersonalSign:
		if len(r.Message) > MaxMessageBytes {
			t.Fatalf("message of %d bytes", len(r.Message))
		}
		_ = Readable(r.Message)
	case MethodSign:
		if len(r.Hash) != 32 {
			t.Fatalf("hash of %d bytes", len(r.Hash))
		}
	case MethodSignTypedData:
		if r.TypedData.PrimaryType == "" || len(r.TypedData.raw) > MaxTypedDataBytes {
			t.Fatalf("typed data %+v", r.TypedData)
		}
	}
}

// callLayout is each known function's words, by the Call field each holds,
// written out apart from the decoder's table.
var callLayout = map[string][]string{
	CallTransfer:          {"to", "amount"},
	CallTransferFrom:      {"from", "to", "amount"},
	CallApprove:           {"spender", "amount"},
	CallIncreaseAllowance: {"spender", "amount"},
	CallSetApprovalForAll: {"operator", "approved"},
	CallPermit:            {"owner", "spender", "amount", "deadline", "v", "r", "s"},
	CallPermit2Approve:    {"token", "spender", "amount", "deadline"},
}

// encodeCall re-encodes a decoded call word by word from its fields. A
// permit's v, r and s, which a Call does not keep, are taken from data.
func encodeCall(t *testing.T, c *Call, data []byte) []byte {
	out := append([]byte{}, c.Selector[:]...)
	for i, field := range callLayout[c.Name] {
		var w [32]byte
		addr := map[string]*Address{"to": c.To, "from": c.From, "spender": c.Spender, "operator": c.Operator, "owner": c.Owner, "token": c.Token}
		switch field {
		case "amount", "deadline":
			n := c.Amount
			if field == "deadline" {
				n = c.Deadline
			}
			n.FillBytes(w[:])
		case "approved":
			if c.Approved {
				w[31] = 1
			}
		case "v", "r", "s":
			copy(w[:], data[4+32*i:])
			if field == "v" && !zero(w[:31]) {
				t.Fatalf("DecodeCall accepted a v word of %x", w)
			}
		default:
			copy(w[12:], addr[field][:])
		}
		out = append(out, w[:]...)
	}
	return out
}

// FuzzDecodeCall: any calldata is an EInvalid error, nil for empty data, an
// unknown call (Name ""), or a known call whose fields re-encode word by
// word to exactly the input.
func FuzzDecodeCall(f *testing.F) {
	for _, c := range callCases() {
		f.Add(c.data)
	}
	if cases, ok := corpusCases(f); ok {
		for _, c := range cases {
			if r, err := ParseBody(bytes.ReplaceAll(c.body, []byte(corpusBadChecksum[0]), []byte(strings.ToLower(corpusBadChecksum[0])))); err == nil && r.Tx != nil {
				f.Add(r.Tx.Data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeCall(data)
		switch {
		case err != nil:
			requireEInvalid(t, "DecodeCall", err)
			if c != nil {
				t.Fatalf("DecodeCall(%x) = %+v with an error", data, c)
			}
		case len(data) == 0:
			if c != nil {
				t.Fatalf("DecodeCall(empty) = %+v", c)
			}
		case len(data) < 4:
			t.Fatalf("DecodeCall(%x) accepted a partial selector", data)
		case c.Selector != [4]byte(data[:4]):
			t.Fatalf("DecodeCall(%x) selector %x", data, c.Selector)
		case c.Name == "":
			if _, known := functions[c.Selector]; known {
				t.Fatalf("DecodeCall(%x) left a known selector unnamed", data)
			}
		default:
			if got := encodeCall(t, c, data); !bytes.Equal(got, data) {
				t.Fatalf("DecodeCall(%x) = %s, which re-encodes to %x", data, callString(c), got)
			}
			_ = c.Grants()
			_ = Unlimited(c.Amount)
		}
	})
}

// FuzzTypedDataPermit: any typed data is an EInvalid error or a payload
// whose permit, when it is one, names a spender, a deadline and tokens with
// amounts within their widths, and only for the domain it belongs to.
func FuzzTypedDataPermit(f *testing.F) {
	for _, c := range permitCases() {
		f.Add(string(mustJSON(c.td)))
	}
	for _, c := range typedDataCases() {
		var body map[string]json.RawMessage
		if json.Unmarshal([]byte(c.body), &body) == nil && len(body[keyTypedData]) < 4096 {
			f.Add(string(body[keyTypedData]))
		}
	}
	if cases, ok := corpusCases(f); ok {
		for _, c := range cases {
			var body map[string]json.RawMessage
			if json.Unmarshal(c.body, &body) == nil && body[keyTypedData] != nil {
				f.Add(string(body[keyTypedData]))
			}
		}
	}
	max160 := new(big.Int).Lsh(big.NewInt(1), 160)
	max48 := new(big.Int).Lsh(big.NewInt(1), 48)
	f.Fuzz(func(t *testing.T, typed string) {
		r, err := ParseParams(MethodSignTypedData, map[string]json.RawMessage{keyTypedData: json.RawMessage(typed)})
		if err != nil {
			requireEInvalid(t, "ParseParams", err)
			return
		}
		requireRoundTrip(t, r)
		td := r.TypedData
		p, err := td.Permit()
		if err != nil {
			requireEInvalid(t, "Permit", err)
			if p != nil {
				t.Fatalf("Permit() = %+v with an error", p)
			}
			return
		}
		if p == nil {
			if td.PrimaryType == "Permit" || td.Domain.Name == permit2Name || td.Domain.VerifyingContract != nil && *td.Domain.VerifyingContract == Permit2Address {
				t.Fatalf("typed data %s looks like a permit but Permit() = nil", typed)
			}
			return
		}
		if p.Deadline == nil || p.Deadline.Sign() < 0 {
			t.Fatalf("permit %+v has no deadline", p)
		}
		atPermit2 := td.Domain.Name == permit2Name && td.Domain.VerifyingContract != nil && *td.Domain.VerifyingContract == Permit2Address
		switch p.Kind {
		case PermitSingle, PermitBatch:
			if !atPermit2 || p.Owner != nil || p.Kind == PermitSingle && len(p.Tokens) != 1 {
				t.Fatalf("permit %+v from typed data %s", p, typed)
			}
			for _, tok := range p.Tokens {
				if tok.Amount == nil || tok.Amount.Sign() < 0 || tok.Amount.Cmp(max160) >= 0 || tok.Expiration == nil || tok.Expiration.Cmp(max48) >= 0 {
					t.Fatalf("permit token %+v out of range", tok)
				}
			}
		case PermitEIP2612:
			if atPermit2 || p.Owner == nil || len(p.Tokens) != 1 || p.Tokens[0].Token != *td.Domain.VerifyingContract || p.Tokens[0].Amount == nil {
				t.Fatalf("permit %+v from typed data %s", p, typed)
			}
		default:
			t.Fatalf("permit kind %q", p.Kind)
		}
	})
}

// formatSIWE writes s as the shortest EIP-4361 message.
func formatSIWE(s *SIWE) string {
	text := s.Domain + siwePreamble + "\n" + Checksum(s.Address) + "\n\nURI: " + s.URI + "\nVersion: " + s.Version +
		"\nChain ID: " + big.NewInt(s.ChainID).String() + "\nNonce: " + s.Nonce + "\nIssued At: " + s.IssuedAt
	if s.ExpirationTime != "" {
		text += "\nExpiration Time: " + s.ExpirationTime
	}
	return text
}

// FuzzParseSIWE: a sign-in message is readable text, names a domain, a
// positive chain id and version 1, and prints to a message that parses to
// the same sign-in.
func FuzzParseSIWE(f *testing.F) {
	for _, c := range siweCases() {
		f.Add(c.text)
	}
	for _, c := range readableCases() {
		f.Add(c.msg)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, ok := ParseSIWE(text)
		if !ok {
			if s != nil {
				t.Fatalf("ParseSIWE(%q) = %+v, false", text, s)
			}
			return
		}
		if !Readable([]byte(text)) || s.Domain == "" || s.ChainID <= 0 || s.Version != "1" || len(s.Nonce) < 8 {
			t.Fatalf("ParseSIWE(%q) = %+v", text, s)
		}
		again, ok := ParseSIWE(formatSIWE(s))
		if !ok || *again != *s {
			t.Fatalf("ParseSIWE(%q) = %+v; printed and parsed again: %+v, %v", text, s, again, ok)
		}
	})
}
