package telegram

import "github.com/talaria-agent/talaria/internal/gateway/format"

// parseMode is how the bot's messages are parsed.
const parseMode = "HTML"

// parts renders Markdown for Telegram's HTML parse mode, split within the
// Bot API's limit, each part valid on its own.
func parts(text string) []string {
	out := format.Split(text, format.TelegramLimit, format.FlavourTelegramHTML)
	if len(out) == 0 {
		return []string{"(no answer)"}
	}
	return out
}
