package discord

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/talaria-agent/talaria/internal/gateway"
	"github.com/talaria-agent/talaria/internal/gateway/format"
)

// Discord's JSON error codes the adapter acts on.
const (
	codeUnknownChannel     = 10003
	codeUnknownMessage     = 10008
	codeUnknownWebhook     = 10015
	codeUnknownInteraction = 10062
	codeMissingAccess      = 50001
	codeThreadExists       = 160004
)

// Discord's limits on buttons.
const (
	maxRows      = 5
	maxPerRow    = 5
	maxLabel     = 80
	maxTopicName = 80
)

// updateOf reads a queued event as an update.
func (d *Discord) updateOf(ctx context.Context, ev any) (gateway.Update, error) {
	switch e := ev.(type) {
	case *discordgo.Message:
		chat, err := d.chatOf(ctx, e.ChannelID, e.GuildID, e.ID)
		if err != nil {
			return gateway.Update{}, err
		}
		text := d.text(e.Content)
		if _, thread := splitChat(chat.ID); thread == e.ID {
			d.mu.Lock()
			if len(d.topics) > 1000 {
				clear(d.topics)
			}
			d.topics[e.ID] = topic(text)
			d.mu.Unlock()
		}
		return gateway.Update{ID: e.ID, User: e.Author.ID, MessageID: e.ID, Text: text, Chat: chat, Files: d.filesOf(e)}, nil
	case *discordgo.Interaction:
		// A button on a message answered in the channel (no thread could
		// be started) is in the chat of the message it replies to.
		ref := ""
		if e.Message.MessageReference != nil {
			ref = e.Message.MessageReference.MessageID
		}
		chat, err := d.chatOf(ctx, e.ChannelID, e.GuildID, ref)
		if err != nil {
			return gateway.Update{}, err
		}
		user := ""
		switch {
		case e.Member != nil && e.Member.User != nil:
			user = e.Member.User.ID
		case e.User != nil:
			user = e.User.ID
		}
		return gateway.Update{ID: "press." + e.ID, User: user, MessageID: e.Message.ID, Chat: chat,
			Button: e.MessageComponentData().CustomID, CallbackID: e.ID}, nil
	}
	return gateway.Update{}, nil
}

// chatOf is the chat of a message in channelID: a DM; a thread (with its
// parent channel); or, in a channel, the thread to start from the message
// (its id is the message's), or the channel itself when there is no
// message.
func (d *Discord) chatOf(ctx context.Context, channelID, guildID, messageID string) (gateway.Chat, error) {
	if guildID == "" {
		return gateway.Chat{Platform: "discord", Kind: gateway.ChatDM, ID: channelID}, nil
	}
	c, err := d.channel(ctx, channelID)
	if err != nil {
		return gateway.Chat{}, err
	}
	chat := gateway.Chat{Platform: "discord", Kind: gateway.ChatGroup, ID: ChatID(channelID, messageID)}
	if c.parent != "" {
		chat.ID = ChatID(c.parent, channelID)
	}
	return chat, nil
}

// channel looks a channel up, once.
func (d *Discord) channel(ctx context.Context, id string) (channel, error) {
	d.mu.Lock()
	c, ok := d.channels[id]
	d.mu.Unlock()
	if ok {
		return c, nil
	}
	ch, err := d.s.Channel(id, discordgo.WithContext(ctx))
	if err != nil {
		return channel{}, fmt.Errorf("discord: get channel %s: %w", id, err)
	}
	c = channel{dm: ch.Type == discordgo.ChannelTypeDM || ch.Type == discordgo.ChannelTypeGroupDM}
	if ch.IsThread() {
		c.parent = ch.ParentID
	}
	d.mu.Lock()
	if len(d.channels) > 10000 {
		clear(d.channels)
	}
	d.channels[id] = c
	d.mu.Unlock()
	return c, nil
}

// text is a message's text without the mentions of the bot, so that
// "@bot /stop" is the command /stop.
func (d *Discord) text(t string) string {
	t = strings.ReplaceAll(t, "<@"+d.userID+">", "")
	t = strings.ReplaceAll(t, "<@!"+d.userID+">", "")
	return strings.TrimSpace(t)
}

// topic names a thread after the message it starts from. Pure.
func topic(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if utf8.RuneCountInString(line) > maxTopicName {
		line = string([]rune(line)[:maxTopicName-1]) + "…"
	}
	return cmp.Or(line, "Talaria")
}

// ChatID is the gateway's id of a Discord chat: a DM's channel, or a
// server's channel and the thread in it ("<channel>:<thread>"). Pure.
func ChatID(channel, thread string) string { return gateway.ThreadChat(channel, thread) }

var splitChat = gateway.SplitThreadChat

// Parts renders text in Discord's Markdown, split within a message's
// 2,000 characters.
func (d *Discord) Parts(text string) []string {
	out := format.Split(text, format.DiscordLimit, format.FlavourDiscord)
	if len(out) == 0 {
		return []string{"(no answer)"}
	}
	return out
}

// components are the buttons as action rows: up to 5 rows of 5 (more
// rows than 5 are packed 5 to a row), labels cut to 80 characters. Pure.
func components(rows [][]gateway.Button) []discordgo.MessageComponent {
	if len(rows) > maxRows {
		var flat []gateway.Button
		for _, r := range rows {
			flat = append(flat, r...)
		}
		rows = nil
		for len(flat) > 0 && len(rows) < maxRows {
			n := min(len(flat), maxPerRow)
			rows, flat = append(rows, flat[:n]), flat[n:]
		}
	}
	out := []discordgo.MessageComponent{}
	for _, r := range rows {
		var row discordgo.ActionsRow
		for _, b := range r[:min(len(r), maxPerRow)] {
			label := b.Text
			if utf8.RuneCountInString(label) > maxLabel {
				label = string([]rune(label)[:maxLabel-1]) + "…"
			}
			row.Components = append(row.Components, discordgo.Button{Label: label, Style: discordgo.SecondaryButton, CustomID: b.Data})
		}
		if len(row.Components) > 0 {
			out = append(out, row)
		}
	}
	return out
}

// noMentions lets a message ping nobody, whatever its text says.
func noMentions() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}
}

// SendPart sends one part in m's chat: in its thread, starting the thread
// from the message it is named after when it is not there yet, or, when
// no thread can be started (no permission), in the channel as a reply to
// that message.
func (d *Discord) SendPart(ctx context.Context, m gateway.Outgoing, part string) (string, error) {
	id, err := d.send(ctx, m, part, nil)
	if err != nil {
		return "", d.wrap("create message", err)
	}
	return id, nil
}

// send creates a message in m's chat with content and, when up is set, a
// file: in its thread, starting the thread from the message it is named
// after when it is not there yet, or, when no thread can be started (no
// permission), in the channel as a reply to that message.
func (d *Discord) send(ctx context.Context, m gateway.Outgoing, content string, up *upload) (string, error) {
	channel, thread := splitChat(m.ChatID)
	send := &discordgo.MessageSend{Content: content, Components: components(m.Buttons), AllowedMentions: noMentions()}
	if m.ReplyTo != "" && m.ReplyTo != thread {
		send.Reference = reference(m.ReplyTo, cmp.Or(thread, channel))
	}
	id, err := d.post(ctx, cmp.Or(thread, channel), send, up)
	if thread != "" && hasCode(err, codeUnknownChannel) {
		if err = d.startThread(ctx, channel, thread); err == nil {
			id, err = d.post(ctx, thread, send, up)
		} else {
			d.logger.Debug("discord: no thread, answering in the channel", "channel", channel, "error", d.wrap("start thread", err))
			send.Reference = reference(thread, channel)
			id, err = d.post(ctx, channel, send, up)
		}
	}
	return id, err
}

func reference(messageID, channelID string) *discordgo.MessageReference {
	no := false
	return &discordgo.MessageReference{MessageID: messageID, ChannelID: channelID, FailIfNotExists: &no}
}

// post is Create Message; with up, a multipart one carrying the file
// (afresh on each try).
func (d *Discord) post(ctx context.Context, channelID string, send *discordgo.MessageSend, up *upload) (string, error) {
	var msg *discordgo.Message
	err := d.call(ctx, func() (err error) {
		if up != nil {
			send.Files = []*discordgo.File{up.file()}
		}
		msg, err = d.s.ChannelMessageSendComplex(channelID, send, discordgo.WithContext(ctx))
		return err
	})
	if err != nil {
		return "", err
	}
	return msg.ID, nil
}

// startThread starts the thread of a chat from the message it is named
// after; one started already is there.
func (d *Discord) startThread(ctx context.Context, channelID, messageID string) error {
	d.mu.Lock()
	name := cmp.Or(d.topics[messageID], "Talaria")
	d.mu.Unlock()
	err := d.call(ctx, func() error {
		_, err := d.s.MessageThreadStartComplex(channelID, messageID, &discordgo.ThreadStart{Name: name, AutoArchiveDuration: 1440},
			discordgo.WithContext(ctx))
		return err
	})
	if err != nil && !hasCode(err, codeThreadExists) {
		return err
	}
	d.mu.Lock()
	delete(d.topics, messageID)
	d.mu.Unlock()
	return nil
}

// Edit replaces a message's text and buttons (none: they go). A rate
// limit is waited out once, up to maxEditWait.
func (d *Discord) Edit(ctx context.Context, chatID, messageID, part string, buttons [][]gateway.Button) error {
	channel, thread := splitChat(chatID)
	comps := components(buttons)
	edit := &discordgo.MessageEdit{ID: messageID, Channel: cmp.Or(thread, channel), Content: &part, Components: &comps, AllowedMentions: noMentions()}
	err := d.edit(ctx, edit)
	if thread != "" && hasCode(err, codeUnknownChannel) { // answered in the channel: no thread
		edit.Channel = channel
		err = d.edit(ctx, edit)
	}
	if hasCode(err, codeUnknownMessage) || hasCode(err, codeUnknownChannel) {
		return fmt.Errorf("%w: discord: %s", gateway.ErrNotEditable, redact(err, d.token))
	}
	if err != nil {
		return d.wrap("edit message", err)
	}
	return nil
}

func (d *Discord) edit(ctx context.Context, edit *discordgo.MessageEdit) error {
	return d.call(ctx, func() error {
		_, err := d.s.ChannelMessageEditComplex(edit, discordgo.WithContext(ctx))
		return err
	})
}

// Typing shows the bot as typing (for ten seconds, or until it sends).
func (d *Discord) Typing(ctx context.Context, chatID string) error {
	channel, thread := splitChat(chatID)
	err := d.s.ChannelTyping(cmp.Or(thread, channel), discordgo.WithContext(ctx))
	if thread != "" && hasCode(err, codeUnknownChannel) {
		err = d.s.ChannelTyping(channel, discordgo.WithContext(ctx))
	}
	if err != nil {
		return d.wrap("trigger typing", err)
	}
	return nil
}

// AnswerButton answers a press, after its deferral: when done, the
// notice goes into the message pressed in place of its buttons (they had
// their say); else it goes to the presser alone (an ephemeral
// follow-up), and the buttons stay.
func (d *Discord) AnswerButton(ctx context.Context, u gateway.Update, notice string, done bool) error {
	d.mu.Lock()
	p := d.presses[u.CallbackID]
	delete(d.presses, u.CallbackID)
	d.mu.Unlock()
	if p == nil {
		return nil // a press of an earlier process: its token is gone with it
	}
	select {
	case <-p.deferred:
	case <-ctx.Done():
		return ctx.Err()
	}
	literal := format.Render(format.Literal(notice), format.FlavourDiscord)
	if !done {
		if notice == "" {
			return nil
		}
		_, err := d.s.FollowupMessageCreate(p.it, false, &discordgo.WebhookParams{Content: literal,
			Flags: discordgo.MessageFlagsEphemeral, AllowedMentions: noMentions()}, discordgo.WithContext(ctx))
		if err != nil && !gone(err) {
			return d.wrap("followup", err)
		}
		return nil
	}
	body := p.it.Message.Content
	if notice != "" {
		body = strings.TrimRight(body, "\n") + "\n\n*" + literal + "*"
	}
	if utf8.RuneCountInString(body) > format.DiscordLimit {
		body = "*" + literal + "*"
	}
	none := []discordgo.MessageComponent{}
	_, err := d.s.InteractionResponseEdit(p.it, &discordgo.WebhookEdit{Content: &body, Components: &none, AllowedMentions: noMentions()},
		discordgo.WithContext(ctx))
	if err != nil && !gone(err) {
		return d.wrap("edit original response", err)
	}
	return nil
}

// gone: the interaction's token expired, or its message was deleted.
func gone(err error) bool {
	return hasCode(err, codeUnknownInteraction) || hasCode(err, codeUnknownWebhook) || hasCode(err, codeUnknownMessage)
}

// call makes a REST call, waiting out a rate limit once when it is short.
func (d *Discord) call(ctx context.Context, f func() error) error {
	for waited := false; ; waited = true {
		err := f()
		var rl *discordgo.RateLimitError
		if !errors.As(err, &rl) || waited || rl.RetryAfter > maxEditWait {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(rl.RetryAfter):
		}
	}
}

// hasCode reports whether err is Discord's JSON error code.
func hasCode(err error, code int) bool {
	var rest *discordgo.RESTError
	return errors.As(err, &rest) && rest.Message != nil && rest.Message.Code == code
}

// wrap names the call in an error, without the token.
func (d *Discord) wrap(call string, err error) error {
	var rest *discordgo.RESTError
	if errors.As(err, &rest) && rest.Message != nil {
		return fmt.Errorf("discord: %s: %d %s", call, rest.Message.Code, rest.Message.Message)
	}
	return fmt.Errorf("discord: %s: %s", call, redact(err, d.token))
}
