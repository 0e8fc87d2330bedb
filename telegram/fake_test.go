package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/approval"
)

// fakeAPI is a Telegram Bot API server on loopback. It serves the methods
// the channel uses, records every call, and long-polls getUpdates over the
// updates a test queues with press.
type fakeAPI struct {
	t     *testing.T
	token string
	srv   *httptest.Server

	mu      sync.Mutex
	calls   []apiCall
	updates []json.RawMessage // queued, update i has id i+1
	nextMsg int
	// fail, when set, is the error every method but getUpdates returns.
	fail *apiError
	// changed is closed and replaced whenever a call or an update arrives.
	changed chan struct{}
}

// apiCall is one recorded Bot API call.
type apiCall struct {
	Method string
	Params map[string]string
}

type apiError struct {
	Code        int
	Description string
}

func newFakeAPI(t *testing.T, token string) *fakeAPI {
	f := &fakeAPI{t: t, token: token, nextMsg: 100, changed: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// broadcast wakes everyone waiting on changed; f.mu is held.
func (f *fakeAPI) broadcast() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	method, ok := strings.CutPrefix(r.URL.Path, "/bot"+f.token+"/")
	if !ok || r.Method != http.MethodPost {
		writeAPI(w, nil, &apiError{Code: http.StatusNotFound, Description: "Not Found"})
		return
	}
	params, err := formParams(r)
	if err != nil {
		writeAPI(w, nil, &apiError{Code: http.StatusBadRequest, Description: "Bad Request: " + err.Error()})
		return
	}
	f.mu.Lock()
	f.calls = append(f.calls, apiCall{Method: method, Params: params})
	f.broadcast()
	fail := f.fail
	f.mu.Unlock()
	if fail != nil && method != "getUpdates" {
		writeAPI(w, nil, fail)
		return
	}
	switch method {
	case "getMe":
		writeAPI(w, models.User{ID: 1, IsBot: true, FirstName: "warden", Username: "warden_bot"}, nil)
	case "getUpdates":
		f.getUpdates(w, r, params)
	case "sendMessage", "editMessageText", "editMessageReplyMarkup":
		chat, _ := strconv.ParseInt(params["chat_id"], 10, 64)
		id, _ := strconv.Atoi(params["message_id"])
		if method == "sendMessage" {
			f.mu.Lock()
			f.nextMsg++
			id = f.nextMsg
			f.mu.Unlock()
		}
		writeAPI(w, map[string]any{
			"message_id": id, "date": time.Now().Unix(), "text": params["text"],
			"chat": map[string]any{"id": chat, "type": "group"},
		}, nil)
	case "answerCallbackQuery":
		writeAPI(w, true, nil)
	default:
		writeAPI(w, nil, &apiError{Code: http.StatusNotFound, Description: "Not Found: method " + method})
	}
}

// getUpdates answers with the queued updates from offset on, waiting up to
// the timeout param for one to arrive.
func (f *fakeAPI) getUpdates(w http.ResponseWriter, r *http.Request, params map[string]string) {
	offset, _ := strconv.Atoi(params["offset"])
	timeout, _ := strconv.Atoi(params["timeout"])
	deadline := time.NewTimer(time.Duration(timeout) * time.Second)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		var ups []json.RawMessage
		for i := max(offset, 1); i <= len(f.updates); i++ {
			ups = append(ups, f.updates[i-1])
		}
		changed := f.changed
		f.mu.Unlock()
		if len(ups) > 0 {
			writeAPI(w, ups, nil)
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			writeAPI(w, []json.RawMessage{}, nil)
			return
		case <-r.Context().Done():
			return
		}
	}
}

// formParams decodes the multipart form the client sends; a call without
// params has an empty body.
func formParams(r *http.Request) (map[string]string, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	params := map[string]string{}
	if len(body) == 0 {
		return params, nil
	}
	_, mt, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return nil, err
	}
	mr := multipart.NewReader(bytes.NewReader(body), mt["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return params, nil
		}
		if err != nil {
			return nil, err
		}
		v, err := io.ReadAll(p)
		if err != nil {
			return nil, err
		}
		params[p.FormName()] = string(v)
	}
}

func writeAPI(w http.ResponseWriter, result any, e *apiError) {
	w.Header().Set("Content-Type", "application/json")
	if e != nil {
		w.WriteHeader(e.Code)
		json.NewEncoder(w).Encode(map[string]any{"ok": false, "error_code": e.Code, "description": e.Description})
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
}

// press queues a callback query: user from pressed the button with data on
// message msg of chat. It returns the query's id.
func (f *fakeAPI) press(from, chat int64, msg int, data string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := len(f.updates) + 1
	qid := fmt.Sprintf("query-%d", id)
	up, err := json.Marshal(map[string]any{
		"update_id": id,
		"callback_query": map[string]any{
			"id":            qid,
			"from":          map[string]any{"id": from, "is_bot": false, "first_name": "Ada"},
			"chat_instance": "1",
			"data":          data,
			"message": map[string]any{
				"message_id": msg, "date": 1700000000, "text": "Approval needed",
				"chat": map[string]any{"id": chat, "type": "group"},
			},
		},
	})
	if err != nil {
		f.t.Fatal(err)
	}
	f.updates = append(f.updates, up)
	f.broadcast()
	return qid
}

// failWith makes every method but getUpdates fail with code and description.
func (f *fakeAPI) failWith(code int, description string) {
	f.mu.Lock()
	f.fail = &apiError{Code: code, Description: description}
	f.mu.Unlock()
}

// callsTo returns the recorded calls of method, in order.
func (f *fakeAPI) callsTo(method string) []apiCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []apiCall
	for _, c := range f.calls {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// waitFor waits until a recorded call of method satisfies match, and
// returns it.
func (f *fakeAPI) waitFor(method string, match func(apiCall) bool) apiCall {
	f.t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		f.mu.Lock()
		changed := f.changed
		calls := append([]apiCall(nil), f.calls...)
		f.mu.Unlock()
		for _, c := range calls {
			if c.Method == method && (match == nil || match(c)) {
				return c
			}
		}
		select {
		case <-changed:
		case <-timeout:
			f.t.Fatalf("no %s call came within 5s; calls: %v", method, calls)
		}
	}
}

// answeredQuery matches the answerCallbackQuery of query id.
func answeredQuery(id string) func(apiCall) bool {
	return func(c apiCall) bool { return c.Params["callback_query_id"] == id }
}

// buttons decodes a call's reply_markup into its buttons' callback data,
// row by row; nil when the call has no reply_markup.
func buttons(t *testing.T, c apiCall) [][]string {
	t.Helper()
	raw, ok := c.Params["reply_markup"]
	if !ok {
		return nil
	}
	var kb models.InlineKeyboardMarkup
	if err := json.Unmarshal([]byte(raw), &kb); err != nil {
		t.Fatalf("reply_markup %q: %v", raw, err)
	}
	rows := [][]string{}
	for _, row := range kb.InlineKeyboard {
		var r []string
		for _, b := range row {
			r = append(r, b.Text+"="+b.CallbackData)
		}
		rows = append(rows, r)
	}
	return rows
}

// fakeAnswers is an Answerer over a map of approvals. OnAnswer, when set,
// runs after an answer is recorded, as the queue tells its notifiers.
type fakeAnswers struct {
	mu        sync.Mutex
	approvals map[string]warden.Approval
	answers   []recordedAnswer
	err       error
	onAnswer  func(warden.Approval)
}

type recordedAnswer struct {
	ID     string
	Answer warden.Answer
	Who    approval.Who
}

func (f *fakeAnswers) Answer(ctx context.Context, id string, ans warden.Answer, who approval.Who) (warden.Approval, error) {
	f.mu.Lock()
	f.answers = append(f.answers, recordedAnswer{id, ans, who})
	a, ok := f.approvals[id]
	err := f.err
	if err == nil && !ok {
		err = warden.Errorf(warden.ENotFound, "approval %s not found", id)
	}
	if err == nil {
		a.State, a.Answer, a.AnsweredBy = warden.ApprovalDenied, ans, who.String()
		if ans.Approves() {
			a.State = warden.ApprovalApproved
		}
		f.approvals[id] = a
	}
	on := f.onAnswer
	f.mu.Unlock()
	if err != nil {
		return a, err
	}
	if on != nil {
		on(a)
	}
	return a, nil
}

func (f *fakeAnswers) Get(ctx context.Context, id string) (warden.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.approvals[id]
	if !ok {
		return a, warden.Errorf(warden.ENotFound, "approval %s not found", id)
	}
	return a, nil
}

func (f *fakeAnswers) recorded() []recordedAnswer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recordedAnswer(nil), f.answers...)
}
