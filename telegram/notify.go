package telegram

import (
	"context"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/agentwarden/warden"
)

// noPreview keeps Telegram from fetching links a request holds: a preview
// would have Telegram's servers visit whatever URL an agent wrote.
var noPreview = &models.LinkPreviewOptions{IsDisabled: bot.True()}

// Asked posts a to the chat, with a button for each answer it can take, and
// remembers the message so Ended can edit it. An error means nothing was
// posted; the approval stays answerable from every other channel.
func (c *Channel) Asked(ctx context.Context, a warden.Approval) error {
	kb, err := keyboard(&a)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	m, err := c.bot.SendMessage(ctx, &bot.SendMessageParams{
		ChatID:             c.chatID,
		Text:               fit(askText(&a), maxText),
		LinkPreviewOptions: noPreview,
		ReplyMarkup:        kb,
	})
	if err != nil {
		return warden.Errorf(warden.EUnavailable, "telegram: could not post approval %s", a.ID).Wrap(c.scrub(err))
	}
	c.mu.Lock()
	c.messages[a.ID] = m.ID
	c.mu.Unlock()
	return nil
}

// Ended edits the message that asked a to show how it ended, and removes its
// buttons. It does nothing for an approval this channel did not post (or
// posted before a restart). An error means the message still shows buttons,
// which now only answer that the approval has ended.
func (c *Channel) Ended(ctx context.Context, a warden.Approval) error {
	c.mu.Lock()
	msg, ok := c.messages[a.ID]
	delete(c.messages, a.ID)
	c.mu.Unlock()
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err := c.bot.EditMessageText(ctx, &bot.EditMessageTextParams{
		ChatID:             c.chatID,
		MessageID:          msg,
		Text:               fit(endedText(&a), maxText),
		LinkPreviewOptions: noPreview,
		ReplyMarkup:        noKeyboard,
	})
	if err != nil {
		return warden.Errorf(warden.EUnavailable, "telegram: could not show the end of approval %s", a.ID).Wrap(c.scrub(err))
	}
	return nil
}
