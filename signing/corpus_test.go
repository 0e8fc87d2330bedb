package signing

import (
	"bufio"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
)

// corpusPath is the shared finance and signing corpus, beside the module.
const corpusPath = "../../shared/corpus/finance-signing-cases.jsonl"

// corpusBadChecksum are addresses the corpus writes in mixed case with a
// wrong EIP-55 checksum. ParseAddress rightly refuses them (a wrong checksum
// is what EIP-55 exists to catch), so the test checks that refusal and then
// reads the case with the address in lower case, which carries no checksum.
var corpusBadChecksum = []string{"0x7a3F9e2b5C1d4E6f8A0b2C4d6E8f0A1b3C5d9E21"}

// corpusCase is one signing case: its name, expected decision and the
// request body built from its input.
type corpusCase struct {
	name, expect, method string
	body                 []byte
}

// corpusCases reads the corpus's signing cases; ok is false when the file
// is missing.
func corpusCases(tb testing.TB) (cases []corpusCase, ok bool) {
	tb.Helper()
	f, err := os.Open(corpusPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var line struct {
			Case   string                     `json:"case"`
			Expect string                     `json:"expect"`
			Input  map[string]json.RawMessage `json:"input"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			tb.Fatalf("corpus line %.80s: %v", sc.Text(), err)
		}
		if string(line.Input["module"]) != `"signing"` {
			continue
		}
		for _, k := range []string{"module", "state", "history", "policy"} {
			delete(line.Input, k)
		}
		var method string
		_ = json.Unmarshal(line.Input[keyMethod], &method)
		body, err := json.Marshal(line.Input)
		if err != nil {
			tb.Fatal(err)
		}
		cases = append(cases, corpusCase{name: line.Case, expect: line.Expect, method: method, body: body})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return cases, true
}

// TestCorpus runs every signing case of the shared corpus through the
// parsers and holds the ones that test a parser to their outcome.
func TestCorpus(t *testing.T) {
	cases, ok := corpusCases(t)
	if !ok {
		t.Skipf("%s is missing", corpusPath)
	}
	if len(cases) == 0 {
		t.Fatal("the corpus has no signing cases")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := string(c.body)
			for _, bad := range corpusBadChecksum {
				if strings.Contains(body, bad) {
					_, err := ParseBody(c.body)
					requireInvalid(t, err, "address "+bad+" has a wrong EIP-55 checksum")
					body = strings.ReplaceAll(body, bad, strings.ToLower(bad))
				}
			}
			if c.method == "approvePending" {
				// The approval of a pending request is the service's flow
				// (a human's channel), never an agent's signing request.
				_, err := ParseBody([]byte(body))
				requireInvalid(t, err, "unknown signing method")
				return
			}
			r, parseErr := ParseBody([]byte(body))
			var call *Call
			var callErr, permitErr error
			var permit *Permit
			if parseErr == nil {
				requireRoundTrip(t, r)
				if r.Tx != nil && len(r.Tx.Data) > 0 {
					call, callErr = DecodeCall(r.Tx.Data)
				}
				if r.TypedData != nil {
					permit, permitErr = r.TypedData.Permit()
				}
			}
			check, special := corpusChecks[c.name]
			if special {
				check(t, r, parseErr, call, callErr, permit, permitErr)
				return
			}
			if c.expect != "deny" {
				for _, err := range []error{parseErr, callErr, permitErr} {
					if err != nil {
						t.Fatalf("a %s case fails to parse: %v", c.expect, err)
					}
				}
			}
		})
	}
	for name := range corpusChecks {
		if !slicesContainsCase(cases, name) {
			t.Errorf("corpus case %s is gone; its check no longer runs", name)
		}
	}
}

func slicesContainsCase(cases []corpusCase, name string) bool {
	for _, c := range cases {
		if c.name == name {
			return true
		}
	}
	return false
}

// corpusCheck holds one case to its outcome.
type corpusCheck func(t *testing.T, r *Request, parseErr error, call *Call, callErr error, permit *Permit, permitErr error)

// parsed fails unless the request parsed and its calldata and typed data
// decoded.
func parsed(t *testing.T, parseErr, callErr, permitErr error) {
	t.Helper()
	for _, err := range []error{parseErr, callErr, permitErr} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

var corpusChecks = map[string]corpusCheck{
	"sign-negative-value": func(t *testing.T, r *Request, parseErr error, _ *Call, _ error, _ *Permit, _ error) {
		requireInvalid(t, parseErr, `tx.value is "-1": a quantity cannot be negative`)
	},
	"sign-partial-selector": func(t *testing.T, r *Request, parseErr error, call *Call, callErr error, _ *Permit, _ error) {
		parsed(t, parseErr, nil, nil)
		requireInvalid(t, callErr, "calldata shorter than a 4-byte selector")
	},
	"sign-erc20-dirty-padding": func(t *testing.T, r *Request, parseErr error, call *Call, callErr error, _ *Permit, _ error) {
		parsed(t, parseErr, nil, nil)
		requireInvalid(t, callErr, "to (word 1) is not an address")
	},
	"sign-erc20-trailing-bytes": func(t *testing.T, r *Request, parseErr error, call *Call, callErr error, _ *Permit, _ error) {
		parsed(t, parseErr, nil, nil)
		requireInvalid(t, callErr, "is 71 bytes; want exactly 68")
	},
	"xfer-token-amount-in-calldata": func(t *testing.T, r *Request, parseErr error, call *Call, callErr error, _ *Permit, _ error) {
		parsed(t, parseErr, callErr, nil)
		if call == nil || call.Name != CallTransfer || call.Amount.String() != "10000000000" || call.To == nil || Checksum(*call.To) != addrB {
			t.Fatalf("DecodeCall = %s; want a transfer of 10000000000 to %s", callString(call), addrB)
		}
	},
	"sign-chainid-missing": func(t *testing.T, r *Request, parseErr error, _ *Call, callErr error, _ *Permit, _ error) {
		parsed(t, parseErr, callErr, nil)
		if r.Tx.ChainID != nil {
			t.Fatalf("ChainID = %v, want nil", r.Tx.ChainID)
		}
	},
	"sign-contract-creation": func(t *testing.T, r *Request, parseErr error, _ *Call, callErr error, _ *Permit, _ error) {
		parsed(t, parseErr, callErr, nil)
		if r.Tx.To != nil {
			t.Fatalf("To = %v, want nil (contract creation)", r.Tx.To)
		}
	},
	"sign-eip7702-authorization": func(t *testing.T, r *Request, parseErr error, _ *Call, _ error, _ *Permit, _ error) {
		parsed(t, parseErr, nil, nil)
		if r.Tx.Type != TypeSetCode || len(r.Tx.Authorizations) != 1 || Checksum(r.Tx.Authorizations[0].Address) != addrB {
			t.Fatalf("tx = %+v; want type 4 with one authorization for %s", r.Tx, addrB)
		}
	},
	"sign-typed-permit2-unlimited": func(t *testing.T, r *Request, parseErr error, _ *Call, _ error, p *Permit, permitErr error) {
		parsed(t, parseErr, nil, permitErr)
		if p == nil || p.Kind != PermitSingle || len(p.Tokens) != 1 || !Unlimited(p.Tokens[0].Amount) || Checksum(p.Spender) != addrB {
			t.Fatalf("Permit = %s; want an unlimited permit2.single for %s", permitString(p), addrB)
		}
	},
	"sign-personal-hash-blob": func(t *testing.T, r *Request, parseErr error, _ *Call, _ error, _ *Permit, _ error) {
		parsed(t, parseErr, nil, nil)
		if !r.MessageHex || len(r.Message) != 32 || Readable(r.Message) {
			t.Fatalf("message = %x (hex %v); want 32 unreadable bytes", r.Message, r.MessageHex)
		}
	},
	"sign-personal-text": func(t *testing.T, r *Request, parseErr error, _ *Call, _ error, _ *Permit, _ error) {
		parsed(t, parseErr, nil, nil)
		if r.MessageHex || !Readable(r.Message) {
			t.Fatalf("message %q (hex %v) is not readable text", r.Message, r.MessageHex)
		}
		s, ok := ParseSIWE(string(r.Message))
		if !ok || s.Domain != "app.example.com" || s.ChainID != 8453 || Checksum(s.Address) != siweAddr {
			t.Fatalf("ParseSIWE = %+v, %v; want app.example.com on chain 8453 for %s", s, ok, siweAddr)
		}
	},
}
