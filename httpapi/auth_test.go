package httpapi_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwarden/warden/httpapi"
)

// fixedToken returns a well-formed token whose secret is the bytes seed,
// seed+1, …, so tests and fuzz seeds are the same on every run.
func fixedToken(scope httpapi.Scope, seed byte) string {
	var b [32]byte
	for i := range b {
		b[i] = seed + byte(i)
	}
	return "wdn_" + string(scope) + "_" + base64.RawURLEncoding.EncodeToString(b[:])
}

var (
	agentToken    = fixedToken(httpapi.ScopeAgent, 1)
	operatorToken = fixedToken(httpapi.ScopeOperator, 101)
	strangerToken = fixedToken(httpapi.ScopeAgent, 201) // well formed, not accepted
	clock         = time.Unix(1_700_000_000, 0)
)

func newVerifier(t testing.TB, now time.Time) *httpapi.Verifier {
	t.Helper()
	toks, err := httpapi.NewTokens(agentToken, operatorToken)
	if err != nil {
		t.Fatal(err)
	}
	return &httpapi.Verifier{Tokens: toks, Now: func() time.Time { return now }}
}

// signed returns a server-side request for target, signed with token at now.
func signed(t testing.TB, method, target, token string, body []byte, now time.Time) *http.Request {
	t.Helper()
	r := httptest.NewRequest(method, target, bytes.NewReader(body))
	if err := httpapi.Sign(r, token, body, now); err != nil {
		t.Fatalf("Sign: %v", err)
	}
	return r
}

// wantSignature computes a signature from the documented format, independently
// of the package.
func wantSignature(token, method, uri string, body []byte, ts, nonce string) string {
	sum := sha256.Sum256(body)
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(method + "\n" + uri + "\n" + hex.EncodeToString(sum[:]) + "\n" + ts + "\n" + nonce))
	return hex.EncodeToString(m.Sum(nil))
}

// wantID computes a token's id from the documented format, independently of
// the package: "wdn_" + scope + "_id_" + the lower-case hex of the first 16
// bytes of SHA-256("warden-token-id\x00" + token).
func wantID(token string) string {
	scope := strings.SplitN(token, "_", 3)[1]
	sum := sha256.Sum256([]byte("warden-token-id" + "\x00" + token))
	return "wdn_" + scope + "_id_" + hex.EncodeToString(sum[:16])
}

// checkNoLeak fails if err's text holds any token or the secret part of one.
func checkNoLeak(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, tok := range []string{agentToken, operatorToken, strangerToken} {
		secret := tok[len(tok)-43:]
		for _, s := range []string{tok, secret, secret[:16]} {
			if strings.Contains(err.Error(), s) {
				t.Errorf("error %q contains a token's secret", err)
			}
		}
	}
}

func authError(t testing.TB, err error) *httpapi.AuthError {
	t.Helper()
	var ae *httpapi.AuthError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v (%T) is not an *AuthError", err, err)
	}
	return ae
}

func TestStringToSign(t *testing.T) {
	got := httpapi.StringToSign("POST", "/v1/check?a=1", []byte("hi"), "1700000000", "nonce-nonce-nonce")
	want := "POST\n/v1/check?a=1\n8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4\n1700000000\nnonce-nonce-nonce"
	if got != want {
		t.Errorf("StringToSign = %q, want %q", got, want)
	}
}

func TestSignVerifyRoundTrip(t *testing.T) {
	tests := []struct {
		name, method, target, token string
		body                        []byte
		want                        httpapi.Scope
	}{
		{"get with query", "GET", "/v1/audit?limit=5&type=deny&q=a%20b", agentToken, nil, httpapi.ScopeAgent},
		{"post with body", "POST", "/v1/check", agentToken, []byte(`{"capability":"shell","action":"exec"}`), httpapi.ScopeAgent},
		{"operator", "POST", "/v1/killswitch", operatorToken, []byte(`{"on":true}`), httpapi.ScopeOperator},
		{"escaped path", "DELETE", "/v1/grants/a%2Fb", operatorToken, nil, httpapi.ScopeOperator},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := signed(t, tt.method, tt.target, tt.token, tt.body, clock)
			if got := r.Header.Get(httpapi.HeaderSignature); got != wantSignature(tt.token, tt.method, tt.target, tt.body,
				r.Header.Get(httpapi.HeaderTimestamp), r.Header.Get(httpapi.HeaderNonce)) {
				t.Errorf("Sign wrote signature %s, which does not follow the documented format", got)
			}
			if got := r.Header.Get(httpapi.HeaderTimestamp); got != "1700000000" {
				t.Errorf("timestamp = %q, want 1700000000", got)
			}
			if got, want := r.Header.Get("Authorization"), "Bearer "+wantID(tt.token); got != want {
				t.Errorf("Authorization = %q, want %q", got, want)
			}
			checkNoTokenSent(t, r.Header, tt.token)
			scope, err := newVerifier(t, clock).Verify(r, tt.body)
			if err != nil || scope != tt.want {
				t.Errorf("Verify = %q, %v; want %q, nil", scope, err, tt.want)
			}
		})
	}
}

// checkNoTokenSent fails if a header's name or value holds token or its
// 43-character secret.
func checkNoTokenSent(t *testing.T, h http.Header, token string) {
	t.Helper()
	secret := token[len(token)-43:]
	for name, vals := range h {
		for _, s := range append([]string{name}, vals...) {
			if strings.Contains(s, token) || strings.Contains(s, secret) {
				t.Errorf("header %s carries the token or its secret", name)
			}
		}
	}
}

func TestTokenID(t *testing.T) {
	// A fixed value, so the format cannot change along with wantID.
	if got, err := httpapi.TokenID(agentToken); err != nil || got != "wdn_agent_id_868d3cf7b3b237278119284423cc0474" {
		t.Errorf("TokenID(agentToken) = %q, %v; want wdn_agent_id_868d3cf7b3b237278119284423cc0474", got, err)
	}
	fresh, err := httpapi.NewToken(httpapi.ScopeOperator)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, tok := range []string{agentToken, operatorToken, strangerToken, fresh, "wdn_agent_" + strings.Repeat("A", 43)} {
		got, err := httpapi.TokenID(tok)
		if err != nil {
			t.Fatalf("TokenID(token %.14s…): %v", tok, err)
		}
		if want := wantID(tok); got != want {
			t.Errorf("TokenID(token %.14s…) = %q, want %q from the documented format", tok, got, want)
		}
		scope, _ := httpapi.TokenScope(tok)
		prefix := "wdn_" + string(scope) + "_id_"
		if !strings.HasPrefix(got, prefix) || len(got) != len(prefix)+32 || strings.Trim(got[len(prefix):], "0123456789abcdef") != "" {
			t.Errorf("TokenID = %q, want %q and 32 lower-case hex digits", got, prefix)
		}
		if strings.Contains(got, tok[len(tok)-43:][:8]) {
			t.Errorf("TokenID = %q holds part of the token's secret", got)
		}
		if ids[got] {
			t.Errorf("TokenID = %q for two tokens", got)
		}
		ids[got] = true
	}

	secret := agentToken[len("wdn_agent_"):]
	for _, bad := range []string{"", "wdn_agent_", agentToken + "x", agentToken[:len(agentToken)-1], "wdn_admin_" + secret,
		"WDN_agent_" + secret, " " + agentToken, operatorToken + "\n", wantID(agentToken)} {
		got, err := httpapi.TokenID(bad)
		if err == nil {
			t.Errorf("TokenID(%q) = %q, want an error", bad, got)
			continue
		}
		if got != "" {
			t.Errorf("TokenID(%q) returned id %q with its error", bad, got)
		}
		if _, want := httpapi.TokenScope(bad); want == nil || err.Error() != want.Error() {
			t.Errorf("TokenID(%q) error %q, want TokenScope's %v", bad, err, want)
		}
		checkNoLeak(t, err)
	}
}

// TestSignVerifyOverHTTP checks that what a client signs (its URL) is what the
// server sees (RequestURI), escapes and all.
func TestSignVerifyOverHTTP(t *testing.T) {
	v := newVerifier(t, time.Now())
	v.Now = nil
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		for name, vals := range r.Header {
			if strings.Contains(name+strings.Join(vals, "\n"), agentToken[len(agentToken)-43:]) {
				http.Error(w, "the token arrived in header "+name, http.StatusInternalServerError)
				return
			}
		}
		scope, err := v.Verify(r, body)
		var ae *httpapi.AuthError
		if errors.As(err, &ae) {
			http.Error(w, ae.Msg, ae.Status)
			return
		} else if err != nil {
			http.Error(w, "not an *AuthError: "+err.Error(), http.StatusInternalServerError)
			return
		}
		io.WriteString(w, string(scope))
	}))
	defer srv.Close()

	for _, target := range []string{"/v1/check", "/v1/x%2Fy?q=a%20b&z=%E2%9C%93", "/v1/audit?", "/v1/a b"} {
		body := []byte(`{"target":"` + target + `"}`)
		req, err := http.NewRequest("POST", srv.URL+target, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if err := httpapi.Sign(req, agentToken, body, time.Now()); err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(got) != "agent" {
			t.Errorf("%s: status %d, body %q; want 200 agent", target, resp.StatusCode, got)
		}
	}
}

// TestVerifyRefuses covers every way Verify refuses a single request: each
// case changes one thing about a correctly signed POST.
func TestVerifyRefuses(t *testing.T) {
	body := []byte(`{"capability":"shell","action":"exec","resource":"ls"}`)
	tests := []struct {
		name    string
		mutate  func(r *http.Request) (body []byte)
		wantMsg string
	}{
		{"body tampered", func(r *http.Request) []byte {
			return []byte(`{"capability":"shell","action":"exec","resource":"rm -rf /"}`)
		}, "bad signature"},
		{"body dropped", func(r *http.Request) []byte { return nil }, "bad signature"},
		{"path tampered", func(r *http.Request) []byte { r.RequestURI = "/v1/approve?x=1"; return body }, "bad signature"},
		{"query tampered", func(r *http.Request) []byte { r.RequestURI = "/v1/check?x=2"; return body }, "bad signature"},
		{"query dropped", func(r *http.Request) []byte { r.RequestURI = "/v1/check"; return body }, "bad signature"},
		{"method changed", func(r *http.Request) []byte { r.Method = "PUT"; return body }, "bad signature"},
		{"timestamp changed", func(r *http.Request) []byte {
			r.Header.Set(httpapi.HeaderTimestamp, "1700000001")
			return body
		}, "bad signature"},
		{"nonce changed", func(r *http.Request) []byte {
			r.Header.Set(httpapi.HeaderNonce, "AAAAAAAAAAAAAAAAAAAAAA")
			return body
		}, "bad signature"},
		{"signature upper case", func(r *http.Request) []byte {
			r.Header.Set(httpapi.HeaderSignature, strings.ToUpper(r.Header.Get(httpapi.HeaderSignature)))
			return body
		}, "bad signature"},
		{"signature bit flipped", func(r *http.Request) []byte {
			s := []byte(r.Header.Get(httpapi.HeaderSignature))
			s[0] ^= 1
			r.Header.Set(httpapi.HeaderSignature, string(s))
			return body
		}, "bad signature"},
		{"signature truncated", func(r *http.Request) []byte {
			r.Header.Set(httpapi.HeaderSignature, r.Header.Get(httpapi.HeaderSignature)[:63])
			return body
		}, "bad signature"},
		{"signature empty", func(r *http.Request) []byte { r.Header.Set(httpapi.HeaderSignature, ""); return body }, "bad signature"},
		{"signature holds the token", func(r *http.Request) []byte {
			r.Header.Set(httpapi.HeaderSignature, agentToken)
			return body
		}, "bad signature"},
		{"signature missing", func(r *http.Request) []byte { r.Header.Del(httpapi.HeaderSignature); return body }, "missing X-Warden-Signature"},
		{"signature twice", func(r *http.Request) []byte {
			r.Header.Add(httpapi.HeaderSignature, r.Header.Get(httpapi.HeaderSignature))
			return body
		}, "more than one X-Warden-Signature"},
		// The signature is still right: the token must not travel at all.
		{"the token itself as bearer", func(r *http.Request) []byte {
			r.Header.Set("Authorization", "Bearer "+agentToken)
			return body
		}, "carries the token itself"},
		{"the other accepted token itself as bearer", func(r *http.Request) []byte {
			r.Header.Set("Authorization", "bearer  "+operatorToken+" ")
			return body
		}, "carries the token itself"},
		{"an unaccepted token itself as bearer", func(r *http.Request) []byte {
			r.Header.Set("Authorization", "Bearer "+strangerToken)
			return body
		}, "carries the token itself"},
		{"other accepted token's id, same signature", func(r *http.Request) []byte {
			r.Header.Set("Authorization", "Bearer "+wantID(operatorToken))
			return body
		}, "bad signature"},
		{"unknown token id", func(r *http.Request) []byte {
			r.Header.Set("Authorization", "Bearer "+wantID(strangerToken))
			return body
		}, "unknown token"},
		{"id one hex digit short", func(r *http.Request) []byte {
			id := wantID(agentToken)
			r.Header.Set("Authorization", "Bearer "+id[:len(id)-1])
			return body
		}, "not a warden token id"},
		{"id one hex digit long", func(r *http.Request) []byte {
			r.Header.Set("Authorization", "Bearer "+wantID(agentToken)+"0")
			return body
		}, "not a warden token id"},
		{"id in upper-case hex", func(r *http.Request) []byte {
			id := wantID(agentToken)
			r.Header.Set("Authorization", "Bearer wdn_agent_id_"+strings.ToUpper(id[len("wdn_agent_id_"):]))
			return body
		}, "not a warden token id"},
		{"id with another scope word", func(r *http.Request) []byte {
			r.Header.Set("Authorization", "Bearer wdn_admin_id_"+wantID(agentToken)[len("wdn_agent_id_"):])
			return body
		}, "not a warden token id"},
		{"id of the wrong scope", func(r *http.Request) []byte {
			r.Header.Set("Authorization", "Bearer wdn_operator_id_"+wantID(agentToken)[len("wdn_agent_id_"):])
			return body
		}, "unknown token"},
		{"id without _id_", func(r *http.Request) []byte {
			r.Header.Set("Authorization", "Bearer wdn_agent_"+wantID(agentToken)[len("wdn_agent_id_"):])
			return body
		}, "not a warden token id"},
		{"id with a non-hex digit", func(r *http.Request) []byte {
			id := wantID(agentToken)
			r.Header.Set("Authorization", "Bearer "+id[:len(id)-1]+"g")
			return body
		}, "not a warden token id"},
		{"malformed token", func(r *http.Request) []byte {
			r.Header.Set("Authorization", "Bearer "+agentToken+"x")
			return body
		}, "not a warden token id"},
		{"token of another product", func(r *http.Request) []byte {
			r.Header.Set("Authorization", "Bearer ghp_"+agentToken[10:])
			return body
		}, "not a warden token id"},
		{"missing authorization", func(r *http.Request) []byte { r.Header.Del("Authorization"); return body }, "missing bearer token id"},
		{"basic auth", func(r *http.Request) []byte {
			r.Header.Set("Authorization", "Basic "+wantID(agentToken))
			return body
		}, "missing bearer token id"},
		{"bearer without id", func(r *http.Request) []byte { r.Header.Set("Authorization", "Bearer "); return body }, "missing bearer token id"},
		{"id without scheme", func(r *http.Request) []byte { r.Header.Set("Authorization", wantID(agentToken)); return body }, "missing bearer token id"},
		{"two authorization headers", func(r *http.Request) []byte {
			r.Header.Add("Authorization", "Bearer "+wantID(operatorToken))
			return body
		}, "more than one Authorization"},
		{"timestamp missing", func(r *http.Request) []byte { r.Header.Del(httpapi.HeaderTimestamp); return body }, "missing X-Warden-Timestamp"},
		{"timestamp empty", func(r *http.Request) []byte { r.Header.Set(httpapi.HeaderTimestamp, ""); return body }, "unix time in seconds"},
		{"timestamp not a number", func(r *http.Request) []byte { r.Header.Set(httpapi.HeaderTimestamp, "yesterday"); return body }, "unix time in seconds"},
		{"timestamp with sign", func(r *http.Request) []byte { r.Header.Set(httpapi.HeaderTimestamp, "+1700000000"); return body }, "unix time in seconds"},
		{"timestamp negative", func(r *http.Request) []byte { r.Header.Set(httpapi.HeaderTimestamp, "-1"); return body }, "unix time in seconds"},
		{"timestamp fractional", func(r *http.Request) []byte { r.Header.Set(httpapi.HeaderTimestamp, "1700000000.5"); return body }, "unix time in seconds"},
		{"timestamp in milliseconds", func(r *http.Request) []byte {
			r.Header.Set(httpapi.HeaderTimestamp, "1700000000000")
			return body
		}, "unix time in seconds"},
		{"timestamp overflows", func(r *http.Request) []byte {
			r.Header.Set(httpapi.HeaderTimestamp, "99999999999999999999")
			return body
		}, "unix time in seconds"},
		{"timestamp holds the token", func(r *http.Request) []byte {
			r.Header.Set(httpapi.HeaderTimestamp, agentToken)
			return body
		}, "unix time in seconds"},
		{"timestamp zero", func(r *http.Request) []byte { r.Header.Set(httpapi.HeaderTimestamp, "0"); return body }, "away from the daemon's clock"},
		{"timestamp twice", func(r *http.Request) []byte {
			r.Header.Add(httpapi.HeaderTimestamp, r.Header.Get(httpapi.HeaderTimestamp))
			return body
		}, "more than one X-Warden-Timestamp"},
		{"nonce missing", func(r *http.Request) []byte { r.Header.Del(httpapi.HeaderNonce); return body }, "missing X-Warden-Nonce"},
		{"nonce too short", func(r *http.Request) []byte { r.Header.Set(httpapi.HeaderNonce, "abcdefghijklmno"); return body }, "16 to 64 characters"},
		{"nonce too long", func(r *http.Request) []byte { r.Header.Set(httpapi.HeaderNonce, strings.Repeat("a", 65)); return body }, "16 to 64 characters"},
		{"nonce bad character", func(r *http.Request) []byte {
			r.Header.Set(httpapi.HeaderNonce, "abcdefghijklmnop=")
			return body
		}, "16 to 64 characters"},
		// A token is a well-formed nonce; what matters is that it is not echoed.
		{"nonce holds the token", func(r *http.Request) []byte { r.Header.Set(httpapi.HeaderNonce, agentToken); return body }, "bad signature"},
		{"nonce twice", func(r *http.Request) []byte {
			r.Header.Add(httpapi.HeaderNonce, r.Header.Get(httpapi.HeaderNonce))
			return body
		}, "more than one X-Warden-Nonce"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := signed(t, "POST", "/v1/check?x=1", agentToken, body, clock)
			got := tt.mutate(r)
			scope, err := newVerifier(t, clock).Verify(r, got)
			if err == nil {
				t.Fatalf("Verify = %q, nil; want an error", scope)
			}
			if scope != "" {
				t.Errorf("Verify returned scope %q with its error", scope)
			}
			ae := authError(t, err)
			if ae.Status != http.StatusUnauthorized {
				t.Errorf("status = %d, want 401", ae.Status)
			}
			if !strings.Contains(ae.Msg, tt.wantMsg) {
				t.Errorf("error %q does not say %q", ae.Msg, tt.wantMsg)
			}
			checkNoLeak(t, err)
		})
	}
}

func TestVerifyTimestamp(t *testing.T) {
	tests := []struct {
		name   string
		offset time.Duration // client clock minus daemon clock
		ok     bool
	}{
		{"31s in the past", -31 * time.Second, false},
		{"31s in the future", 31 * time.Second, false},
		{"29s in the past", -29 * time.Second, true},
		{"29s in the future", 29 * time.Second, true},
		{"30s in the past", -30 * time.Second, true},
		{"an hour in the future", time.Hour, false},
		{"same second", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := signed(t, "GET", "/v1/status", agentToken, nil, clock.Add(tt.offset))
			_, err := newVerifier(t, clock).Verify(r, nil)
			if tt.ok {
				if err != nil {
					t.Errorf("Verify = %v, want success", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Verify succeeded, want a stale-timestamp error")
			}
			ae := authError(t, err)
			secs := int(tt.offset.Abs() / time.Second)
			want := "the request's timestamp is " + strconv.Itoa(secs) + "s away from the daemon's clock; requests must be signed within ±30s: check the clock"
			if ae.Status != http.StatusUnauthorized || ae.Msg != want {
				t.Errorf("Verify = %d %q, want 401 %q", ae.Status, ae.Msg, want)
			}
		})
	}
}

func TestVerifyReplay(t *testing.T) {
	v := newVerifier(t, clock)
	r := signed(t, "POST", "/v1/exec", agentToken, []byte("x"), clock)
	if _, err := v.Verify(r, []byte("x")); err != nil {
		t.Fatalf("first Verify: %v", err)
	}
	_, err := v.Verify(r, []byte("x"))
	if err == nil {
		t.Fatal("second Verify of the same request succeeded, want a replay error")
	}
	ae := authError(t, err)
	if ae.Status != http.StatusUnauthorized || !strings.Contains(ae.Msg, "replayed request: this nonce was already used") {
		t.Errorf("replay: %d %q, want 401 replayed request", ae.Status, ae.Msg)
	}
	checkNoLeak(t, err)

	// A different request that reuses the nonce is refused too, even from
	// another token.
	r2 := httptest.NewRequest("GET", "/v1/status", nil)
	ts := r.Header.Get(httpapi.HeaderTimestamp)
	nonce := r.Header.Get(httpapi.HeaderNonce)
	r2.Header.Set("Authorization", "Bearer "+wantID(operatorToken))
	r2.Header.Set(httpapi.HeaderTimestamp, ts)
	r2.Header.Set(httpapi.HeaderNonce, nonce)
	r2.Header.Set(httpapi.HeaderSignature, wantSignature(operatorToken, "GET", "/v1/status", nil, ts, nonce))
	if _, err := v.Verify(r2, nil); err == nil || !strings.Contains(err.Error(), "replayed") {
		t.Errorf("reused nonce on a new request: Verify = %v, want a replay error", err)
	}

	// A refused request does not use up its nonce: a forged request with a
	// nonce does not stop the real one.
	r3 := signed(t, "POST", "/v1/exec", agentToken, []byte("y"), clock)
	if _, err := v.Verify(r3, []byte("forged")); err == nil {
		t.Fatal("Verify accepted a tampered body")
	}
	if _, err := v.Verify(r3, []byte("y")); err != nil {
		t.Errorf("Verify after a refused forgery with the same nonce: %v", err)
	}
}

// TestVerifyReplayAfterWindow checks that forgetting a nonce is safe: by the
// time it is forgotten, its request's timestamp is stale.
func TestVerifyReplayAfterWindow(t *testing.T) {
	now := clock
	v := newVerifier(t, now)
	v.Now = func() time.Time { return now }
	v.MaxNonces = 1

	r := signed(t, "POST", "/v1/exec", agentToken, nil, clock.Add(httpapi.MaxSkew)) // as far ahead as allowed
	if _, err := v.Verify(r, nil); err != nil {
		t.Fatalf("first Verify: %v", err)
	}
	now = clock.Add(2*httpapi.MaxSkew + time.Second)
	// The one nonce slot was freed: a fresh request gets in.
	if _, err := v.Verify(signed(t, "GET", "/v1/status", agentToken, nil, now), nil); err != nil {
		t.Fatalf("fresh request after the window: %v (the old nonce was not forgotten)", err)
	}
	now = now.Add(2*httpapi.MaxSkew + time.Second) // forget that one too
	_, err := v.Verify(r, nil)
	if err == nil {
		t.Fatal("replay after the nonce aged out succeeded")
	}
	if ae := authError(t, err); !strings.Contains(ae.Msg, "away from the daemon's clock") {
		t.Errorf("replay after the window: %q, want a stale-timestamp error", ae.Msg)
	}
}

// TestVerifyForgetsWhenTheTimestampGoesStale: a nonce is kept exactly as
// long as its request could be replayed, which depends on its timestamp:
// a request signed as late as allowed is forgotten about a second later, one
// signed just now after MaxSkew, and a replay of either is refused as stale.
func TestVerifyForgetsWhenTheTimestampGoesStale(t *testing.T) {
	now := clock
	v := newVerifier(t, now)
	v.Now = func() time.Time { return now }
	v.MaxNonces = 1

	old := signed(t, "GET", "/v1/status", agentToken, nil, clock.Add(-httpapi.MaxSkew)) // as old as allowed
	if _, err := v.Verify(old, nil); err != nil {
		t.Fatalf("first Verify: %v", err)
	}
	fresh := signed(t, "GET", "/v1/status", agentToken, nil, clock)
	if _, err := v.Verify(fresh, nil); err == nil {
		t.Fatal("a second nonce fit in a memory of one while the first could still be replayed")
	}
	now = clock.Add(time.Second + time.Millisecond)
	if _, err := v.Verify(old, nil); err == nil || !strings.Contains(err.Error(), "away from the daemon's clock") {
		t.Fatalf("replay of the old request: %v, want a stale-timestamp error", err)
	}
	if _, err := v.Verify(fresh, nil); err != nil {
		t.Fatalf("the old nonce was not forgotten once its request went stale: %v", err)
	}
	now = clock.Add(httpapi.MaxSkew)
	if _, err := v.Verify(fresh, nil); err == nil || !strings.Contains(err.Error(), "replayed") {
		t.Fatalf("replay of the fresh request inside its window: %v, want a replay error", err)
	}
	now = clock.Add(httpapi.MaxSkew + time.Second + time.Millisecond)
	if _, err := v.Verify(signed(t, "GET", "/v1/status", agentToken, nil, now), nil); err != nil {
		t.Fatalf("the fresh nonce was not forgotten once its request went stale: %v", err)
	}
}

func TestVerifyNonceMemoryFull(t *testing.T) {
	now := clock
	v := newVerifier(t, now)
	v.Now = func() time.Time { return now }
	v.MaxNonces = 3

	var first *http.Request
	for i := range 3 {
		r := signed(t, "GET", "/v1/status", agentToken, nil, now)
		if _, err := v.Verify(r, nil); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if first == nil {
			first = r
		}
		now = now.Add(time.Second)
	}
	_, err := v.Verify(signed(t, "GET", "/v1/status", operatorToken, nil, now), nil)
	if err == nil {
		t.Fatal("Verify with the nonce memory full succeeded, want a refusal")
	}
	ae := authError(t, err)
	if ae.Status != http.StatusServiceUnavailable || !strings.Contains(ae.Msg, "retry") {
		t.Errorf("memory full: %d %q, want 503 and a retry hint", ae.Status, ae.Msg)
	}
	checkNoLeak(t, err)
	if _, err := v.Verify(first, nil); err == nil || !strings.Contains(err.Error(), "replayed") {
		t.Errorf("replay with the memory full: %v, want a replay error", err)
	}

	now = clock.Add(2 * httpapi.MaxSkew) // the first nonce ages out
	if _, err := v.Verify(signed(t, "GET", "/v1/status", agentToken, nil, now), nil); err != nil {
		t.Errorf("after the first nonce aged out: %v, want success", err)
	}
}

func TestVerifyZeroVerifier(t *testing.T) {
	var v httpapi.Verifier
	r := signed(t, "GET", "/v1/status", agentToken, nil, time.Now())
	if _, err := v.Verify(r, nil); err == nil || !strings.Contains(err.Error(), "unknown token") {
		t.Errorf("zero Verifier: %v, want unknown token", err)
	}
}

func TestVerifyConcurrent(t *testing.T) {
	v := newVerifier(t, time.Now())
	v.Now = nil
	const workers = 50

	// Distinct requests: all accepted.
	var wg sync.WaitGroup
	errs := make(chan error, workers*10)
	for i := range workers {
		wg.Go(func() {
			token := agentToken
			if i%2 == 1 {
				token = operatorToken
			}
			for range 10 {
				body := []byte(strconv.Itoa(i))
				r := httptest.NewRequest("POST", "/v1/check", bytes.NewReader(body))
				if err := httpapi.Sign(r, token, body, time.Now()); err != nil {
					errs <- err
					continue
				}
				if _, err := v.Verify(r, body); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent Verify: %v", err)
	}

	// One request sent by every worker at once: accepted exactly once.
	r := signed(t, "POST", "/v1/exec", agentToken, []byte("once"), time.Now())
	var accepted atomic.Int32
	for range workers {
		wg.Go(func() {
			c := r.Clone(r.Context())
			if _, err := v.Verify(c, []byte("once")); err == nil {
				accepted.Add(1)
			}
		})
	}
	wg.Wait()
	if n := accepted.Load(); n != 1 {
		t.Errorf("the same request was accepted %d times, want once", n)
	}
}

func TestNewToken(t *testing.T) {
	seen := map[string]bool{}
	for _, scope := range []httpapi.Scope{httpapi.ScopeAgent, httpapi.ScopeOperator} {
		for range 20 {
			tok, err := httpapi.NewToken(scope)
			if err != nil {
				t.Fatalf("NewToken(%q): %v", scope, err)
			}
			prefix := "wdn_" + string(scope) + "_"
			if !strings.HasPrefix(tok, prefix) || len(tok) != len(prefix)+43 {
				t.Errorf("NewToken(%q) = a %d-character token with prefix %q, want %q and 43 characters", scope, len(tok), tok[:len(prefix)], prefix)
			}
			if seen[tok] {
				t.Errorf("NewToken(%q) repeated a token", scope)
			}
			seen[tok] = true
			if got, err := httpapi.TokenScope(tok); err != nil || got != scope {
				t.Errorf("TokenScope(NewToken(%q)) = %q, %v", scope, got, err)
			}
		}
	}
	for _, scope := range []httpapi.Scope{"", "admin", "Agent"} {
		if tok, err := httpapi.NewToken(scope); err == nil {
			t.Errorf("NewToken(%q) = a token, want an error", scope)
		} else if tok != "" {
			t.Errorf("NewToken(%q) returned a token with its error", scope)
		}
	}
}

func TestTokenScope(t *testing.T) {
	secret := agentToken[len("wdn_agent_"):]
	zeros := strings.Repeat("A", 43)
	tests := []struct {
		name, token string
		want        httpapi.Scope // "" means malformed
	}{
		{"agent", agentToken, httpapi.ScopeAgent},
		{"operator", operatorToken, httpapi.ScopeOperator},
		{"all-zero secret", "wdn_agent_" + zeros, httpapi.ScopeAgent},
		{"empty", "", ""},
		{"prefix only", "wdn_", ""},
		{"scope only", "wdn_agent_", ""},
		{"no prefix", "agent_" + secret, ""},
		{"upper-case prefix", "WDN_agent_" + secret, ""},
		{"unknown scope", "wdn_admin_" + secret, ""},
		{"upper-case scope", "wdn_Agent_" + secret, ""},
		{"no separator", "wdn_agent" + secret, ""},
		{"short secret", "wdn_agent_" + secret[:42], ""},
		{"long secret", "wdn_agent_" + secret + "A", ""},
		{"padded secret", "wdn_agent_" + secret + "=", ""},
		{"standard base64 alphabet", "wdn_agent_" + zeros[:41] + "+/", ""},
		{"non-zero trailing bits", "wdn_agent_" + zeros[:42] + "B", ""},
		{"space in secret", "wdn_agent_" + zeros[:21] + " " + zeros[:21], ""},
		{"trailing newline", agentToken + "\n", ""},
		{"leading space", " " + agentToken, ""},
		{"non-ASCII", "wdn_agent_" + zeros[:40] + "é", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := httpapi.TokenScope(tt.token)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("TokenScope(%q) = %q, want an error", tt.token, got)
				}
				if got != "" {
					t.Errorf("TokenScope(%q) returned scope %q with its error", tt.token, got)
				}
				checkNoLeak(t, err)
				if s := tt.token; len(s) > 20 && strings.Contains(err.Error(), s[10:30]) {
					t.Errorf("TokenScope error %q echoes the token", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("TokenScope(%q) = %q, %v; want %q", tt.token, got, err, tt.want)
			}
		})
	}
}

func TestNewTokens(t *testing.T) {
	toks, err := httpapi.NewTokens(agentToken, operatorToken, agentToken)
	if err != nil {
		t.Fatalf("NewTokens with a duplicate: %v", err)
	}
	if toks.Len() != 2 {
		t.Errorf("Len = %d, want 2", toks.Len())
	}
	for _, tt := range []struct {
		token string
		want  httpapi.Scope
		ok    bool
	}{
		{agentToken, httpapi.ScopeAgent, true},
		{operatorToken, httpapi.ScopeOperator, true},
		{strangerToken, "", false},
		{"", "", false},
		{agentToken[:len(agentToken)-1], "", false},
		{wantID(agentToken), "", false}, // an id is no token
	} {
		if got, ok := toks.Scope(tt.token); got != tt.want || ok != tt.ok {
			t.Errorf("Scope(token %.14s…) = %q, %v; want %q, %v", tt.token, got, ok, tt.want, tt.ok)
		}
	}

	_, err = httpapi.NewTokens(agentToken, agentToken+"x")
	if err == nil {
		t.Fatal("NewTokens with a malformed token succeeded")
	}
	if !strings.Contains(err.Error(), "token 2 of 2") {
		t.Errorf("NewTokens error %q does not say which token", err)
	}
	checkNoLeak(t, err)

	var nilTokens *httpapi.Tokens
	if s, ok := nilTokens.Scope(agentToken); ok || s != "" {
		t.Errorf("nil Tokens.Scope = %q, %v; want none", s, ok)
	}
}

func TestSignErrors(t *testing.T) {
	r := httptest.NewRequest("GET", "/v1/status", nil)
	err := httpapi.Sign(r, agentToken+"x", nil, clock)
	if err == nil {
		t.Fatal("Sign with a malformed token succeeded")
	}
	checkNoLeak(t, err)
	if r.Header.Get("Authorization") != "" || r.Header.Get(httpapi.HeaderSignature) != "" {
		t.Error("Sign set headers despite its error")
	}
}

func TestSignFreshNonce(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		n := signed(t, "GET", "/", agentToken, nil, clock).Header.Get(httpapi.HeaderNonce)
		if len(n) < 16 || len(n) > 64 {
			t.Errorf("nonce %q has %d characters, want 16 to 64", n, len(n))
		}
		if seen[n] {
			t.Errorf("Sign repeated nonce %q", n)
		}
		seen[n] = true
	}
}

func TestScopeAllows(t *testing.T) {
	tests := []struct {
		have, want httpapi.Scope
		ok         bool
	}{
		{httpapi.ScopeOperator, httpapi.ScopeOperator, true},
		{httpapi.ScopeOperator, httpapi.ScopeAgent, true},
		{httpapi.ScopeAgent, httpapi.ScopeAgent, true},
		{httpapi.ScopeAgent, httpapi.ScopeOperator, false},
		{"", httpapi.ScopeAgent, false},
		{"", httpapi.ScopeOperator, false},
		{"", "", false},
		{"admin", httpapi.ScopeAgent, false},
		{httpapi.ScopeOperator, "", false},
		{httpapi.ScopeOperator, "admin", false},
		{httpapi.ScopeAgent, "", false},
	}
	for _, tt := range tests {
		t.Run(string(tt.have)+"→"+string(tt.want), func(t *testing.T) {
			if got := tt.have.Allows(tt.want); got != tt.ok {
				t.Errorf("Scope(%q).Allows(%q) = %v, want %v", tt.have, tt.want, got, tt.ok)
			}
		})
	}
}

func BenchmarkVerify(b *testing.B) {
	// 1,000 requests a simulated second: the nonce memory stays at 60,000,
	// forgetting one for every one it learns.
	now := clock
	v := newVerifier(b, clock)
	v.Now = func() time.Time { return now }
	body := []byte(`{"capability":"shell","action":"exec","resource":"ls -la"}`)
	r := signed(b, "POST", "/v1/check", agentToken, body, clock)
	for b.Loop() {
		now = now.Add(time.Millisecond)
		// Each iteration needs a fresh nonce; re-signing is part of the cost.
		if err := httpapi.Sign(r, agentToken, body, now); err != nil {
			b.Fatal(err)
		}
		if _, err := v.Verify(r, body); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzVerify feeds arbitrary credentials, request lines and bodies to Verify
// and checks that it never panics, never leaks a token in its error, and never
// accepts a request unless its bearer is the id of an accepted token and its
// signature is the one the documented format gives, keyed by that token.
func FuzzVerify(f *testing.F) {
	ts := strconv.FormatInt(clock.Unix(), 10)
	nonce := "abcdefghijklmnop"
	body := []byte(`{"capability":"shell"}`)
	for _, seed := range []struct {
		authz, ts, nonce, sig, method, uri string
		body                               []byte
	}{
		{"Bearer " + wantID(agentToken), ts, nonce, wantSignature(agentToken, "POST", "/v1/check?x=1", body, ts, nonce), "POST", "/v1/check?x=1", body},
		{"Bearer " + wantID(operatorToken), ts, nonce, wantSignature(operatorToken, "GET", "/", nil, ts, nonce), "GET", "/", nil},
		{"Bearer " + wantID(agentToken), ts, nonce, strings.ToUpper(wantSignature(agentToken, "GET", "/", nil, ts, nonce)), "GET", "/", nil},
		{"Bearer " + wantID(agentToken), ts, nonce, wantSignature(operatorToken, "GET", "/", nil, ts, nonce), "GET", "/", nil},
		{"bearer  " + wantID(agentToken) + " ", ts, nonce, wantSignature(agentToken, "GET", "/", nil, ts, nonce), "GET", "/", nil},
		{"Bearer " + wantID(strangerToken), ts, nonce, wantSignature(strangerToken, "GET", "/", nil, ts, nonce), "GET", "/", nil},
		{"Bearer " + agentToken, ts, nonce, wantSignature(agentToken, "GET", "/", nil, ts, nonce), "GET", "/", nil},
		{"Bearer " + wantID(agentToken), ts, nonce, wantSignature(wantID(agentToken), "GET", "/", nil, ts, nonce), "GET", "/", nil},
		{"", "", "", "", "", "", nil},
		{"Bearer x", "-1", "short", "zz", "GET", "*", []byte{0xff}},
	} {
		f.Add(seed.authz, seed.ts, seed.nonce, seed.sig, seed.method, seed.uri, seed.body)
	}
	f.Fuzz(func(t *testing.T, authz, ts, nonce, sig, method, uri string, body []byte) {
		r := &http.Request{Method: method, RequestURI: uri, URL: &url.URL{Path: "/"}, Header: http.Header{}}
		for name, val := range map[string]string{
			"Authorization":         authz,
			httpapi.HeaderTimestamp: ts,
			httpapi.HeaderNonce:     nonce,
			httpapi.HeaderSignature: sig,
		} {
			if val != "" {
				r.Header[name] = []string{val}
			}
		}
		v := newVerifier(t, clock)
		scope, err := v.Verify(r, body)
		if err != nil {
			authError(t, err)
			checkNoLeak(t, err)
			if scope != "" {
				t.Errorf("Verify returned scope %q with its error", scope)
			}
			return
		}
		scheme, id, _ := strings.Cut(authz, " ")
		id = strings.TrimSpace(id)
		var token string
		switch id {
		case wantID(agentToken):
			token = agentToken
		case wantID(operatorToken):
			token = operatorToken
		}
		if !strings.EqualFold(scheme, "Bearer") || token == "" {
			t.Fatalf("Verify accepted Authorization %q, which is not Bearer and the id of an accepted token", authz)
		}
		if want := wantSignature(token, method, uri, body, ts, nonce); sig != want {
			t.Fatalf("Verify accepted signature %q, want %q", sig, want)
		}
		if want, _ := httpapi.TokenScope(token); scope != want {
			t.Fatalf("Verify = %q for a %q token", scope, want)
		}
		if _, err := v.Verify(r, body); err == nil {
			t.Fatal("Verify accepted the same request twice")
		}
	})
}
