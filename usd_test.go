package warden

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestUSDJSONRoundTrip(t *testing.T) {
	for _, s := range []string{"0", "500", "500.01", "0.000001", "-12.5", "999999999999.999999"} {
		u, err := ParseUSD(strings.TrimPrefix(s, "-"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(s, "-") {
			u = -u
		}
		b, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		var back USD
		if err := json.Unmarshal(b, &back); err != nil || back != u {
			t.Errorf("%s: marshalled %s, read back %v, %v", s, b, back, err)
		}
	}
	for _, bad := range []string{`"abc"`, `1e3`, `--1`, `null`, `1.0000001`} {
		var u USD
		if err := json.Unmarshal([]byte(bad), &u); err == nil {
			t.Errorf("Unmarshal(%s) = %v, want an error", bad, u)
		}
	}
}
