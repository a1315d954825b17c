// Package telegram is the gateway's Telegram adapter, on the Bot API
// client github.com/go-telegram-bot-api/telegram-bot-api/v5: long polling
// with getUpdates, whose offset acknowledges what the gateway took.
package telegram

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/talaria-agent/talaria/internal/gateway"
)

// DefaultAPIURL is the public Bot API.
const DefaultAPIURL = "https://api.telegram.org"

// pollTimeout is how long one getUpdates call waits for an update.
const pollTimeout = 25

// Telegram is a bot on the Bot API.
type Telegram struct {
	bot    *tgbotapi.BotAPI
	token  string
	apiURL string
	// client downloads files, its requests bound to the gateway's ctx.
	client *http.Client

	mu     sync.Mutex
	offset int // the next update wanted: every one below is taken
}

// ctxClient makes the client library's requests carry a context, so that
// a long poll ends when the gateway stops.
type ctxClient struct {
	ctx context.Context
	c   *http.Client
}

func (c ctxClient) Do(r *http.Request) (*http.Response, error) { return c.c.Do(r.WithContext(c.ctx)) }

// New connects to the Bot API at apiURL (DefaultAPIURL when empty) with
// token, checking it (getMe). ctx bounds every request the bot makes.
func New(ctx context.Context, apiURL, token string) (*Telegram, error) {
	apiURL = cmp.Or(apiURL, DefaultAPIURL)
	endpoint := strings.TrimRight(apiURL, "/") + "/bot%s/%s"
	hc := &http.Client{}
	bot, err := tgbotapi.NewBotAPIWithClient(token, endpoint, ctxClient{ctx: ctx, c: hc})
	var apiErr *tgbotapi.Error
	switch {
	case errors.As(err, &apiErr) && (apiErr.Code == http.StatusUnauthorized || apiErr.Code == http.StatusNotFound):
		return nil, fmt.Errorf("%w: %s says %q (check gateway.telegram.token / TELEGRAM_BOT_TOKEN)", ErrRefused, apiURL, apiErr.Message)
	case err != nil:
		return nil, fmt.Errorf("telegram: connect to %s: %s", apiURL, redact(err, token))
	}
	return &Telegram{bot: bot, token: token, apiURL: strings.TrimRight(apiURL, "/"), client: hc}, nil
}

// ErrRefused means the Bot API refused the token: retrying will not help.
var ErrRefused = errors.New("telegram: the Bot API refused the bot's token")

// redact keeps the token out of an error (the client library's URLs hold it).
func redact(err error, token string) string {
	if err == nil {
		return ""
	}
	return strings.ReplaceAll(err.Error(), token, "<token>")
}

func (t *Telegram) Name() string    { return "telegram" }
func (t *Telegram) Account() string { return strconv.FormatInt(t.bot.Self.ID, 10) }
func (t *Telegram) BotName() string { return t.bot.Self.UserName }

// Poll waits for updates after the acknowledged ones.
func (t *Telegram) Poll(ctx context.Context) ([]gateway.Update, error) {
	t.mu.Lock()
	offset := t.offset
	t.mu.Unlock()
	ups, err := t.bot.GetUpdates(tgbotapi.UpdateConfig{Offset: offset, Timeout: pollTimeout, Limit: 100,
		AllowedUpdates: []string{"message", "callback_query"}})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errors.New("telegram: getUpdates: " + redact(err, t.token))
	}
	out := make([]gateway.Update, 0, len(ups))
	for _, u := range ups {
		out = append(out, t.read(u))
	}
	return out, nil
}

// read is updateOf, except that an update whose reading panics (a fault
// of this adapter) is logged and given without chat, which the gateway
// acknowledges and leaves: otherwise it would fail every poll, and no
// chat would get past it.
func (t *Telegram) read(u tgbotapi.Update) (out gateway.Update) {
	defer func() {
		if v := recover(); v != nil {
			slog.Error("telegram: an update could not be read; it is left", "update", u.UpdateID, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			out = gateway.Update{ID: strconv.Itoa(u.UpdateID)}
		}
	}()
	return updateOf(u, t.fetcher)
}

// updateOf reads a Bot API update; its files are fetched with fetch.
// Pure.
func updateOf(u tgbotapi.Update, fetch func(fileID string, size int) func(context.Context, int64) ([]byte, error)) gateway.Update {
	out := gateway.Update{ID: strconv.Itoa(u.UpdateID)}
	msg := u.Message
	if cb := u.CallbackQuery; cb != nil {
		out.Button, out.CallbackID = cb.Data, cb.ID
		if cb.From != nil {
			out.User = strconv.FormatInt(cb.From.ID, 10)
		}
		msg = cb.Message
	} else if msg != nil && msg.From != nil {
		out.User = strconv.FormatInt(msg.From.ID, 10)
	}
	if msg == nil || msg.Chat == nil {
		return out
	}
	out.Chat = gateway.Chat{Platform: "telegram", Kind: gateway.ChatDM, ID: strconv.FormatInt(msg.Chat.ID, 10)}
	if !msg.Chat.IsPrivate() {
		out.Chat.Kind = gateway.ChatGroup
	}
	out.MessageID = strconv.Itoa(msg.MessageID)
	if u.CallbackQuery == nil {
		out.Text = cmp.Or(msg.Text, msg.Caption)
		out.Files = filesOf(msg, fetch)
	}
	return out
}

// Ack takes every update up to u: the next getUpdates carries its id + 1.
func (t *Telegram) Ack(_ context.Context, u gateway.Update) error {
	id, err := strconv.Atoi(u.ID)
	if err != nil {
		return fmt.Errorf("telegram: update id %q", u.ID)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if id+1 > t.offset {
		t.offset = id + 1
	}
	return nil
}

// Parts renders text as Telegram shows it and splits it to its limit.
func (t *Telegram) Parts(text string) []string { return parts(text) }

// SendPart sends one part, threaded to the message it answers.
func (t *Telegram) SendPart(_ context.Context, m gateway.Outgoing, part string) (string, error) {
	chat, err := strconv.ParseInt(m.ChatID, 10, 64)
	if err != nil {
		return "", fmt.Errorf("telegram: chat id %q", m.ChatID)
	}
	msg := tgbotapi.NewMessage(chat, part)
	msg.ParseMode = parseMode
	if m.ReplyTo != "" {
		msg.ReplyToMessageID, _ = strconv.Atoi(m.ReplyTo)
		msg.AllowSendingWithoutReply = true
	}
	if len(m.Buttons) > 0 {
		msg.ReplyMarkup = keyboard(m.Buttons)
	}
	sent, err := t.bot.Send(msg)
	if err != nil {
		return "", errors.New("telegram: sendMessage: " + redact(err, t.token))
	}
	return strconv.Itoa(sent.MessageID), nil
}

// maxEditWait is the longest a Bot API's "retry after" is waited for an
// edit; a longer one fails the edit.
const maxEditWait = 5 * time.Second

// Edit replaces a message's text (and buttons, when there are some). An
// edit to the same text succeeds (the Bot API says "message is not
// modified"); a 429 is waited out once, up to maxEditWait.
func (t *Telegram) Edit(ctx context.Context, chatID, messageID, part string, buttons [][]gateway.Button) error {
	chat, err := strconv.ParseInt(chatID, 10, 64)
	if err != nil {
		return fmt.Errorf("telegram: chat id %q", chatID)
	}
	id, err := strconv.Atoi(messageID)
	if err != nil {
		return fmt.Errorf("telegram: message id %q", messageID)
	}
	edit := tgbotapi.NewEditMessageText(chat, id, part)
	edit.ParseMode = parseMode
	if len(buttons) > 0 {
		kb := keyboard(buttons)
		edit.ReplyMarkup = &kb
	}
	for waited := false; ; waited = true {
		_, err := t.bot.Request(edit)
		var apiErr *tgbotapi.Error
		if err == nil || errors.As(err, &apiErr) && strings.Contains(apiErr.Message, "message is not modified") {
			return nil
		}
		if apiErr != nil {
			retry := time.Duration(apiErr.RetryAfter) * time.Second
			switch {
			case apiErr.Code == http.StatusTooManyRequests && !waited && retry > 0 && retry <= maxEditWait:
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(retry):
				}
				continue
			case strings.Contains(apiErr.Message, "message to edit not found") || strings.Contains(apiErr.Message, "message can't be edited"):
				return fmt.Errorf("%w: telegram: %s", gateway.ErrNotEditable, apiErr.Message)
			}
		}
		return errors.New("telegram: editMessageText: " + redact(err, t.token))
	}
}

func keyboard(rows [][]gateway.Button) tgbotapi.InlineKeyboardMarkup {
	var kb [][]tgbotapi.InlineKeyboardButton
	for _, row := range rows {
		var r []tgbotapi.InlineKeyboardButton
		for _, b := range row {
			r = append(r, tgbotapi.NewInlineKeyboardButtonData(b.Text, b.Data))
		}
		kb = append(kb, r)
	}
	return tgbotapi.NewInlineKeyboardMarkup(kb...)
}

// Typing shows "typing…" in the chat.
func (t *Telegram) Typing(_ context.Context, chatID string) error {
	chat, err := strconv.ParseInt(chatID, 10, 64)
	if err != nil {
		return fmt.Errorf("telegram: chat id %q", chatID)
	}
	if _, err := t.bot.Request(tgbotapi.NewChatAction(chat, tgbotapi.ChatTyping)); err != nil {
		return errors.New("telegram: sendChatAction: " + redact(err, t.token))
	}
	return nil
}

// AnswerButton answers a press (answerCallbackQuery: the notice shows
// to the presser, and the button stops spinning) and, when done, takes the
// buttons off the message pressed (editMessageReplyMarkup with none).
func (t *Telegram) AnswerButton(_ context.Context, press gateway.Update, notice string, done bool) error {
	if _, err := t.bot.Request(tgbotapi.NewCallback(press.CallbackID, notice)); err != nil {
		return errors.New("telegram: answerCallbackQuery: " + redact(err, t.token))
	}
	if !done {
		return nil
	}
	chat, err := strconv.ParseInt(press.Chat.ID, 10, 64)
	if err != nil {
		return fmt.Errorf("telegram: chat id %q", press.Chat.ID)
	}
	id, err := strconv.Atoi(press.MessageID)
	if err != nil {
		return fmt.Errorf("telegram: message id %q", press.MessageID)
	}
	none := tgbotapi.InlineKeyboardMarkup{InlineKeyboard: [][]tgbotapi.InlineKeyboardButton{}}
	_, err = t.bot.Request(tgbotapi.NewEditMessageReplyMarkup(chat, id, none))
	var apiErr *tgbotapi.Error
	if err == nil || errors.As(err, &apiErr) && (strings.Contains(apiErr.Message, "message is not modified") ||
		strings.Contains(apiErr.Message, "message to edit not found") || strings.Contains(apiErr.Message, "message can't be edited")) {
		return nil // without buttons already, or gone
	}
	return errors.New("telegram: editMessageReplyMarkup: " + redact(err, t.token))
}
