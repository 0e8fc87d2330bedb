package warden_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
)

func TestDecodeRequest(t *testing.T) {
	cases := []struct {
		name, in string
		wantErr  string // empty: must decode
	}{
		{name: "minimal", in: `{"capability":"tool","action":"call","resource":"get_price"}`},
		{name: "full", in: `{"capability":"trade","action":"swap","resource":"ETH","params":{"amount_usd":"50"},"autonomous":true,"requested_by":"cron:rebalance","session":"s1","trace_id":"t1","raw":{"x":1}}`},
		{name: "surrounding space", in: " \n{\"capability\":\"tool\",\"action\":\"call\"}\n"},
		{name: "empty", in: "", wantErr: "no request"},
		{name: "not json", in: "capability=tool", wantErr: "malformed"},
		{name: "truncated", in: `{"capability":"tool"`, wantErr: "ends early"},
		{name: "array", in: `[1,2]`, wantErr: "must be"},
		{name: "tier chosen by caller", in: `{"capability":"tool","action":"call","tier":1}`, wantErr: `unknown field "tier"`},
		{name: "unknown field", in: `{"capability":"tool","action":"call","verdict":"allow"}`, wantErr: "unknown field"},
		{name: "two objects", in: `{"capability":"tool","action":"call"}{"capability":"tool","action":"call"}`, wantErr: "data after"},
		{name: "no capability", in: `{"action":"call"}`, wantErr: "capability"},
		{name: "upper-case capability", in: `{"capability":"TOOL","action":"call"}`, wantErr: "capability"},
		{name: "no action", in: `{"capability":"tool"}`, wantErr: "action"},
		{name: "wrong type", in: `{"capability":"tool","action":"call","autonomous":"yes"}`, wantErr: "autonomous"},
		{name: "control character in session", in: `{"capability":"tool","action":"call","session":"a\u0000b"}`, wantErr: "session"},
		{name: "too large", in: `{"capability":"tool","action":"call","context":"` + strings.Repeat("a", warden.MaxRequestBytes) + `"}`, wantErr: "larger than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := warden.DecodeRequest(strings.NewReader(c.in))
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("DecodeRequest(%.60q) = %v, want success", c.in, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("DecodeRequest(%.60q) = %+v, want error containing %q", c.in, r, c.wantErr)
			}
			if !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("DecodeRequest(%.60q) error %q, want it to contain %q", c.in, err, c.wantErr)
			}
			var we *warden.Error
			if !errors.As(err, &we) || we.Code != warden.EInvalid {
				t.Errorf("error %v is not a *warden.Error with code invalid", err)
			}
		})
	}
}

func FuzzDecodeRequest(f *testing.F) {
	f.Add(`{"capability":"tool","action":"call","resource":"get_price"}`)
	f.Add(`{"capability":"trade","action":"swap","params":{"amount_usd":"1e9"},"autonomous":true}`)
	f.Add(`{"capability":"tool","action":"call","tier":1}`)
	f.Add(`{"capability":"shell","action":"exec","resource":"rm -rf /","raw":{"a":[1,{"b":null}]}}`)
	f.Fuzz(func(t *testing.T, in string) {
		r, err := warden.DecodeRequest(strings.NewReader(in))
		if err != nil {
			if r != nil {
				t.Fatalf("error %v with a non-nil request", err)
			}
			if warden.ErrorCodeOf(err) != warden.EInvalid {
				t.Fatalf("error %v does not have code invalid", err)
			}
			return
		}
		if r.Tier != 0 {
			t.Fatalf("decoded a caller-chosen tier %v", r.Tier)
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("decoded request does not validate: %v", err)
		}
		// Encoding and decoding again gives the same request.
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		r2, err := warden.DecodeRequest(strings.NewReader(string(b)))
		if err != nil {
			t.Fatalf("re-decode of %s: %v", b, err)
		}
		b2, _ := json.Marshal(r2)
		if string(b) != string(b2) {
			t.Fatalf("round trip changed the request:\n%s\n%s", b, b2)
		}
	})
}
