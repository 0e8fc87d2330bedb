package httpapi

import (
	"bytes"
	"context"
	"crypto/subtle"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/approval"
	"github.com/agentwarden/warden/signing"
	"github.com/agentwarden/warden/signing/service"
)

// Signing is the remote signing service the daemon serves under
// /api/sandbox/sign; *service.Service implements it.
type Signing interface {
	Submit(ctx context.Context, body []byte, o service.Options) (service.Result, error)
	Answer(ctx context.Context, id string, approve bool, who approval.Who) (service.Result, error)
	Status(ctx context.Context, id string) (service.Result, error)
	Pending(ctx context.Context) ([]service.Pending, error)
	Address() (signing.Address, error)
}

// signingRoutes adds the signing endpoints: the agent submits, polls and
// reads the address; only an operator approves or rejects.
func (s *Server) signingRoutes(m *http.ServeMux, local bool) {
	m.Handle("POST /api/sandbox/sign", s.auth(local, ScopeAgent, s.signSubmit))
	m.Handle("GET /api/sandbox/sign/pending", s.auth(local, ScopeAgent, s.signPending))
	m.Handle("GET /api/sandbox/sign/address", s.auth(local, ScopeAgent, s.signAddress))
	m.Handle("POST /api/sandbox/sign/approve", s.auth(local, ScopeOperator, s.signAnswer(true)))
	m.Handle("POST /api/sandbox/sign/reject", s.auth(local, ScopeOperator, s.signAnswer(false)))
}

func (s *Server) signing(w http.ResponseWriter) (Signing, bool) {
	if s.Signing == nil && s.SigningOff != nil {
		writeError(w, s.SigningOff)
		return nil, false
	}
	if s.Signing == nil {
		writeError(w, warden.Errorf(warden.EUnavailable, "this warden serves no signing service").
			WithHint("create a key with `warden signer init` and restart `warden serve` with its passphrase"))
		return nil, false
	}
	return s.Signing, true
}

// signSubmit is POST /api/sandbox/sign[?wait=60s]: the body is the signing
// request. With wait, an ask waits up to that long for a human.
func (s *Server) signSubmit(w http.ResponseWriter, r *http.Request, c call) {
	svc, ok := s.signing(w)
	if !ok {
		return
	}
	var o service.Options
	if v := r.URL.Query().Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > MaxWait {
			writeError(w, warden.Errorf(warden.EInvalid, "wait=%q is not a duration from 0 to %s, such as 60s", v, MaxWait))
			return
		}
		o.Wait = d
	}
	o.Session, o.RequestedBy = r.Header.Get("X-Warden-Session"), "agent"
	res, err := svc.Submit(r.Context(), c.body, o)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, resultStatus(res), res)
}

// resultStatus is 200 for a signature, 202 for a request waiting for a
// human, and 403 for a refusal.
func resultStatus(res service.Result) int {
	switch {
	case res.Success:
		return http.StatusOK
	case res.Pending:
		return http.StatusAccepted
	}
	return http.StatusForbidden
}

// signPending is GET /api/sandbox/sign/pending: the requests waiting for a
// human, or with ?id=APPROVAL one request's state or result.
func (s *Server) signPending(w http.ResponseWriter, r *http.Request, _ call) {
	svc, ok := s.signing(w)
	if !ok {
		return
	}
	if id := r.URL.Query().Get("id"); id != "" {
		res, err := svc.Status(r.Context(), id)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, resultStatus(res), res)
		return
	}
	ps, err := svc.Pending(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	if ps == nil {
		ps = []service.Pending{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"pending": ps})
}

func (s *Server) signAddress(w http.ResponseWriter, _ *http.Request, _ call) {
	svc, ok := s.signing(w)
	if !ok {
		return
	}
	a, err := svc.Address()
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"address": signing.Checksum(a)})
}

type signAnswerBody struct {
	ID string `json:"id"`
	By string `json:"by,omitempty"`
}

// signAnswer is POST /api/sandbox/sign/approve|reject {"id": APPROVAL}.
func (s *Server) signAnswer(approve bool) handler {
	return func(w http.ResponseWriter, r *http.Request, c call) {
		svc, ok := s.signing(w)
		if !ok {
			return
		}
		var b signAnswerBody
		if err := decodeStrict(c.body, &b); err != nil || b.ID == "" {
			writeError(w, warden.Errorf(warden.EInvalid, `the body must be {"id": "<approval id>"}`).
				WithHint("GET /api/sandbox/sign/pending lists the approval ids"))
			return
		}
		who := approval.Who{Name: b.By, Channel: "api"}
		if who.Name == "" {
			who.Name = string(c.scope)
		}
		res, err := svc.Answer(r.Context(), b.ID, approve, who)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, resultStatus(res), res)
	}
}

// SigningForwarder is the signing endpoint a sandbox started by `warden exec
// --signer` reaches on its own loopback, in a process other than the daemon:
// it checks the sandbox's bearer token and forwards only the agent's signing
// calls to the daemon's Unix socket (where a request without a token has
// agent scope). The key stays in the daemon.
func SigningForwarder(socket, token string) http.Handler {
	c := UnixClient(socket, "")
	allowed := map[string]bool{
		"POST /api/sandbox/sign": true, "GET /api/sandbox/sign/pending": true, "GET /api/sandbox/sign/address": true,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			writeJSON(w, http.StatusUnauthorized, errorBody{Error: "the signing endpoint needs the sandbox's token: Authorization: Bearer $WARDEN_SIGNER_TOKEN", Code: "unauthorized"})
			return
		}
		if !allowed[r.Method+" "+r.URL.Path] {
			writeJSON(w, http.StatusNotFound, errorBody{Error: r.Method + " " + r.URL.Path + " is not a signing endpoint", Code: "not_found"})
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
		if err != nil {
			writeError(w, warden.Errorf(warden.EInvalid, "the request body is over %d bytes or could not be read", MaxBody))
			return
		}
		out, err := http.NewRequestWithContext(r.Context(), r.Method, c.Base+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			writeError(w, warden.Errorf(warden.EInvalid, "bad request").Wrap(err))
			return
		}
		out.Header.Set("Content-Type", "application/json")
		resp, err := c.HTTP.Do(out)
		if err != nil {
			writeError(w, warden.Errorf(warden.EUnavailable, "the warden daemon holding the signing key cannot be reached").Wrap(err).
				WithHint("start it with `warden serve`"))
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, io.LimitReader(resp.Body, MaxBody))
	})
}
