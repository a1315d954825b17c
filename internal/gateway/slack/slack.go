// Package slack is the gateway's Slack adapter, on github.com/slack-go/slack
// and its socketmode package: the app receives its events over a Socket
// Mode WebSocket (no public URL), and each envelope is acknowledged only
// once the gateway took what it carries. Slack delivers an envelope left
// unacknowledged again; the update's id is the event's, which stays the
// same across those deliveries, so the gateway takes it once.
package slack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/talaria-agent/talaria/internal/gateway"
	"github.com/talaria-agent/talaria/internal/gateway/format"
)

// DefaultAPIURL is Slack's public Web API.
const DefaultAPIURL = "https://slack.com/api/"

// pollWait is how long one Poll waits for an update.
const pollWait = 25 * time.Second

// maxEditWait is the longest a rate limit's Retry-After is waited for an
// edit; a longer one fails the edit.
const maxEditWait = 5 * time.Second

// ErrRefused means Slack refused a token: retrying will not help.
var ErrRefused = errors.New("slack: Slack refused the app's token")

// Options configure the Slack app.
type Options struct {
	// APIURL is the Web API (DefaultAPIURL when empty).
	APIURL string
	// BotToken (xoxb-) calls the Web API; AppToken (xapp-, with
	// connections:write) opens the Socket Mode connection.
	BotToken, AppToken string
	Logger             *slog.Logger
}

// Slack is a Slack app's bot user, connected over Socket Mode.
type Slack struct {
	api    *slack.Client
	sm     *socketmode.Client
	ctx    context.Context
	tokens []string
	logger *slog.Logger
	// apiURL is the Web API's URL; files are fetched with botToken
	// through files, a client that follows no redirect.
	apiURL   *url.URL
	botToken string
	files    *http.Client

	teamID, userID, botID, name string

	start sync.Once

	mu      sync.Mutex
	wake    chan struct{}
	pending []*entry          // updates not acknowledged yet, in the order they came
	byID    map[string]*entry // the same, by update id
	acked   gateway.Seen      // update ids acknowledged lately
	runErr  error             // why the Socket Mode connection stopped, if it did
	presses map[string]press  // button presses not answered yet, by callback id
}

// entry is one update and the envelopes that carried it (a delivery
// Slack retried is another envelope of the same update).
type entry struct {
	u    gateway.Update
	reqs []socketmode.Request
}

// press is what answering a button press edits: the message it was on.
type press struct {
	channel, ts, text string
	at                time.Time
}

// New connects to Slack with the bot token, checking it (auth.test). The
// Socket Mode connection opens on the first Poll (only the gateway
// replica holding the app's lease polls) and lives as long as ctx.
func New(ctx context.Context, o Options) (*Slack, error) {
	apiURL := cmp.Or(o.APIURL, DefaultAPIURL)
	if !strings.HasSuffix(apiURL, "/") {
		apiURL += "/"
	}
	parsed, err := url.Parse(apiURL)
	if err != nil || parsed.Host == "" {
		return nil, fmt.Errorf("slack: the Web API URL %q is not a URL", apiURL)
	}
	tokens := []string{o.BotToken, o.AppToken}
	if !strings.HasPrefix(o.AppToken, "xapp-") {
		return nil, fmt.Errorf("%w: the app-level token does not start with xapp- (check gateway.slack.app_token / SLACK_APP_TOKEN)", ErrRefused)
	}
	logger := cmp.Or(o.Logger, slog.Default())
	api := slack.New(o.BotToken, slack.OptionAPIURL(apiURL), slack.OptionAppLevelToken(o.AppToken),
		slack.OptionHTTPClient(&http.Client{Timeout: 30 * time.Second}))
	auth, err := api.AuthTestContext(ctx)
	var slackErr slack.SlackErrorResponse
	switch {
	case errors.As(err, &slackErr):
		return nil, fmt.Errorf("%w: %s says %q (check gateway.slack.bot_token / SLACK_BOT_TOKEN)", ErrRefused, apiURL, slackErr.Err)
	case err != nil:
		return nil, fmt.Errorf("slack: connect to %s: %s", apiURL, redact(err, tokens))
	}
	s := &Slack{api: api, ctx: ctx, tokens: tokens, logger: logger, apiURL: parsed, botToken: o.BotToken, files: fileClient(),
		teamID: auth.TeamID, userID: auth.UserID, botID: auth.BotID, name: auth.User,
		wake: make(chan struct{}), byID: map[string]*entry{}, presses: map[string]press{}}
	s.sm = socketmode.New(api, socketmode.OptionLog(discard{}))
	return s, nil
}

// redact keeps the tokens out of an error.
func redact(err error, tokens []string) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	for _, t := range tokens {
		if t != "" {
			msg = strings.ReplaceAll(msg, t, "<token>")
		}
	}
	return msg
}

func (s *Slack) Name() string { return "slack" }

// Account is the workspace and the bot user: "T0123.U0456".
func (s *Slack) Account() string { return s.teamID + "." + s.userID }
func (s *Slack) BotName() string { return s.name }

// run keeps the Socket Mode connection open (socketmode reconnects by
// itself; it returns only when Slack refuses the app token, or ctx ends)
// and reads its events.
func (s *Slack) run() {
	go s.read()
	go func() {
		for s.ctx.Err() == nil {
			err := s.sm.RunContext(s.ctx)
			if s.ctx.Err() != nil {
				return
			}
			s.mu.Lock()
			var se slack.SlackErrorResponse
			if errors.As(err, &se) || strings.Contains(err.Error(), "invalid_auth") { // RunContext never returns nil
				s.runErr = fmt.Errorf("%w: apps.connections.open says %q (check gateway.slack.app_token / SLACK_APP_TOKEN)", ErrRefused, redact(err, s.tokens))
			} else {
				s.runErr = fmt.Errorf("slack: Socket Mode: %s", redact(err, s.tokens))
			}
			s.notifyLocked()
			s.mu.Unlock()
			select {
			case <-s.ctx.Done():
			case <-time.After(30 * time.Second):
			}
		}
	}()
}

// read takes the Socket Mode client's events: those that carry a message
// or a press become updates; every other envelope is acknowledged at once.
func (s *Slack) read() {
	for {
		var ev socketmode.Event
		select {
		case <-s.ctx.Done():
			return
		case ev = <-s.sm.Events:
		}
		switch ev.Type {
		case socketmode.EventTypeConnected:
			s.mu.Lock()
			s.runErr = nil
			s.mu.Unlock()
			continue
		case socketmode.EventTypeInvalidAuth:
			s.mu.Lock()
			s.runErr = fmt.Errorf("%w: apps.connections.open refused the app-level token (check gateway.slack.app_token / SLACK_APP_TOKEN)", ErrRefused)
			s.notifyLocked()
			s.mu.Unlock()
			continue
		case socketmode.EventTypeConnectionError:
			if e, ok := ev.Data.(*slack.ConnectionErrorEvent); ok {
				s.logger.Debug("slack: Socket Mode connection failed, retrying", "error", redact(e.ErrorObj, s.tokens))
			}
			continue
		}
		if ev.Request == nil || ev.Request.EnvelopeID == "" {
			continue // hello, connecting...: nothing to acknowledge
		}
		u, ok := s.readSafely(ev)
		if !ok {
			s.ackNow(*ev.Request)
			continue
		}
		s.add(u, *ev.Request)
	}
}

// readSafely is updateOf, except that an event whose reading panics (a
// fault of this adapter) is logged and read as nothing, and so
// acknowledged: otherwise it would bring the process down, and come again
// after the restart.
func (s *Slack) readSafely(ev socketmode.Event) (u gateway.Update, ok bool) {
	defer func() {
		if v := recover(); v != nil {
			s.logger.Error("slack: an event could not be read; it is left", "type", ev.Type, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			u, ok = gateway.Update{}, false
		}
	}()
	return s.updateOf(ev)
}

// add queues an update, or adds the envelope to the one already queued
// under its id; one acknowledged already is acknowledged again at once.
func (s *Slack) add(u gateway.Update, req socketmode.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.acked.Has(u.ID) {
		go s.ackNow(req)
		return
	}
	if e := s.byID[u.ID]; e != nil {
		e.reqs = append(e.reqs, req)
		return
	}
	e := &entry{u: u, reqs: []socketmode.Request{req}}
	s.pending = append(s.pending, e)
	s.byID[u.ID] = e
	s.notifyLocked()
}

func (s *Slack) notifyLocked() {
	close(s.wake)
	s.wake = make(chan struct{})
}

func (s *Slack) ackNow(req socketmode.Request) {
	ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
	defer cancel()
	if err := s.sm.AckCtx(ctx, req.EnvelopeID, nil); err != nil && s.ctx.Err() == nil {
		s.logger.Debug("slack: acknowledge an envelope", "error", err)
	}
}

// updateOf reads a Socket Mode event: a DM to the bot (with files, or
// not), a mention of it in a channel, or a press on one of its buttons.
// ok is false for anything else (the bot's own messages, edits, joins and
// other subtypes).
func (s *Slack) updateOf(ev socketmode.Event) (gateway.Update, bool) {
	switch ev.Type {
	case socketmode.EventTypeEventsAPI:
		outer, ok := ev.Data.(slackevents.EventsAPIEvent)
		if !ok || outer.Type != slackevents.CallbackEvent {
			return gateway.Update{}, false
		}
		cb, _ := outer.Data.(*slackevents.EventsAPICallbackEvent)
		id := ev.Request.EnvelopeID
		if cb != nil && cb.EventID != "" {
			id = cb.EventID
		}
		switch in := outer.InnerEvent.Data.(type) {
		case *slackevents.MessageEvent:
			if in.ChannelType != "im" || (in.SubType != "" && in.SubType != "file_share") || in.BotID != "" || in.User == "" || in.User == s.userID {
				return gateway.Update{}, false
			}
			// A DM's message is answered in the DM, or in its thread.
			return gateway.Update{ID: id, User: in.User, Text: s.text(in.Text), Files: s.gatewayFiles(ev.Request.Payload),
				Chat: gateway.Chat{Platform: "slack", Kind: gateway.ChatDM, ID: ChatID(in.Channel, in.ThreadTimeStamp)}}, true
		case *slackevents.AppMentionEvent:
			// A DM comes as a message.im event too: it is taken from there.
			if in.BotID != "" || in.User == "" || in.User == s.userID || strings.HasPrefix(in.Channel, "D") {
				return gateway.Update{}, false
			}
			root := cmp.Or(in.ThreadTimeStamp, in.TimeStamp)
			return gateway.Update{ID: id, User: in.User, Text: s.text(in.Text), Files: s.gatewayFiles(ev.Request.Payload),
				Chat: gateway.Chat{Platform: "slack", Kind: gateway.ChatGroup, ID: ChatID(in.Channel, root)}}, true
		}
	case socketmode.EventTypeInteractive:
		cb, ok := ev.Data.(slack.InteractionCallback)
		if !ok || cb.Type != slack.InteractionTypeBlockActions || len(cb.ActionCallback.BlockActions) == 0 {
			return gateway.Update{}, false
		}
		act := cb.ActionCallback.BlockActions[0]
		channel := cmp.Or(cb.Channel.ID, cb.Container.ChannelID)
		ts := cmp.Or(cb.Container.MessageTs, cb.Message.Timestamp)
		if channel == "" || cb.User.ID == "" {
			return gateway.Update{}, false
		}
		kind := gateway.ChatGroup
		if strings.HasPrefix(channel, "D") {
			kind = gateway.ChatDM
		}
		thread := cmp.Or(cb.Container.ThreadTs, cb.Message.ThreadTimestamp)
		// A press is the same press however often Slack delivers it.
		id := "press." + cb.User.ID + "." + act.ActionTs
		if act.ActionTs == "" {
			id = "press." + ev.Request.EnvelopeID
		}
		s.mu.Lock()
		s.presses[id] = press{channel: channel, ts: ts, text: cb.Message.Text, at: time.Now()}
		for k, p := range s.presses {
			if time.Since(p.at) > time.Hour {
				delete(s.presses, k)
			}
		}
		s.mu.Unlock()
		return gateway.Update{ID: id, User: cb.User.ID, MessageID: ts, Button: act.Value, CallbackID: id,
			Chat: gateway.Chat{Platform: "slack", Kind: kind, ID: ChatID(channel, thread)}}, true
	}
	return gateway.Update{}, false
}

// text is a message's text without the mentions of the bot, so that
// "@bot /stop" is the command /stop.
func (s *Slack) text(t string) string {
	t = strings.ReplaceAll(t, "<@"+s.userID+">", "")
	return strings.TrimSpace(t)
}

// Poll waits for updates not acknowledged yet: those that came since the
// last poll, and those of earlier polls the gateway did not take.
func (s *Slack) Poll(ctx context.Context) ([]gateway.Update, error) {
	s.start.Do(s.run)
	deadline := time.After(pollWait)
	for {
		s.mu.Lock()
		err, wake := s.runErr, s.wake
		var out []gateway.Update
		for _, e := range s.pending {
			if len(out) < 100 {
				out = append(out, e.u)
			}
		}
		s.mu.Unlock()
		if len(out) > 0 {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.ctx.Done():
			return nil, s.ctx.Err()
		case <-deadline:
			return nil, nil
		case <-wake:
		}
	}
}

// AcksOneByOne: each envelope is acknowledged alone (gateway.AcksOneByOne).
func (s *Slack) AcksOneByOne() {}

var _ gateway.AcksOneByOne = (*Slack)(nil)

// Ack acknowledges every envelope that carried u: Slack will not deliver
// it again.
func (s *Slack) Ack(ctx context.Context, u gateway.Update) error {
	s.mu.Lock()
	e := s.byID[u.ID]
	if e == nil {
		s.mu.Unlock()
		return nil
	}
	reqs := append([]socketmode.Request(nil), e.reqs...)
	s.mu.Unlock()
	for _, req := range reqs {
		if err := s.sm.AckCtx(ctx, req.EnvelopeID, nil); err != nil {
			return fmt.Errorf("slack: acknowledge %s: %w", u.ID, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byID, u.ID)
	for i, p := range s.pending {
		if p == e {
			s.pending = append(s.pending[:i:i], s.pending[i+1:]...)
			break
		}
	}
	s.acked.Add(u.ID)
	for _, req := range e.reqs[len(reqs):] { // delivered again meanwhile
		go s.ackNow(req)
	}
	return nil
}

// ChatID is the gateway's id of a Slack conversation: the channel, and
// the thread in it when there is one ("C0123:1700000000.000100"). Pure.
func ChatID(channel, thread string) string { return gateway.ThreadChat(channel, thread) }

var splitChat = gateway.SplitThreadChat

// Parts renders text as Slack mrkdwn, split within a section block's
// 3,000 characters.
func (s *Slack) Parts(text string) []string {
	out := format.Split(text, format.SlackLimit, format.FlavourSlack)
	if len(out) == 0 {
		return []string{"(no answer)"}
	}
	return out
}

// blocks are a part's Block Kit blocks when it has buttons: the text in a
// section, each row of buttons an actions block. A part without buttons
// is sent as text alone.
func blocks(part string, rows [][]gateway.Button) []slack.Block {
	if len(rows) == 0 {
		return nil
	}
	out := []slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, part, false, false), nil, nil)}
	for i, row := range rows {
		var els []slack.BlockElement
		for _, b := range row {
			els = append(els, slack.NewButtonBlockElement(b.Data, b.Data, slack.NewTextBlockObject(slack.PlainTextType, b.Text, false, false)))
		}
		out = append(out, slack.NewActionBlock(fmt.Sprintf("talaria-buttons-%d", i), els...))
	}
	return out
}

// SendPart posts one part (chat.postMessage) in m's chat, in its thread
// when it has one (ChatID), and returns the message's ts. m.ReplyTo is
// not used: in Slack a reply is a message in the thread.
func (s *Slack) SendPart(ctx context.Context, m gateway.Outgoing, part string) (string, error) {
	channel, thread := splitChat(m.ChatID)
	opts := []slack.MsgOption{slack.MsgOptionText(part, false), slack.MsgOptionDisableLinkUnfurl()}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	if b := blocks(part, m.Buttons); b != nil {
		opts = append(opts, slack.MsgOptionBlocks(b...))
	}
	_, ts, err := s.api.PostMessageContext(ctx, channel, opts...)
	if err != nil {
		return "", errors.New("slack: chat.postMessage: " + redact(err, s.tokens))
	}
	return ts, nil
}

// Edit replaces a message's text, and its buttons when there are some
// (chat.update; Slack takes an edit to the same text as any other). A
// rate limit is waited out once, up to maxEditWait.
func (s *Slack) Edit(ctx context.Context, chatID, messageID, part string, buttons [][]gateway.Button) error {
	opts := []slack.MsgOption{slack.MsgOptionText(part, false)}
	if b := blocks(part, buttons); b != nil {
		opts = append(opts, slack.MsgOptionBlocks(b...))
	}
	channel, _ := splitChat(chatID)
	return s.update(ctx, channel, messageID, opts)
}

func (s *Slack) update(ctx context.Context, chatID, messageID string, opts []slack.MsgOption) error {
	for waited := false; ; waited = true {
		_, _, _, err := s.api.UpdateMessageContext(ctx, chatID, messageID, opts...)
		if err == nil {
			return nil
		}
		var rl *slack.RateLimitedError
		var se slack.SlackErrorResponse
		switch {
		case errors.As(err, &rl) && !waited && rl.RetryAfter <= maxEditWait:
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(rl.RetryAfter):
			}
			continue
		case errors.As(err, &se) && (se.Err == "message_not_found" || se.Err == "cant_update_message" || se.Err == "edit_window_closed" || se.Err == "channel_not_found"):
			return fmt.Errorf("%w: slack: %s", gateway.ErrNotEditable, se.Err)
		}
		return errors.New("slack: chat.update: " + redact(err, s.tokens))
	}
}

// Typing does nothing: a bot has no typing indicator over the Web API
// (only the legacy RTM API had one).
func (s *Slack) Typing(context.Context, string) error { return nil }

// AnswerButton answers a press: the envelope's acknowledgement (Ack) is
// what Slack waits for, and a block_actions press shows no notice. When
// done, the notice goes into the message pressed, in place of its buttons
// (they had their say); else it goes to the presser alone
// (chat.postEphemeral), and the buttons stay.
func (s *Slack) AnswerButton(ctx context.Context, u gateway.Update, notice string, done bool) error {
	s.mu.Lock()
	p, ok := s.presses[u.CallbackID]
	delete(s.presses, u.CallbackID)
	s.mu.Unlock()
	if !done {
		return s.tell(ctx, u, notice)
	}
	if !ok || p.ts == "" {
		return nil
	}
	body := p.text
	if notice != "" {
		body = strings.TrimRight(body, "\n") + "\n\n_" + format.SlackMrkdwn(format.Literal(notice)) + "_"
	}
	if len(body) > format.SlackLimit {
		body = "_" + format.SlackMrkdwn(format.Literal(notice)) + "_"
	}
	err := s.update(ctx, p.channel, p.ts, []slack.MsgOption{slack.MsgOptionText(body, false),
		slack.MsgOptionBlocks(slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, body, false, false), nil, nil))})
	if errors.Is(err, gateway.ErrNotEditable) {
		return nil
	}
	return err
}

// tell shows notice to the presser of u alone, where they pressed.
func (s *Slack) tell(ctx context.Context, u gateway.Update, notice string) error {
	if notice == "" || u.User == "" {
		return nil
	}
	channel, thread := splitChat(u.Chat.ID)
	opts := []slack.MsgOption{slack.MsgOptionText(format.SlackMrkdwn(format.Literal(notice)), false)}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	if _, err := s.api.PostEphemeralContext(ctx, channel, u.User, opts...); err != nil {
		return errors.New("slack: chat.postEphemeral: " + redact(err, s.tokens))
	}
	return nil
}

// discard is the socketmode client's logger: it says nothing (its
// messages may hold payloads).
type discard struct{}

func (discard) Output(int, string) error { return nil }
