package telegram

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/approval"
)

// update handles one update from the long poll. Only button presses matter;
// the poll asks for nothing else.
func (c *Channel) update(ctx context.Context, _ *bot.Bot, u *models.Update) {
	if u.CallbackQuery != nil {
		c.press(ctx, u.CallbackQuery)
	}
}

// press handles one button press: it is refused unless an allowed user made
// it in the configured chat, then shows the approval's content or records
// the answer.
func (c *Channel) press(ctx context.Context, q *models.CallbackQuery) {
	chat, msg, ok := pressedMessage(q)
	if !c.allowed[q.From.ID] || !ok || chat != c.chatID {
		c.log.Warn("telegram: refused a button press", "user", q.From.ID, "chat", chat, "allowed_user", c.allowed[q.From.ID], "configured_chat", ok && chat == c.chatID)
		c.reply(ctx, q, "You are not allowed to answer approvals here.")
		return
	}
	p, err := parsePress(q.Data)
	if err != nil {
		c.log.Warn("telegram: ignored a button press", "user", q.From.ID, "error", err)
		c.reply(ctx, q, "This button is not one of warden's.")
		return
	}
	if p.View {
		c.view(ctx, q, p.ID, msg)
		return
	}
	who := approval.Who{Name: strconv.FormatInt(q.From.ID, 10), Channel: "telegram"}
	ended, err := c.answers.Answer(ctx, p.ID, p.Answer, who)
	if err != nil {
		text := c.userText(err, "answer approval "+p.ID)
		c.reply(ctx, q, text)
		c.send(ctx, msg, fmt.Sprintf("%s could not answer %s to approval %s: %s", who, p.Answer, p.ID, text))
		return
	}
	c.log.Info("telegram: approval answered", "approval", p.ID, "answer", p.Answer, "by", who.String(), "state", ended.State)
	// The queue tells Ended, which edits the message; only the presser is
	// answered here.
	c.reply(ctx, q, answeredText(&ended))
}

// view sends the full content of approval id, replying to msg.
func (c *Channel) view(ctx context.Context, q *models.CallbackQuery, id string, msg int) {
	a, err := c.answers.Get(ctx, id)
	if err != nil {
		c.reply(ctx, q, c.userText(err, "look up approval "+id))
		return
	}
	if c.send(ctx, msg, contentText(&a)) {
		c.reply(ctx, q, "The full request is below.")
	} else {
		c.reply(ctx, q, "Telegram did not take the full request; see warden's log.")
	}
}

// pressedMessage returns the chat and message of the button pressed; ok is
// false for a button on a message Telegram did not say (an inline message).
func pressedMessage(q *models.CallbackQuery) (chat int64, msg int, ok bool) {
	switch m := q.Message; {
	case m.Message != nil:
		return m.Message.Chat.ID, m.Message.ID, true
	case m.InaccessibleMessage != nil:
		return m.InaccessibleMessage.Chat.ID, m.InaccessibleMessage.MessageID, true
	}
	return 0, 0, false
}

// userText is what the presser is told of err: the message and hint of a
// *warden.Error, which are safe to show, and otherwise only that it failed
// (the error itself goes to the log).
func (c *Channel) userText(err error, op string) string {
	var e *warden.Error
	if errors.As(err, &e) {
		return warden.UserMessage(e)
	}
	c.log.Error("telegram: could not "+op, "error", c.scrub(err))
	return "warden could not " + op + "; see its log."
}

// reply answers the callback query q with text, shown to the presser alone.
// Telegram requires an answer to every query, or the button spins.
func (c *Channel) reply(ctx context.Context, q *models.CallbackQuery, text string) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if _, err := c.bot.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{
		CallbackQueryID: q.ID,
		Text:            fit(text, maxAlert),
		ShowAlert:       true,
	}); err != nil {
		c.log.Warn("telegram: could not answer a button press", "user", q.From.ID, "error", c.scrub(err))
	}
}

// send posts text to the chat as a reply to message msg, and reports
// whether Telegram took it.
func (c *Channel) send(ctx context.Context, msg int, text string) bool {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err := c.bot.SendMessage(ctx, &bot.SendMessageParams{
		ChatID:             c.chatID,
		Text:               fit(text, maxText),
		LinkPreviewOptions: noPreview,
		ReplyParameters:    &models.ReplyParameters{MessageID: msg, AllowSendingWithoutReply: true},
	})
	if err != nil {
		c.log.Warn("telegram: could not send a message", "error", c.scrub(err))
		return false
	}
	return true
}
