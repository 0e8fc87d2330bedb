package paper_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/finance/paper"
)

// populate sets every exported field of v, recursively, to a value that is
// not its zero value, so that a round trip dropping any field shows.
func populate(t *testing.T, v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(t0.Add(time.Duration(*n) * time.Second)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				populate(t, v.Field(i), n)
			}
		}
	case reflect.String:
		v.SetString("s" + strings.Repeat("x", *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		if v.Type() == reflect.TypeFor[warden.USD]() {
			v.SetInt(int64(*n)*warden.MicrosPerDollar + 123_456) // a fraction of a dollar
		} else {
			v.SetInt(int64(*n))
		}
	case reflect.Float64:
		v.SetFloat(float64(*n) + 0.25)
	default:
		t.Fatalf("populate: no value for a %s; teach the test", v.Type())
	}
}

func TestBookJSONRoundTrip(t *testing.T) {
	var pos finance.Position
	var tok finance.Token
	n := 0
	populate(t, reflect.ValueOf(&pos).Elem(), &n)
	populate(t, reflect.ValueOf(&tok).Elem(), &n)
	in := paper.Book{
		Funded: true, Cash: -1_234_567_890_123, // negative, with a fraction: every digit matters
		Balances:  map[string]float64{tok.Key(): 0.1 + 0.2},
		Tokens:    map[string]finance.Token{tok.Key(): tok},
		Positions: map[string]finance.Position{pos.ID: pos},
	}
	data, err := json.Marshal(&in)
	if err != nil {
		t.Fatal(err)
	}
	var out paper.Book
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("Unmarshal(%s): %v", data, err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Errorf("round trip of %s\n gave %+v\nwant %+v", data, out, in)
	}
	for _, tc := range []struct{ name, data string }{
		{"unknown field", `{"funded":true,"cash":1,"loans":{}}`},
		{"unknown position field", `{"positions":{"p":{"id":"p","funding":1}}}`},
		{"cash with 7 decimals", `{"cash":1.0000001}`},
		{"cash as an exponent", `{"cash":1e3}`},
		{"cash as a string", `{"cash":"5"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b paper.Book
			if err := json.Unmarshal([]byte(tc.data), &b); err == nil {
				t.Errorf("Unmarshal(%s) = %+v; want an error", tc.data, b)
			}
		})
	}
}

func TestFillJSONRoundTrip(t *testing.T) {
	var in finance.Fill
	n := 0
	populate(t, reflect.ValueOf(&in).Elem(), &n)
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := paper.DecodeFill(data)
	if err != nil || !reflect.DeepEqual(out, in) {
		t.Errorf("DecodeFill(%s) = %+v, %v; want %+v", data, out, err, in)
	}
}
