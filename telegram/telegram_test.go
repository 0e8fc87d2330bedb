package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/approval"
)

const (
	testToken  = "123456789:AAH-test_Secret-token0123456789"
	testSecret = "AAH-test_Secret-token0123456789"
	testChat   = int64(-100123)
	otherChat  = int64(-100999)
	alice      = int64(4242) // allowed
	mallory    = int64(6666) // not allowed
	approvalID = "0b9f5a4e-6a1e-4c1a-9c62-3f1d2f7e8a01"
)

var expires = time.Date(2026, 5, 4, 12, 30, 0, 0, time.UTC)

// syncBuffer is a log sink safe for the channel's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// harness is a channel talking to a fake Bot API, answering through fake
// answers.
type harness struct {
	ch      *Channel
	api     *fakeAPI
	answers *fakeAnswers
	logs    *syncBuffer
}

func newHarness(t *testing.T, approvals ...warden.Approval) *harness {
	t.Helper()
	h := &harness{api: newFakeAPI(t, testToken), answers: &fakeAnswers{approvals: map[string]warden.Approval{}}, logs: &syncBuffer{}}
	for _, a := range approvals {
		h.answers.approvals[a.ID] = a
	}
	ch, err := New(Config{
		Token: testToken, ChatID: testChat, AllowedUsers: []int64{alice},
		ServerURL: h.api.srv.URL, PollTimeout: time.Second,
	}, h.answers, slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.ch = ch
	t.Cleanup(func() {
		if logs := h.logs.String(); strings.Contains(logs, testSecret) {
			t.Errorf("the log holds the bot token:\n%s", logs)
		}
	})
	return h
}

// run runs the channel until the test ends.
func (h *harness) run(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.ch.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// ask posts a and returns the id of the message that asks it.
func (h *harness) ask(t *testing.T, a warden.Approval) int {
	t.Helper()
	if err := h.ch.Asked(context.Background(), a); err != nil {
		t.Fatalf("Asked: %v", err)
	}
	h.ch.mu.Lock()
	defer h.ch.mu.Unlock()
	return h.ch.messages[a.ID]
}

func testApproval(mod ...func(*warden.Approval)) warden.Approval {
	a := warden.Approval{
		ID: approvalID,
		Request: warden.Request{
			Capability: "shell", Action: "exec", Resource: "rm -rf build <b>*bold*</b>",
			Session: "sess-7", RequestedBy: "claude",
		},
		Decision: warden.Decision{
			Verdict: warden.Ask, Reason: "deleting files needs a person", Rule: "shell.ask",
			Tier: warden.TierAlwaysConfirm, ApprovalID: approvalID,
		},
		CreatedAt: expires.Add(-5 * time.Minute), ExpiresAt: expires,
		Channel: "api", State: warden.ApprovalPending,
	}
	for _, m := range mod {
		m(&a)
	}
	return a
}

func TestAskedPostsButtons(t *testing.T) {
	const id = approvalID
	tests := []struct {
		name string
		mod  func(*warden.Approval)
		want [][]string
	}{
		{
			name: "with session",
			mod:  func(*warden.Approval) {},
			want: [][]string{
				{"Approve once=a:" + id + ":once", "Deny=a:" + id + ":deny"},
				{"Session=a:" + id + ":session", "Always=a:" + id + ":always"},
				{"Run on host=a:" + id + ":host"},
				{"View=v:" + id},
			},
		},
		{
			name: "tier 4",
			mod: func(a *warden.Approval) {
				a.Decision.Tier, a.Decision.ManualOnly = warden.TierManualOnly, true
			},
			want: [][]string{
				{"Approve once=a:" + id + ":once", "Deny=a:" + id + ":deny"},
				{"Run on host=a:" + id + ":host"},
				{"View=v:" + id},
			},
		},
		{
			name: "without session",
			mod:  func(a *warden.Approval) { a.Request.Session = "" },
			want: [][]string{
				{"Approve once=a:" + id + ":once", "Deny=a:" + id + ":deny"},
				{"Always=a:" + id + ":always"},
				{"Run on host=a:" + id + ":host"},
				{"View=v:" + id},
			},
		},
		{
			// Only a shell command can run on the host.
			name: "file write",
			mod: func(a *warden.Approval) {
				a.Request.Capability, a.Request.Action = warden.CapFilesystem, "write"
			},
			want: [][]string{
				{"Approve once=a:" + id + ":once", "Deny=a:" + id + ":deny"},
				{"Session=a:" + id + ":session", "Always=a:" + id + ":always"},
				{"View=v:" + id},
			},
		},
		{
			name: "tier 4 tool call",
			mod: func(a *warden.Approval) {
				a.Request.Capability, a.Request.Action = warden.CapTool, "call"
				a.Decision.Tier, a.Decision.ManualOnly = warden.TierManualOnly, true
			},
			want: [][]string{
				{"Approve once=a:" + id + ":once", "Deny=a:" + id + ":deny"},
				{"View=v:" + id},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			a := testApproval(tt.mod)
			msg := h.ask(t, a)
			sent := h.api.callsTo("sendMessage")
			if len(sent) != 1 {
				t.Fatalf("Asked made %d sendMessage calls, want 1", len(sent))
			}
			c := sent[0]
			if got := c.Params["chat_id"]; got != strconv.FormatInt(testChat, 10) {
				t.Errorf("chat_id = %q, want %d", got, testChat)
			}
			if got := buttons(t, c); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("buttons = %q, want %q", got, tt.want)
			}
			for _, row := range buttons(t, c) {
				for _, b := range row {
					if _, data, _ := strings.Cut(b, "="); len(data) > maxCallbackData {
						t.Errorf("callback data %q is %d bytes, over %d", data, len(data), maxCallbackData)
					}
				}
			}
			if pm, ok := c.Params["parse_mode"]; ok {
				t.Errorf("parse_mode = %q, want plain text", pm)
			}
			if !strings.Contains(c.Params["link_preview_options"], `"is_disabled":true`) {
				t.Errorf("link_preview_options = %q, want previews disabled", c.Params["link_preview_options"])
			}
			text := c.Params["text"]
			for _, want := range []string{
				a.Request.Capability + " " + a.Request.Action + ": rm -rf build <b>*bold*</b>", // shown as written
				"Reason: deleting files needs a person",
				"Tier: " + a.Decision.Tier.String(),
				"Expires: 2026-05-04T12:30:00Z",
				"Approval: " + id,
			} {
				if !strings.Contains(text, want) {
					t.Errorf("text does not contain %q:\n%s", want, text)
				}
			}
			wantSession := "Session: sess-7"
			if a.Request.Session == "" {
				wantSession = "Session: none"
			}
			if !strings.Contains(text, wantSession) {
				t.Errorf("text does not contain %q:\n%s", wantSession, text)
			}
			if msg != 101 {
				t.Errorf("remembered message %d, want 101 (the one posted)", msg)
			}
		})
	}
}

func TestAskedKeepsValuesOnTheirLines(t *testing.T) {
	h := newHarness(t)
	a := testApproval(func(a *warden.Approval) {
		a.Request.Resource = "rm -rf /\nReason: routine cleanup\nApproval: 00000000-0000-4000-8000-000000000000"
		a.Decision.Reason = "needs a person\n\nOutcome: approved"
		a.Request.Session = "s\u202E1"
	})
	h.ask(t, a)
	text := h.api.callsTo("sendMessage")[0].Params["text"]
	lines := strings.Split(text, "\n")
	var labels []string
	for _, l := range lines {
		label, _, _ := strings.Cut(l, ":")
		labels = append(labels, label)
	}
	want := []string{"Approval needed", "Reason", "Tier", "Session", "Requested by", "Expires", "Approval"}
	if !reflect.DeepEqual(labels, want) {
		t.Errorf("message lines start %q, want %q:\n%s", labels, want, text)
	}
	if strings.ContainsRune(text, '\u202E') {
		t.Errorf("message holds a raw bidi override:\n%s", text)
	}
}

func TestAskedRefusesLongID(t *testing.T) {
	h := newHarness(t)
	a := testApproval(func(a *warden.Approval) { a.ID = strings.Repeat("x", 60) })
	if err := h.ch.Asked(context.Background(), a); warden.ErrorCodeOf(err) != warden.EInternal {
		t.Errorf("Asked(60-byte id) = %v, want an internal error", err)
	}
	if n := len(h.api.callsTo("sendMessage")); n != 0 {
		t.Errorf("Asked(60-byte id) posted %d messages, want none", n)
	}
}

func TestPressAnswers(t *testing.T) {
	tests := []struct {
		name   string
		data   string
		answer warden.Answer
		state  warden.ApprovalState
	}{
		{"once", "a:" + approvalID + ":once", warden.AnswerOnce, warden.ApprovalApproved},
		{"deny", "a:" + approvalID + ":deny", warden.AnswerDeny, warden.ApprovalDenied},
		{"session", "a:" + approvalID + ":session", warden.AnswerSession, warden.ApprovalApproved},
		{"always", "a:" + approvalID + ":always", warden.AnswerAlways, warden.ApprovalApproved},
		{"host", "a:" + approvalID + ":host", warden.AnswerHost, warden.ApprovalApproved},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := testApproval()
			h := newHarness(t, a)
			// As the queue does, tell the channel the approval ended.
			h.answers.onAnswer = func(a warden.Approval) {
				if err := h.ch.Ended(context.Background(), a); err != nil {
					t.Errorf("Ended: %v", err)
				}
			}
			msg := h.ask(t, a)
			h.run(t)
			q := h.api.press(alice, testChat, msg, tt.data)
			reply := h.api.waitFor("answerCallbackQuery", answeredQuery(q))

			want := []recordedAnswer{{ID: approvalID, Answer: tt.answer, Who: approval.Who{Name: strconv.FormatInt(alice, 10), Channel: "telegram"}}}
			if got := h.answers.recorded(); !reflect.DeepEqual(got, want) {
				t.Errorf("Answer calls = %+v, want %+v", got, want)
			}
			if got, want := reply.Params["text"], "is "+string(tt.state); !strings.Contains(got, want) {
				t.Errorf("callback answer %q does not contain %q", got, want)
			}
			if got := reply.Params["text"]; (tt.answer == warden.AnswerHost) != strings.Contains(got, "on the host") {
				t.Errorf("callback answer %q; want it to say the command runs on the host exactly when the answer is host", got)
			}
			if edits := h.api.callsTo("editMessageText"); len(edits) != 1 {
				t.Errorf("%d editMessageText calls, want 1 (from Ended only)", len(edits))
			}
			if n := len(h.api.callsTo("sendMessage")); n != 1 {
				t.Errorf("%d sendMessage calls, want only the one that asked", n)
			}
		})
	}
}

func TestPressRefused(t *testing.T) {
	tests := []struct {
		name string
		from int64
		chat int64
	}{
		{"user not allowed", mallory, testChat},
		{"other chat", alice, otherChat},
		{"neither", mallory, otherChat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := testApproval()
			h := newHarness(t, a)
			msg := h.ask(t, a)
			h.run(t)
			for _, data := range []string{"a:" + approvalID + ":once", "v:" + approvalID} {
				q := h.api.press(tt.from, tt.chat, msg, data)
				reply := h.api.waitFor("answerCallbackQuery", answeredQuery(q))
				if got := reply.Params["text"]; !strings.Contains(got, "not allowed") {
					t.Errorf("press %q: callback answer %q, want \"not allowed\"", data, got)
				}
			}
			if got := h.answers.recorded(); len(got) != 0 {
				t.Errorf("Answer was called: %+v", got)
			}
			if n := len(h.api.callsTo("sendMessage")); n != 1 {
				t.Errorf("%d sendMessage calls, want only the one that asked (View must not show anything)", n)
			}
			if logs := h.logs.String(); !strings.Contains(logs, "refused a button press") {
				t.Errorf("the refusal was not logged:\n%s", logs)
			}
		})
	}
}

func TestPressMalformed(t *testing.T) {
	for _, data := range []string{"", "x", "a:" + approvalID, "a:" + approvalID + ":approve", "a::once", "v:", "q:" + approvalID + ":once"} {
		t.Run(data, func(t *testing.T) {
			a := testApproval()
			h := newHarness(t, a)
			msg := h.ask(t, a)
			h.run(t)
			q := h.api.press(alice, testChat, msg, data)
			reply := h.api.waitFor("answerCallbackQuery", answeredQuery(q))
			if got := reply.Params["text"]; !strings.Contains(got, "not one of warden's") {
				t.Errorf("callback answer %q, want \"not one of warden's\"", got)
			}
			if got := h.answers.recorded(); len(got) != 0 {
				t.Errorf("Answer was called: %+v", got)
			}
		})
	}
}

func TestPressView(t *testing.T) {
	a := testApproval(func(a *warden.Approval) {
		a.Request.Params = map[string]json.RawMessage{"path": json.RawMessage(`"build/"`)}
		a.Request.Context = "clean the build before release"
	})
	h := newHarness(t, a)
	msg := h.ask(t, a)
	h.run(t)
	q := h.api.press(alice, testChat, msg, "v:"+approvalID)
	reply := h.api.waitFor("answerCallbackQuery", answeredQuery(q))
	if reply.Params["text"] == "" {
		t.Errorf("the View press was answered with no text")
	}
	sent := h.api.callsTo("sendMessage")
	if len(sent) != 2 {
		t.Fatalf("%d sendMessage calls, want the ask and the content", len(sent))
	}
	c := sent[1]
	if got, want := c.Params["text"], approval.Content(&a); got != want {
		t.Errorf("View sent\n%s\nwant\n%s", got, want)
	}
	if got := c.Params["chat_id"]; got != strconv.FormatInt(testChat, 10) {
		t.Errorf("View sent to chat %s, want %d", got, testChat)
	}
	if got, want := c.Params["reply_parameters"], `"message_id":`+strconv.Itoa(msg); !strings.Contains(got, want) {
		t.Errorf("reply_parameters = %q, want a reply to %d", got, msg)
	}
	if got := h.answers.recorded(); len(got) != 0 {
		t.Errorf("View answered the approval: %+v", got)
	}
}

func TestContentTextTruncates(t *testing.T) {
	// "😀" is two UTF-16 code units, which is what Telegram counts.
	a := testApproval(func(a *warden.Approval) { a.Request.Context = strings.Repeat("😀", 5000) })
	got := contentText(&a)
	if n := utf16Len(got); n > maxText {
		t.Errorf("content is %d UTF-16 units, over %d", n, maxText)
	}
	if !strings.Contains(got, "truncated") {
		t.Errorf("cut content does not say it was truncated: …%s", got[len(got)-120:])
	}
	if !strings.HasPrefix(got, approval.Content(&a)[:1000]) {
		t.Errorf("cut content does not start with the content")
	}
	short := testApproval()
	if got, want := contentText(&short), approval.Content(&short); got != want {
		t.Errorf("short content changed:\n%s\nwant\n%s", got, want)
	}
}

func TestEnded(t *testing.T) {
	a := testApproval()
	h := newHarness(t)
	msg := h.ask(t, a)
	a.State, a.Answer, a.AnsweredBy = warden.ApprovalDenied, warden.AnswerOnce, "telegram:4242"
	a.AnsweredAt = expires.Add(-time.Minute)
	a.Note = "the current policy denies this request: kill switch"
	if err := h.ch.Ended(context.Background(), a); err != nil {
		t.Fatalf("Ended: %v", err)
	}
	edits := h.api.callsTo("editMessageText")
	if len(edits) != 1 {
		t.Fatalf("%d editMessageText calls, want 1", len(edits))
	}
	c := edits[0]
	if got := c.Params["chat_id"]; got != strconv.FormatInt(testChat, 10) {
		t.Errorf("chat_id = %q, want %d", got, testChat)
	}
	if got := c.Params["message_id"]; got != strconv.Itoa(msg) {
		t.Errorf("message_id = %q, want %d", got, msg)
	}
	for _, want := range []string{
		"shell exec: rm -rf build",
		"Outcome: denied",
		"Answer: once",
		"Answered by: telegram:4242",
		"At: 2026-05-04T12:29:00Z",
		"Note: the current policy denies this request: kill switch",
	} {
		if !strings.Contains(c.Params["text"], want) {
			t.Errorf("edited text does not contain %q:\n%s", want, c.Params["text"])
		}
	}
	if got := buttons(t, c); got == nil || len(got) != 0 {
		t.Errorf("edited keyboard = %q, want an empty one", got)
	}

	// The message is edited once; an approval never posted is left alone.
	if err := h.ch.Ended(context.Background(), a); err != nil {
		t.Errorf("Ended again: %v", err)
	}
	other := testApproval(func(a *warden.Approval) { a.ID = "9d1c1f4e-0000-4000-8000-000000000000" })
	if err := h.ch.Ended(context.Background(), other); err != nil {
		t.Errorf("Ended(unknown approval) = %v, want nil", err)
	}
	if n := len(h.api.callsTo("editMessageText")) + len(h.api.callsTo("editMessageReplyMarkup")); n != 1 {
		t.Errorf("%d edits in all, want 1", n)
	}
}

func TestEndedExpired(t *testing.T) {
	a := testApproval()
	h := newHarness(t)
	h.ask(t, a)
	a.State, a.Note = warden.ApprovalExpired, "nobody answered in time, which is a deny"
	if err := h.ch.Ended(context.Background(), a); err != nil {
		t.Fatalf("Ended: %v", err)
	}
	text := h.api.callsTo("editMessageText")[0].Params["text"]
	for _, want := range []string{"Outcome: expired", "Note: nobody answered in time"} {
		if !strings.Contains(text, want) {
			t.Errorf("edited text does not contain %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Answer:") || strings.Contains(text, "Answered by:") {
		t.Errorf("an expiry shows an answer:\n%s", text)
	}
}

func TestAnswerErrorShown(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		want    string
		notWant string
	}{
		{
			name: "already answered",
			err:  warden.Errorf(warden.EConflict, "approval %s is already denied", approvalID),
			want: "approval " + approvalID + " is already denied",
		},
		{
			name: "tier 4 refusal",
			err: warden.Errorf(warden.EInvalid, "approval %s is tier 4 (manual only): it can only be approved once", approvalID).
				WithHint("answer once, or deny"),
			want: "tier 4 (manual only)",
		},
		{
			name:    "internal failure",
			err:     errors.New("sqlite: disk I/O error at /var/lib/warden/db"),
			want:    "warden could not answer approval " + approvalID + "; see its log.",
			notWant: "/var/lib/warden",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := testApproval()
			h := newHarness(t, a)
			h.answers.err = tt.err
			msg := h.ask(t, a)
			h.run(t)
			q := h.api.press(alice, testChat, msg, "a:"+approvalID+":session")
			reply := h.api.waitFor("answerCallbackQuery", answeredQuery(q))
			if got := reply.Params["text"]; !strings.Contains(got, tt.want) {
				t.Errorf("callback answer %q does not contain %q", got, tt.want)
			}
			if reply.Params["show_alert"] != "true" {
				t.Errorf("show_alert = %q, want true", reply.Params["show_alert"])
			}
			h.api.waitFor("sendMessage", func(c apiCall) bool { return c.Params["reply_parameters"] != "" })
			sent := h.api.callsTo("sendMessage")
			if len(sent) != 2 {
				t.Fatalf("%d sendMessage calls, want the ask and the error reply", len(sent))
			}
			if got := sent[1].Params["text"]; !strings.Contains(got, tt.want) || !strings.Contains(got, "telegram:4242") {
				t.Errorf("reply %q does not name the presser and contain %q", got, tt.want)
			}
			if got := sent[1].Params["reply_parameters"]; !strings.Contains(got, `"message_id":`+strconv.Itoa(msg)) {
				t.Errorf("reply_parameters = %q, want a reply to %d", got, msg)
			}
			if tt.notWant != "" && (strings.Contains(reply.Params["text"], tt.notWant) || strings.Contains(sent[1].Params["text"], tt.notWant)) {
				t.Errorf("the presser was shown the internal error %q", tt.notWant)
			}
			if n := len(h.answers.recorded()); n != 1 {
				t.Errorf("Answer called %d times, want 1", n)
			}
		})
	}
}

func TestErrorsHideToken(t *testing.T) {
	tests := []struct {
		name     string
		breakAPI func(*fakeAPI)
		// quotes is set when the failure quotes the token, so the mask must
		// stand in its place.
		quotes bool
	}{
		{"api error quoting the token", func(f *fakeAPI) {
			f.failWith(http.StatusUnauthorized, "Unauthorized: token "+testToken+" ("+testSecret+") is revoked")
		}, true},
		{"server error", func(f *fakeAPI) { f.failWith(http.StatusInternalServerError, "Internal Server Error for "+testToken) }, true},
		{"server closed", func(f *fakeAPI) { f.srv.Close() }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := testApproval()
			h := newHarness(t, a)
			msg := h.ask(t, a)
			tt.breakAPI(h.api)

			err := h.ch.Asked(context.Background(), a)
			if err == nil {
				t.Fatal("Asked succeeded against a broken API")
			}
			if warden.ErrorCodeOf(err) != warden.EUnavailable {
				t.Errorf("Asked error code = %s, want %s", warden.ErrorCodeOf(err), warden.EUnavailable)
			}
			if s := err.Error(); strings.Contains(s, testSecret) {
				t.Errorf("Asked error holds the token: %s", s)
			}
			if s := err.Error(); !strings.Contains(s, "could not post approval "+approvalID) || tt.quotes && !strings.Contains(s, tokenMask) {
				t.Errorf("Asked error = %q, want the approval named and the token masked", s)
			}
			if s := warden.UserMessage(err); strings.Contains(s, testSecret) {
				t.Errorf("Asked user message holds the token: %s", s)
			}
			for e := error(err); e != nil; e = errors.Unwrap(e) {
				if strings.Contains(e.Error(), testSecret) {
					t.Errorf("an error in the chain holds the token: %s", e)
				}
			}

			h.ch.mu.Lock()
			h.ch.messages[a.ID] = msg
			h.ch.mu.Unlock()
			if err := h.ch.Ended(context.Background(), a); err == nil || strings.Contains(err.Error(), testSecret) {
				t.Errorf("Ended = %v, want an error without the token", err)
			}

			// Run's failures go to the log, which the harness checks.
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			if err := h.ch.Run(ctx); err != nil && strings.Contains(err.Error(), testSecret) {
				t.Errorf("Run error holds the token: %s", err)
			}
		})
	}
}

func TestRunRefusedToken(t *testing.T) {
	h := newHarness(t)
	h.api.failWith(http.StatusUnauthorized, "Unauthorized")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := h.ch.Run(ctx)
	if warden.ErrorCodeOf(err) != warden.EInvalid {
		t.Fatalf("Run with a refused token = %v, want an invalid error", err)
	}
	if strings.Contains(err.Error(), testSecret) {
		t.Errorf("Run error holds the token: %s", err)
	}
	if n := len(h.api.callsTo("getUpdates")); n != 0 {
		t.Errorf("Run polled %d times with a refused token", n)
	}
}

func TestRunStopsOnCancel(t *testing.T) {
	api := newFakeAPI(t, testToken)
	ch, err := New(Config{Token: testToken, ChatID: testChat, ServerURL: api.srv.URL, PollTimeout: 30 * time.Second},
		&fakeAnswers{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ch.Run(ctx) }()
	poll := api.waitFor("getUpdates", nil)
	if got := poll.Params["timeout"]; got != "30" {
		t.Errorf("getUpdates timeout = %q, want 30", got)
	}
	if got := poll.Params["allowed_updates"]; got != `["callback_query"]` {
		t.Errorf("getUpdates allowed_updates = %q, want only callback queries", got)
	}
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil once ctx ends", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("Run took %s to stop", d)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Run did not stop within 3s of ctx ending")
	}
}

func TestRunHonoursOffset(t *testing.T) {
	a := testApproval()
	h := newHarness(t, a)
	msg := h.ask(t, a)
	h.run(t)
	q1 := h.api.press(alice, testChat, msg, "v:"+approvalID)
	h.api.waitFor("answerCallbackQuery", answeredQuery(q1))
	q2 := h.api.press(alice, testChat, msg, "a:"+approvalID+":deny")
	h.api.waitFor("answerCallbackQuery", answeredQuery(q2))
	// Each update is handled once: one View reply, one answer.
	if n := len(h.api.callsTo("answerCallbackQuery")); n != 2 {
		t.Errorf("%d callback answers, want 2", n)
	}
	if n := len(h.answers.recorded()); n != 1 {
		t.Errorf("Answer called %d times, want 1", n)
	}
}

func TestNewValidates(t *testing.T) {
	ok := Config{Token: testToken, ChatID: testChat}
	tests := []struct {
		name string
		cfg  func(*Config)
		want string
	}{
		{"no token", func(c *Config) { c.Token = "" }, "no bot token"},
		{"blank token", func(c *Config) { c.Token = "  " }, "no bot token"},
		{"malformed token", func(c *Config) { c.Token = testSecret + "/x" }, "bot token is malformed"},
		{"no chat", func(c *Config) { c.ChatID = 0 }, "no chat id"},
		{"server url without scheme", func(c *Config) { c.ServerURL = "api.telegram.org" }, "not an http(s) base URL"},
		{"server url with query", func(c *Config) { c.ServerURL = "https://api.telegram.org/?x=1" }, "not an http(s) base URL"},
		{"poll under a second", func(c *Config) { c.PollTimeout = 500 * time.Millisecond }, "under a second"},
		{"client times out first", func(c *Config) { c.HTTPClient = &http.Client{Timeout: 30 * time.Second} }, "before a long poll"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.cfg(&cfg)
			_, err := New(cfg, &fakeAnswers{}, nil)
			if warden.ErrorCodeOf(err) != warden.EInvalid {
				t.Fatalf("New = %v, want an invalid error", err)
			}
			var e *warden.Error
			if !errors.As(err, &e) || e.Hint == "" {
				t.Errorf("New error %v has no hint", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New error %q does not contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), testSecret) || strings.Contains(e.Hint, testSecret) {
				t.Errorf("New error holds the token: %v", err)
			}
		})
	}
	if _, err := New(ok, nil, nil); err == nil {
		t.Errorf("New without answers succeeded")
	}
	if _, err := New(ok, &fakeAnswers{}, nil); err != nil {
		t.Errorf("New(valid config) = %v", err)
	}
}

func TestName(t *testing.T) {
	h := newHarness(t)
	if got := h.ch.Name(); got != "telegram" {
		t.Errorf("Name() = %q, want telegram", got)
	}
}
