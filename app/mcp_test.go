package app

import "testing"

func TestLoopbackOrigin(t *testing.T) {
	for origin, want := range map[string]bool{
		"http://localhost:3000":     true,
		"http://127.0.0.1":          true,
		"http://[::1]:8080":         true,
		"https://evil.example":      false,
		"http://127.0.0.1.evil.com": false,
		"null":                      false,
		"":                          false,
	} {
		if got := loopbackOrigin(origin); got != want {
			t.Errorf("loopbackOrigin(%q) = %v, want %v", origin, got, want)
		}
	}
}

func TestCheckMCPName(t *testing.T) {
	for name, ok := range map[string]bool{
		"fs": true, "github": true, "my-server": true, "a_b": true,
		"": false, "a__b": false, "_x": false, "x_": false, "../etc": false, "a b": false, "a/b": false,
	} {
		if err := CheckMCPName(name); (err == nil) != ok {
			t.Errorf("CheckMCPName(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}
