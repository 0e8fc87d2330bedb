package telegram

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/approval"
)

// maxText is the longest message Telegram takes, in UTF-16 code units.
const maxText = 4096

// maxAlert is the longest text of a callback query answer.
const maxAlert = 200

// askText is the message that asks a human to answer a. It is plain text,
// one field per line: each value is kept on its line (see oneLine), so a
// request cannot add lines that pass for warden's own.
func askText(a *warden.Approval) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Approval needed: %s\n", oneLine(approval.Describe(&a.Request)))
	if a.Decision.Reason != "" {
		fmt.Fprintf(&b, "Reason: %s\n", oneLine(a.Decision.Reason))
	}
	fmt.Fprintf(&b, "Tier: %s\n", a.Decision.Tier)
	switch {
	case a.Decision.ManualOnly && warden.RunsOnHost(&a.Request):
		b.WriteString("Manual only: it can be approved once (in the sandbox, or on the host), or denied.\n")
	case a.Decision.ManualOnly:
		b.WriteString("Manual only: it can be approved once, or denied.\n")
	}
	session := a.Request.Session
	if session == "" {
		session = "none"
	}
	fmt.Fprintf(&b, "Session: %s\n", oneLine(session))
	if a.Request.RequestedBy != "" {
		fmt.Fprintf(&b, "Requested by: %s\n", oneLine(a.Request.RequestedBy))
	}
	fmt.Fprintf(&b, "Expires: %s\n", a.ExpiresAt.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "Approval: %s", oneLine(a.ID))
	return b.String()
}

// endedText is the message that asked a, once a has ended: what was asked,
// then how it ended.
func endedText(a *warden.Approval) string {
	var b strings.Builder
	b.WriteString(askText(a))
	fmt.Fprintf(&b, "\n\nOutcome: %s", oneLine(string(a.State)))
	if a.Answer != "" {
		fmt.Fprintf(&b, "\nAnswer: %s", oneLine(string(a.Answer)))
	}
	if a.AnsweredBy != "" {
		fmt.Fprintf(&b, "\nAnswered by: %s", oneLine(a.AnsweredBy))
	}
	if !a.AnsweredAt.IsZero() {
		fmt.Fprintf(&b, "\nAt: %s", a.AnsweredAt.UTC().Format(time.RFC3339))
	}
	if a.Note != "" {
		fmt.Fprintf(&b, "\nNote: %s", oneLine(a.Note))
	}
	return b.String()
}

// oneLine escapes what could break a value out of its line or reorder how
// it reads: control characters (newlines included), line and paragraph
// separators, and bidirectional overrides. They are shown as \n, \u202E….
func oneLine(s string) string { return escapeInvisible(s, false) }

// escapeInvisible is oneLine, except that keepNewlines keeps "\n" as is.
func escapeInvisible(s string, keepNewlines bool) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if !strings.ContainsFunc(s, func(r rune) bool { return invisible(r) && !(keepNewlines && r == '\n') }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case keepNewlines && r == '\n':
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case invisible(r):
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func invisible(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
}

// contentText is the full content of a, for View, cut to fit one message.
// The content is indented JSON, whose strings hold no raw newlines; what
// else could reorder how it reads is escaped.
func contentText(a *warden.Approval) string {
	s := escapeInvisible(approval.Content(a), true)
	if _, cut := truncate(s, maxText); !cut {
		return s
	}
	note := fmt.Sprintf("\n… truncated: the request is %d characters, more than one Telegram message holds.", utf8.RuneCountInString(s))
	head, _ := truncate(s, maxText-utf16Len(note))
	return head + note
}

// answeredText is what the presser is told once their answer is recorded.
func answeredText(a *warden.Approval) string {
	s := fmt.Sprintf("Approval %s is %s.", a.ID, a.State)
	if a.State == warden.ApprovalApproved && a.Answer == warden.AnswerHost {
		s += " It runs once on the host, outside the sandbox; this is recorded as an escalation."
	}
	if a.Note != "" {
		s += " " + a.Note
	}
	return s
}

// truncate returns the longest prefix of s that is at most max UTF-16 code
// units (what Telegram counts) long and is valid UTF-8, and whether it cut
// anything. Invalid UTF-8 in s is replaced first.
func truncate(s string, max int) (string, bool) {
	s = strings.ToValidUTF8(s, "\uFFFD")
	n := 0
	for i, r := range s {
		w := 1
		if r > 0xFFFF {
			w = 2
		}
		if n+w > max {
			return s[:i], true
		}
		n += w
	}
	return s, false
}

// utf16Len is the length of s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}

// fit cuts s to a whole message, marking the cut.
func fit(s string, max int) string {
	const mark = "…"
	if t, cut := truncate(s, max); cut {
		t, _ = truncate(s, max-utf16Len(mark))
		return t + mark
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
