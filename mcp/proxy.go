package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/inject"
)

// Gate is the warden gate as the proxy uses it. An error from any method
// means it could not decide or record: the proxy then refuses the call.
type Gate interface {
	// Check decides a tool call and records the decision. An ask opens (or
	// joins, for a retried call) an approval whose id the decision carries.
	// A non-nil distrust (what the proxy holds against the tool: its
	// definition changed, its description is poisoned) adds its verdict
	// to the pipeline's: an ask turns an allow into an ask, a deny denies.
	Check(ctx context.Context, req *warden.Request, distrust *Distrust) (warden.Decision, error)
	// Preview decides req without recording it: the proxy hides the tools a
	// call with no arguments would be denied outright.
	Preview(ctx context.Context, req *warden.Request) warden.Decision
	// Await waits for the approval d opened and returns the decision it ends
	// in (recorded): an allow once a human approved it, else a deny.
	Await(ctx context.Context, req *warden.Request, d warden.Decision) (warden.Decision, error)
	// Answer records the answer the client's user gave to an elicitation
	// for approval id.
	Answer(ctx context.Context, id string, approve bool, by string) error
	// Record appends a security event.
	Record(ctx context.Context, ev Event) error
}

// Distrust is what the proxy holds against a tool beyond the policy.
type Distrust struct {
	Rule    string         // a stable id: mcp.tool_changed, mcp.tool_poisoned, mcp.tool_unverified
	Reason  string         // for the user and the model
	Verdict warden.Verdict // warden.Ask or warden.Deny
}

// Event is a security event the proxy records.
type Event struct {
	Type     string
	Severity warden.Severity
	TraceID  string
	Summary  string
	Meta     map[string]any
}

// Security events the proxy records besides warden's own.
const (
	// EventToolChanged: a server changed a tool's definition after it was
	// first seen.
	EventToolChanged = "mcp_tool_changed"
	// EventToolPoisoned: a tool's description or schema reads as a prompt
	// injection; the tool is hidden and its calls denied.
	EventToolPoisoned = "mcp_tool_poisoned"
)

// Defaults.
const (
	// DefaultBlockScore is the scan score at or above which a result is
	// withheld from the model rather than passed on with a warning.
	DefaultBlockScore = 0.9
	// DefaultWait is how long a call waits for a human to answer its
	// approval before it is refused with the approval's id, to retry.
	DefaultWait = 2 * time.Minute
	// maxScanned bounds how much text of one result is scanned.
	maxScanned = 256 << 10
)

// Proxy is one MCP server's proxy configuration. Gate and Server are
// required; the zero value of every other field is a safe default.
type Proxy struct {
	// Server names the server in tool names: mcp__SERVER__TOOL, as Claude
	// Code and Codex name MCP tools, so the policy judges a tool the same
	// whether the proxy or a host's hook sees the call.
	Server string
	Gate   Gate
	// Scanner scans results; nil uses the shipped payload database.
	Scanner *inject.Scanner
	// BlockScore: a result scoring at or above it is withheld; 0 is
	// DefaultBlockScore, above 1 never withholds.
	BlockScore float64
	// NoWrap passes result text sanitised but not fenced (the scan and its
	// warnings stay).
	NoWrap bool
	// Pins keeps the tool definitions the user has seen; nil keeps them for
	// this process only.
	Pins Pins
	// Wait bounds how long a call waits for a human's answer; 0 is
	// DefaultWait, negative does not wait (the call is refused at once,
	// naming the approval to answer).
	Wait time.Duration
	// Autonomous marks the calls as made on turns without a human.
	Autonomous bool
	// Session is the warden session the calls belong to.
	Session string
	// Cwd is the directory the host started the server in (its project):
	// the calls carry it as a hook's do, so that an answer bound to a
	// call's input (an always rule) covers it through either path.
	Cwd string
	Log *slog.Logger
	// Wrapper draws the fences' nonces (tests fix it).
	Wrapper inject.Wrapper
}

// ErrServerGone is returned by Serve when the server's side ended first.
var ErrServerGone = errors.New("the MCP server closed its connection")

// Serve proxies between client and server until either side ends, and
// closes both. It returns nil when the client ended, ErrServerGone (wrapped
// with what the server's side said) when the server did. Requests still
// waiting for the server are answered with an error.
func (p *Proxy) Serve(ctx context.Context, client, server sdk.Connection) error {
	if p.Gate == nil || p.Server == "" {
		return errors.New("mcp proxy: no gate or server name")
	}
	if p.Scanner == nil {
		s, err := inject.NewScanner(inject.Options{})
		if err != nil {
			return fmt.Errorf("mcp proxy: load the injection scanner: %w", err)
		}
		p.Scanner = s
	}
	if p.Log == nil {
		p.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &session{
		p: p, client: client, server: server,
		pending:     map[jsonrpc.ID]pending{},
		mine:        map[jsonrpc.ID]chan *jsonrpc.Response{},
		ownSent:     map[jsonrpc.ID]chan *jsonrpc.Response{},
		calls:       map[jsonrpc.ID]context.CancelFunc{},
		serverAsked: map[jsonrpc.ID]jsonrpc.ID{}, serverIDs: map[jsonrpc.ID]jsonrpc.ID{},
		defs: newDefinitions(p),
	}
	errc := make(chan error, 2)
	go func() { errc <- s.fromClient(ctx) }()
	go func() { errc <- s.fromServer(ctx) }()
	err := <-errc
	cancel()
	server.Close()
	s.failPending(ctx, err)
	s.wg.Wait() // calls being decided are answered before the client's side closes
	client.Close()
	return err
}

// pending is a client request forwarded to the server whose answer the
// proxy reads before passing it on.
type pending struct {
	method string
	call   *toolCall // tools/call
}

// session is one client's connection through the proxy.
type session struct {
	p              *Proxy
	client, server sdk.Connection

	mu      sync.Mutex
	pending map[jsonrpc.ID]pending
	mine    map[jsonrpc.ID]chan *jsonrpc.Response // the proxy's own requests to the client
	ownSent map[jsonrpc.ID]chan *jsonrpc.Response // and to the server
	listMu  sync.Mutex                            // one listing of the proxy's own at a time
	calls   map[jsonrpc.ID]context.CancelFunc     // tools/call being decided
	// serverAsked maps the proxy's id of a server request forwarded to the
	// client to the server's own; serverIDs the other way.
	serverAsked map[jsonrpc.ID]jsonrpc.ID
	serverIDs   map[jsonrpc.ID]jsonrpc.ID
	elicit      bool // the client declared elicitation
	next        atomic.Int64
	defs        *definitions
	wg          sync.WaitGroup
}

// fromClient reads the client's messages until it ends (nil) or the stream
// breaks.
func (s *session) fromClient(ctx context.Context) error {
	for {
		msg, err := s.client.Read(ctx)
		if err != nil {
			var me *MalformedError
			if errors.As(err, &me) {
				s.p.Log.Warn("mcp: dropped a malformed message from the client", "error", me.Err)
				if me.ID.IsValid() {
					s.replyError(ctx, me.ID, jsonrpc.CodeInvalidRequest, "warden: the request is not valid JSON-RPC ("+me.Err.Error()+"); it was not forwarded")
				}
				continue
			}
			if errors.Is(err, io.EOF) || errors.Is(err, sdk.ErrConnectionClosed) || ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("read from the MCP client: %w", err)
		}
		switch m := msg.(type) {
		case *jsonrpc.Response:
			s.mu.Lock()
			ch, ours := s.mine[m.ID]
			delete(s.mine, m.ID)
			s.mu.Unlock()
			if ours {
				ch <- m
				continue
			}
			s.mu.Lock()
			orig, asked := s.serverAsked[m.ID]
			delete(s.serverAsked, m.ID)
			delete(s.serverIDs, orig)
			s.mu.Unlock()
			if !asked {
				s.p.Log.Warn("mcp: dropped a response from the client to no request of the server's")
				continue
			}
			s.toServer(ctx, &jsonrpc.Response{ID: orig, Result: m.Result, Error: m.Error})
		case *jsonrpc.Request:
			s.clientRequest(ctx, m)
		}
	}
}

// clientRequest routes one request or notification from the client.
func (s *session) clientRequest(ctx context.Context, m *jsonrpc.Request) {
	switch m.Method {
	case "tools/call":
		if !m.IsCall() {
			s.p.Log.Warn("mcp: dropped a tools/call sent as a notification")
			return
		}
		cctx, cancel := context.WithCancel(ctx)
		s.mu.Lock()
		if _, dup := s.calls[m.ID]; dup {
			s.mu.Unlock()
			cancel()
			s.replyError(ctx, m.ID, jsonrpc.CodeInvalidRequest, "warden: a tools/call with this id is already in progress")
			return
		}
		s.calls[m.ID] = cancel
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer cancel()
			s.toolCall(cctx, ctx, m)
			s.mu.Lock()
			delete(s.calls, m.ID)
			s.mu.Unlock()
		}()
		return
	case "notifications/cancelled":
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
				s.mu.Lock()
				cancel := s.calls[id]
				s.mu.Unlock()
				if cancel != nil {
					cancel() // a call still being decided stops waiting
				}
			}
		}
	case "initialize":
		var p struct {
			Capabilities struct {
				Elicitation json.RawMessage `json:"elicitation"`
			} `json:"capabilities"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			s.mu.Lock()
			s.elicit = len(p.Capabilities.Elicitation) > 0 && string(p.Capabilities.Elicitation) != "null"
			s.mu.Unlock()
		}
		if m.IsCall() {
			s.track(m.ID, pending{method: m.Method})
		}
	}
	if m.IsCall() {
		// Every request forwarded is tracked: a response from the server
		// to anything else (a call still being decided, or never sent) is
		// dropped, never passed to the client.
		s.track(m.ID, pending{method: m.Method})
	}
	s.toServer(ctx, m)
}

func (s *session) track(id jsonrpc.ID, p pending) {
	s.mu.Lock()
	s.pending[id] = p
	s.mu.Unlock()
}

// fromServer reads the server's messages until it ends.
func (s *session) fromServer(ctx context.Context) error {
	for {
		msg, err := s.server.Read(ctx)
		if err != nil {
			var me *MalformedError
			if errors.As(err, &me) {
				s.p.Log.Warn("mcp: dropped a malformed message from the server", "error", me.Err)
				if me.ID.IsValid() {
					s.toServer(ctx, errorResponse(me.ID, jsonrpc.CodeInvalidRequest, "warden: the request is not valid JSON-RPC; it was not forwarded"))
				}
				continue
			}
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, io.EOF) || errors.Is(err, sdk.ErrConnectionClosed) {
				return ErrServerGone
			}
			return fmt.Errorf("%w: %v", ErrServerGone, err)
		}
		switch m := msg.(type) {
		case *jsonrpc.Response:
			s.serverResponse(ctx, m)
		case *jsonrpc.Request:
			// notifications/tools/list_changed passes on: the client lists
			// again, and the new listing is judged like the first.
			if m.Method == "sampling/createMessage" && m.IsCall() && !s.sampling(ctx, m) {
				continue
			}
			s.toClient(ctx, s.fromServerID(m))
		}
	}
}

// fromServerID gives a request of the server's an id of the proxy's
// ("server-N"), remembering the server's, so that no id the server chose
// reaches the client: a server cannot answer for the client, nor have the
// client answer the proxy's own questions (its elicitations). A
// cancellation of such a request names the proxy's id.
func (s *session) fromServerID(m *jsonrpc.Request) *jsonrpc.Request {
	if m.Method == "notifications/cancelled" {
		var p map[string]json.RawMessage
		var rid any
		if json.Unmarshal(m.Params, &p) == nil && json.Unmarshal(p["requestId"], &rid) == nil {
			if id, err := jsonrpc.MakeID(rid); err == nil {
				s.mu.Lock()
				mine, ok := s.serverIDs[id]
				s.mu.Unlock()
				if ok {
					p["requestId"], _ = json.Marshal(mine.Raw())
					b, _ := json.Marshal(p)
					return &jsonrpc.Request{Method: m.Method, Params: b}
				}
			}
		}
		return m
	}
	if !m.IsCall() {
		return m
	}
	id, err := jsonrpc.MakeID("server-" + strconv.FormatInt(s.next.Add(1), 10))
	if err != nil {
		return m
	}
	s.mu.Lock()
	s.serverAsked[id] = m.ID
	s.serverIDs[m.ID] = id
	s.mu.Unlock()
	return &jsonrpc.Request{ID: id, Method: m.Method, Params: m.Params}
}

// serverResponse passes a response on, after the proxy's judgement of the
// requests it tracks.
func (s *session) serverResponse(ctx context.Context, m *jsonrpc.Response) {
	s.mu.Lock()
	if ch, own := s.ownSent[m.ID]; own {
		delete(s.ownSent, m.ID)
		s.mu.Unlock()
		ch <- m
		return
	}
	p, ok := s.pending[m.ID]
	delete(s.pending, m.ID)
	s.mu.Unlock()
	if !ok {
		s.p.Log.Warn("mcp: dropped a response from the server to no request it was sent")
		return
	}
	if m.Error != nil {
		trace := ""
		if p.call != nil {
			trace = p.call.dec.TraceID
		}
		m, sc := s.serverError(ctx, p.method, trace, m)
		if p.call != nil {
			outcome := "error"
			if sc.res.Injection {
				outcome = "withheld"
			}
			p.call.finish(ctx, s, outcome, len(m.Result), &sc)
		}
		s.toClient(ctx, m)
		return
	}
	switch p.method {
	case "tools/list":
		m = s.filterTools(ctx, m)
	case "tools/call":
		m = s.callResult(ctx, p.call, m)
	case "tasks/result":
		m = s.taskResult(ctx, m)
	case "resources/read", "prompts/get":
		m = s.contentResult(ctx, p.method, m)
	case "initialize", "server/discover":
		m = s.instructions(ctx, m)
	}
	s.toClient(ctx, m)
}

// failPending answers every request still waiting for the server.
func (s *session) failPending(ctx context.Context, why error) {
	s.mu.Lock()
	ids := make([]jsonrpc.ID, 0, len(s.pending))
	calls := map[jsonrpc.ID]*toolCall{}
	for id, p := range s.pending {
		ids = append(ids, id)
		if p.call != nil {
			calls[id] = p.call
		}
	}
	s.pending = map[jsonrpc.ID]pending{}
	for id, ch := range s.mine {
		close(ch)
		delete(s.mine, id)
	}
	for id, ch := range s.ownSent {
		close(ch)
		delete(s.ownSent, id)
	}
	s.mu.Unlock()
	msg := "warden: the MCP server ended before answering"
	if why != nil {
		msg += " (" + why.Error() + ")"
	}
	bg := context.WithoutCancel(ctx)
	for _, id := range ids {
		if c := calls[id]; c != nil {
			c.finish(bg, s, "server_gone", 0, nil)
		}
		_ = s.client.Write(bg, errorResponse(id, jsonrpc.CodeInternalError, msg))
	}
}

// request sends a request of the proxy's own to the client and waits for
// its answer (nil when the session ended).
func (s *session) request(ctx context.Context, method string, params any) (*jsonrpc.Response, error) {
	return s.send(ctx, s.client, s.mine, method, params)
}

// send sends a request of the proxy's own on conn, its answer expected in
// waiting, and waits for the answer.
func (s *session) send(ctx context.Context, conn sdk.Connection, waiting map[jsonrpc.ID]chan *jsonrpc.Response, method string, params any) (*jsonrpc.Response, error) {
	id := jsonrpc.ID{}
	var err error
	if id, err = jsonrpc.MakeID("warden-" + strconv.FormatInt(s.next.Add(1), 10)); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	req := &jsonrpc.Request{ID: id, Method: method, Params: raw}
	ch := make(chan *jsonrpc.Response, 1)
	s.mu.Lock()
	waiting[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(waiting, id)
		s.mu.Unlock()
	}()
	if err := conn.Write(ctx, req); err != nil {
		return nil, err
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, errors.New("the session ended")
		}
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// listTools reads the server's tool list, every page, for the proxy
// itself, when the client calls a tool no listing in this session showed
// (a client with the list cached, or one that read only its first page):
// the call is then judged against the definitions as they are now, changed
// or poisoned. An error leaves every tool not listed unverified.
func (s *session) listTools(ctx context.Context, name string) {
	s.listMu.Lock()
	defer s.listMu.Unlock()
	if s.defs.checked(name) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cursor := ""
	for range 50 {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		r, err := s.send(ctx, s.server, s.ownSent, "tools/list", params)
		if err == nil && r.Error != nil {
			err = r.Error
		}
		if err == nil {
			_, err = s.defs.filter(ctx, r.Result)
		}
		if err != nil {
			s.defs.unverified(fmt.Errorf("warden could not read the server's tool list: %w", err))
			return
		}
		var page struct {
			NextCursor string `json:"nextCursor"`
		}
		_ = json.Unmarshal(r.Result, &page)
		if cursor = page.NextCursor; cursor == "" {
			s.defs.listedAll()
			return
		}
	}
	s.defs.unverified(errors.New("warden read only the first 50 pages of the server's tool list"))
}

func (s *session) toServer(ctx context.Context, m jsonrpc.Message) {
	if err := s.server.Write(ctx, m); err != nil && ctx.Err() == nil {
		s.p.Log.Warn("mcp: could not write to the server", "error", err)
		if r, ok := m.(*jsonrpc.Request); ok && r.IsCall() {
			s.mu.Lock()
			delete(s.pending, r.ID)
			s.mu.Unlock()
			s.replyError(ctx, r.ID, jsonrpc.CodeInternalError, "warden: could not reach the MCP server: "+err.Error())
		}
	}
}

func (s *session) toClient(ctx context.Context, m jsonrpc.Message) {
	// Written even when the session is ending: a call refused because the
	// server went away is still answered.
	if err := s.client.Write(context.WithoutCancel(ctx), m); err != nil && ctx.Err() == nil {
		s.p.Log.Warn("mcp: could not write to the client", "error", err)
	}
}

func (s *session) replyError(ctx context.Context, id jsonrpc.ID, code int64, msg string) {
	s.toClient(ctx, errorResponse(id, code, msg))
}

func errorResponse(id jsonrpc.ID, code int64, msg string) *jsonrpc.Response {
	return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: msg}}
}

// reply answers a client request with result.
func (s *session) reply(ctx context.Context, id jsonrpc.ID, result any) {
	raw, err := json.Marshal(result)
	if err != nil {
		s.replyError(ctx, id, jsonrpc.CodeInternalError, "warden: could not encode its answer")
		return
	}
	s.toClient(ctx, &jsonrpc.Response{ID: id, Result: raw})
}
