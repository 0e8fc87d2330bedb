package telegram

import (
	"fmt"
	"strings"

	"github.com/go-telegram/bot/models"

	"github.com/agentwarden/warden"
)

// maxCallbackData is the most bytes Telegram keeps of a button's callback
// data.
const maxCallbackData = 64

// A button's callback data is "a:<approval id>:<answer>" for an answer and
// "v:<approval id>" for View.
const (
	answerPrefix = "a:"
	viewPrefix   = "v:"
)

// press is what a button asks for: an answer to approval ID, or (View) its
// full content.
type press struct {
	ID     string
	View   bool
	Answer warden.Answer // empty for View
}

func (p press) data() string {
	if p.View {
		return viewPrefix + p.ID
	}
	return answerPrefix + p.ID + ":" + string(p.Answer)
}

// parsePress reads a button's callback data. It takes only what keyboard
// writes: a known answer by its own name, and an id without colons.
func parsePress(data string) (press, error) {
	if id, ok := strings.CutPrefix(data, viewPrefix); ok {
		if !validID(id) {
			return press{}, fmt.Errorf("callback data %q: bad approval id", data)
		}
		return press{ID: id, View: true}, nil
	}
	rest, ok := strings.CutPrefix(data, answerPrefix)
	if !ok {
		return press{}, fmt.Errorf("callback data %q: unknown kind", data)
	}
	id, ans, ok := strings.Cut(rest, ":")
	if !ok || !validID(id) {
		return press{}, fmt.Errorf("callback data %q: bad approval id", data)
	}
	switch a := warden.Answer(ans); a {
	case warden.AnswerOnce, warden.AnswerDeny, warden.AnswerSession, warden.AnswerAlways, warden.AnswerHost:
		return press{ID: id, Answer: a}, nil
	}
	return press{}, fmt.Errorf("callback data %q: unknown answer %q", data, ans)
}

// validID reports whether id can stand in callback data.
func validID(id string) bool {
	return id != "" && !strings.ContainsAny(id, ":\x00") && len(answerPrefix+id+":"+string(warden.AnswerSession)) <= maxCallbackData
}

// keyboard is the row of buttons under the message that asks a: an answer
// for each answer a can take, and View. A tier 4 approval takes only once
// or deny; one without a session cannot be approved for it. Only a shell
// command gets "Run on host" (warden.RunsOnHost), on a row of its own.
func keyboard(a *warden.Approval) (models.InlineKeyboardMarkup, error) {
	if !validID(a.ID) {
		return models.InlineKeyboardMarkup{}, warden.Errorf(warden.EInternal,
			"telegram: approval id %q does not fit in a button's %d bytes of data", a.ID, maxCallbackData)
	}
	button := func(text string, p press) models.InlineKeyboardButton {
		return models.InlineKeyboardButton{Text: text, CallbackData: p.data()}
	}
	rows := [][]models.InlineKeyboardButton{{
		button("Approve once", press{ID: a.ID, Answer: warden.AnswerOnce}),
		button("Deny", press{ID: a.ID, Answer: warden.AnswerDeny}),
	}}
	if !a.Decision.ManualOnly {
		var standing []models.InlineKeyboardButton
		if a.Request.Session != "" {
			standing = append(standing, button("Session", press{ID: a.ID, Answer: warden.AnswerSession}))
		}
		standing = append(standing, button("Always", press{ID: a.ID, Answer: warden.AnswerAlways}))
		rows = append(rows, standing)
	}
	if warden.RunsOnHost(&a.Request) {
		rows = append(rows, []models.InlineKeyboardButton{button("Run on host", press{ID: a.ID, Answer: warden.AnswerHost})})
	}
	rows = append(rows, []models.InlineKeyboardButton{button("View", press{ID: a.ID, View: true})})
	return models.InlineKeyboardMarkup{InlineKeyboard: rows}, nil
}

// noKeyboard removes a message's buttons.
var noKeyboard = models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{}}
