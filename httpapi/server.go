// Package httpapi is warden's daemon API over HTTP: the server that serves the
// gate, the approval queue, the live audit feed, the policy and the kill
// switch to agents and operators, and the Go client that speaks to it. On the
// Unix socket (mode 0600) a request without a token is an agent's; an
// operator's request, and every request over TCP, carries a scoped token and
// an HMAC signature over method, path, body and a timestamp, with a nonce that
// is never accepted twice.
package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/approval"
	"github.com/agentwarden/warden/audit/feed"
)

// MaxBody is the largest request body the API reads.
const MaxBody = 1 << 20

// CheckOptions adjust one POST /v1/check.
type CheckOptions struct {
	// Wait waits for a human's answer to an ask (wait=1).
	Wait bool
	// Channel names the channel an ask's approval opens through; empty
	// opens none (approval=none).
	Channel string
	// DryRun makes the check a question (dry_run=1): it reserves nothing,
	// neither the daily spend cap nor a rate slot (`warden check --remote`).
	DryRun bool
}

// MaxWait is the longest one request may wait for an approval.
const MaxWait = 10 * time.Minute

// Backend is what the daemon serves; app.Daemon implements it.
type Backend interface {
	// Check decides and records req. With opt.Wait, an ask opens an
	// approval from opt.Channel and Check returns only when it ended, with
	// the decision it ended in.
	Check(ctx context.Context, req *warden.Request, opt CheckOptions) (warden.Decision, error)
	Approvals(ctx context.Context, f warden.ApprovalFilter) ([]warden.Approval, error)
	Approval(ctx context.Context, id string) (warden.Approval, error)
	Answer(ctx context.Context, id string, ans warden.Answer, who approval.Who) (warden.Approval, error)
	WaitApproval(ctx context.Context, id string) (warden.Approval, error)
	// Config lists the policy's keys and values; SetConfig changes one key.
	Config() ([]ConfigItem, error)
	SetConfig(ctx context.Context, key, value, by string) error
	KillSwitch() bool
	SetKillSwitch(ctx context.Context, on bool, by string) error
	// Sandboxes describes the long-lived sandboxes.
	Sandboxes(ctx context.Context) (json.RawMessage, error)
}

// ConfigItem is one policy key and its value.
type ConfigItem struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Server is the daemon's HTTP API. Backend, Verifier and Feed are required.
type Server struct {
	Backend  Backend
	Verifier *Verifier
	Feed     *feed.Feed
	Metrics  *Metrics
	Log      *slog.Logger
	// Signing is the remote signing service; nil answers its endpoints
	// with 503.
	Signing Signing
	// SigningOff, when Signing is nil, is why the signing endpoints refuse
	// (the key could not be unlocked at start); nil says this warden serves
	// no signing service.
	SigningOff error
}

// Handler is the API. local marks the Unix socket, where a request without
// a token is taken as an agent's.
func (s *Server) Handler(local bool) http.Handler {
	m := http.NewServeMux()
	m.HandleFunc("GET /v1/health", s.health)
	m.Handle("GET /metrics", s.auth(local, ScopeAgent, s.metrics))
	m.Handle("POST /v1/check", s.auth(local, ScopeAgent, s.check))
	m.Handle("GET /v1/approvals", s.auth(local, ScopeOperator, s.listApprovals))
	m.Handle("GET /v1/approvals/{id}", s.auth(local, ScopeAgent, s.getApproval))
	m.Handle("GET /v1/approvals/{id}/wait", s.auth(local, ScopeAgent, s.waitApproval))
	m.Handle("POST /v1/approvals/{id}/approve", s.auth(local, ScopeOperator, s.answer(true)))
	m.Handle("POST /v1/approvals/{id}/deny", s.auth(local, ScopeOperator, s.answer(false)))
	m.Handle("GET /api/audit/feed", s.auth(local, ScopeOperator, s.feed))
	m.Handle("GET /v1/config", s.auth(local, ScopeOperator, s.getConfig))
	m.Handle("PUT /v1/config/{key}", s.auth(local, ScopeOperator, s.setConfig))
	m.Handle("GET /v1/kill", s.auth(local, ScopeAgent, s.getKill))
	m.Handle("POST /v1/kill", s.auth(local, ScopeOperator, s.setKill))
	m.Handle("GET /v1/sandboxes", s.auth(local, ScopeOperator, s.sandboxes))
	s.signingRoutes(m, local)
	m.Handle("GET /console/", consoleHandler())
	m.Handle("GET /{$}", http.RedirectHandler("/console/", http.StatusFound))
	return m
}

// call is one authenticated request: its scope and body.
type call struct {
	scope Scope
	body  []byte
}

type handler func(w http.ResponseWriter, r *http.Request, c call)

// auth reads the body, authenticates the request and checks its scope.
func (s *Server) auth(local bool, want Scope, h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
		if err != nil {
			writeError(w, warden.Errorf(warden.EInvalid, "the request body is over %d bytes or could not be read", MaxBody))
			return
		}
		scope := ScopeAgent
		if !local || r.Header.Get("Authorization") != "" {
			scope, err = s.Verifier.Verify(r, body)
			if err != nil {
				var ae *AuthError
				if errors.As(err, &ae) {
					writeJSON(w, ae.Status, errorBody{Error: ae.Msg, Code: "unauthorized"})
					return
				}
				writeError(w, err)
				return
			}
		}
		if !scope.Allows(want) {
			writeJSON(w, http.StatusForbidden, errorBody{Error: fmt.Sprintf("%s needs an %s token; this request carries %s scope", r.URL.Path, want, scope),
				Code: "forbidden", Hint: "agents cannot answer approvals, change the policy or flip the kill switch"})
			return
		}
		h(w, r, call{scope: scope, body: body})
	})
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "kill_switch": s.Backend.KillSwitch()})
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request, _ call) {
	if s.Metrics == nil {
		writeError(w, warden.Errorf(warden.ENotFound, "metrics are off"))
		return
	}
	s.Metrics.handler().ServeHTTP(w, r)
}

func (s *Server) check(w http.ResponseWriter, r *http.Request, c call) {
	req, err := warden.DecodeRequest(bytes.NewReader(c.body))
	if err != nil {
		writeError(w, err)
		return
	}
	wait := r.URL.Query().Get("wait") == "1" || r.URL.Query().Get("wait") == "true"
	// approval=none is for callers whose host asks the human itself (a
	// Claude Code hook): an ask then opens no approval here. Any other value
	// names the channel the approval was opened through (hook:codex…).
	channel := "api"
	switch ch := r.URL.Query().Get("approval"); {
	case ch == "none":
		if wait {
			writeError(w, warden.Errorf(warden.EInvalid, "wait=1 needs an approval to wait for; drop approval=none"))
			return
		}
		channel = ""
	case ch == "":
	case validChannel(ch):
		channel = ch
	default:
		writeError(w, warden.Errorf(warden.EInvalid, "approval channel %q is not none or a name of lower-case letters, digits, ':', '_' and '-' (at most 32)", ch))
		return
	}
	ctx := r.Context()
	if wait {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, MaxWait)
		defer cancel()
	}
	start := time.Now()
	dry := r.URL.Query().Get("dry_run") == "1" || r.URL.Query().Get("dry_run") == "true"
	d, err := s.Backend.Check(ctx, req, CheckOptions{Wait: wait, Channel: channel, DryRun: dry})
	if err != nil {
		s.Metrics.failed()
		writeError(w, err)
		return
	}
	s.Metrics.decided(d, time.Since(start), wait)
	writeJSON(w, http.StatusOK, d)
}

// validChannel reports whether name can label the channel an approval was
// opened through: 1 to 32 of a-z, 0-9, ':', '_', '-', starting with a letter.
func validChannel(name string) bool {
	if len(name) == 0 || len(name) > 32 || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == ':' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func (s *Server) listApprovals(w http.ResponseWriter, r *http.Request, _ call) {
	f := warden.ApprovalFilter{Limit: 200}
	switch st := r.URL.Query().Get("state"); st {
	case "", "all":
	case "pending":
		f.Pending = true
	default:
		writeError(w, warden.Errorf(warden.EInvalid, "state %q is not pending or all", st))
		return
	}
	as, err := s.Backend.Approvals(r.Context(), f)
	if err != nil {
		writeError(w, err)
		return
	}
	if as == nil {
		as = []warden.Approval{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvals": as})
}

func (s *Server) getApproval(w http.ResponseWriter, r *http.Request, _ call) {
	a, err := s.Backend.Approval(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

func (s *Server) waitApproval(w http.ResponseWriter, r *http.Request, _ call) {
	timeout := MaxWait
	if t := r.URL.Query().Get("timeout"); t != "" {
		d, err := time.ParseDuration(t)
		if err != nil || d <= 0 {
			writeError(w, warden.Errorf(warden.EInvalid, "timeout %q is not a positive duration such as 30s", t))
			return
		}
		timeout = min(d, MaxWait)
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	a, err := s.Backend.WaitApproval(ctx, r.PathValue("id"))
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, a) // still pending when the wait timed out
}

// answerBody is what approve and deny take.
type answerBody struct {
	// Answer is once (the default), session, always or host (a shell
	// command: run it once on the host) for approve.
	Answer string `json:"answer"`
	// Channel is where the human answered: console, terminal, telegram, api.
	Channel string `json:"channel"`
	By      string `json:"by"`
}

func (s *Server) answer(approve bool) handler {
	return func(w http.ResponseWriter, r *http.Request, c call) {
		var b answerBody
		if len(bytes.TrimSpace(c.body)) > 0 {
			if err := decodeStrict(c.body, &b); err != nil {
				writeError(w, err)
				return
			}
		}
		ans := warden.AnswerDeny
		if approve {
			ans = warden.AnswerOnce
			if b.Answer != "" {
				a, err := warden.ParseAnswer(b.Answer)
				if err != nil || a == warden.AnswerDeny {
					writeError(w, warden.Errorf(warden.EInvalid, "approve takes answer once, session, always or host, not %q", b.Answer))
					return
				}
				ans = a
			}
		}
		who := approval.Who{Name: b.By, Channel: b.Channel}
		if who.Channel == "" {
			who.Channel = "api"
		}
		if who.Name == "" {
			who.Name = string(c.scope)
		}
		a, err := s.Backend.Answer(r.Context(), r.PathValue("id"), ans, who)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, a)
	}
}

func (s *Server) getConfig(w http.ResponseWriter, r *http.Request, _ call) {
	items, err := s.Backend.Config()
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
}

func (s *Server) setConfig(w http.ResponseWriter, r *http.Request, c call) {
	var b struct {
		Value string `json:"value"`
	}
	if err := decodeStrict(c.body, &b); err != nil {
		writeError(w, err)
		return
	}
	if err := s.Backend.SetConfig(r.Context(), r.PathValue("key"), b.Value, "api:"+string(c.scope)); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"key": r.PathValue("key"), "value": b.Value})
}

func (s *Server) getKill(w http.ResponseWriter, r *http.Request, _ call) {
	writeJSON(w, http.StatusOK, map[string]any{"on": s.Backend.KillSwitch()})
}

func (s *Server) setKill(w http.ResponseWriter, r *http.Request, c call) {
	var b struct {
		On *bool  `json:"on"`
		By string `json:"by"`
	}
	if err := decodeStrict(c.body, &b); err != nil {
		writeError(w, err)
		return
	}
	if b.On == nil {
		writeError(w, warden.Errorf(warden.EInvalid, `the body must say {"on": true} or {"on": false}`))
		return
	}
	by := "api"
	if b.By != "" {
		by = b.By
	}
	if err := s.Backend.SetKillSwitch(r.Context(), *b.On, by); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"on": s.Backend.KillSwitch()})
}

func (s *Server) sandboxes(w http.ResponseWriter, r *http.Request, _ call) {
	out, err := s.Backend.Sandboxes(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}

// feedFilter reads the feed's query parameters.
func feedFilter(r *http.Request) (feed.Filter, error) {
	q := r.URL.Query()
	f := feed.Filter{Type: q.Get("type"), Severity: q.Get("severity")}
	for _, p := range []struct {
		name string
		dst  *int64
	}{{"sinceMs", &f.SinceMs}, {"afterSeq", &f.AfterSeq}} {
		if v := q.Get(p.name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return f, warden.Errorf(warden.EInvalid, "%s %q is not a non-negative whole number", p.name, v)
			}
			*p.dst = n
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 5000 {
			return f, warden.Errorf(warden.EInvalid, "limit %q is not a whole number from 1 to 5000", v)
		}
		f.Limit = n
	}
	switch f.Severity {
	case "", "info", "warn", "error", "critical":
	default:
		return f, warden.Errorf(warden.EInvalid, "severity %q is not info, warn, error or critical", f.Severity)
	}
	return f, nil
}

// feed serves the recent audit feed as JSON, or with stream=1 (or Accept:
// text/event-stream) as server-sent events: the matching backlog, then every
// new item as it is recorded.
func (s *Server) feed(w http.ResponseWriter, r *http.Request, _ call) {
	f, err := feedFilter(r)
	if err != nil {
		writeError(w, err)
		return
	}
	stream := r.URL.Query().Get("stream") == "1" || r.Header.Get("Accept") == "text/event-stream"
	if !stream {
		items := s.Feed.List(f)
		if items == nil {
			items = []feed.Item{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"items": items})
		return
	}
	live, cancel := s.Feed.Subscribe(256)
	defer cancel()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	rc := http.NewResponseController(w)
	last := int64(0)
	send := func(it feed.Item) bool {
		if it.Seq <= last {
			return true
		}
		last = it.Seq
		data, _ := json.Marshal(it)
		if _, err := fmt.Fprintf(w, "id: %d\nevent: item\ndata: %s\n\n", it.Seq, data); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	for _, it := range s.Feed.List(f) {
		if !send(it) {
			return
		}
	}
	if _, err := io.WriteString(w, ": live\n\n"); err != nil || rc.Flush() != nil {
		return
	}
	beat := time.NewTicker(15 * time.Second)
	defer beat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case it, ok := <-live:
			if !ok {
				return // too slow: the client reconnects with afterSeq
			}
			if f.Match(it) && !send(it) {
				return
			}
		case <-beat.C:
			if _, err := io.WriteString(w, ": beat\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}

type errorBody struct {
	Error string `json:"error"`
	Code  string `json:"code"`
	Hint  string `json:"hint,omitempty"`
}

var statusOf = map[warden.ErrorCode]int{
	warden.EInvalid:     http.StatusBadRequest,
	warden.ENotFound:    http.StatusNotFound,
	warden.EConflict:    http.StatusConflict,
	warden.EUnavailable: http.StatusServiceUnavailable,
	warden.EInternal:    http.StatusInternalServerError,
}

// writeError answers with the error's user message, never its internal
// cause (which may hold paths or values the caller should not see).
func writeError(w http.ResponseWriter, err error) {
	code := warden.ErrorCodeOf(err)
	body := errorBody{Error: warden.UserMessage(err), Code: string(code)}
	var we *warden.Error
	if errors.As(err, &we) {
		body.Error, body.Hint = we.Message, we.Hint
	}
	writeJSON(w, statusOf[code], body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v)
}

// decodeStrict decodes one JSON object with no unknown fields.
func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return warden.Errorf(warden.EInvalid, "the request body is not the JSON this endpoint takes: %v", err)
	}
	if dec.More() {
		return warden.Errorf(warden.EInvalid, "the request body holds more than one JSON value")
	}
	return nil
}
