// Package discord is the gateway's Discord adapter, on
// github.com/bwmarrin/discordgo: the bot receives messages and button
// presses over the Gateway WebSocket (no public URL), answers with the
// REST API, and streams a reply by editing it.
//
// The bot reads its DMs, and in a server the messages that mention it; a
// mention in a text channel is answered in a thread started from it, and
// the thread is the session (a later mention inside it continues it).
// Discord does not deliver an event again once it was sent, so an update
// is "acknowledged" here only to forget it; the gateway's own record of
// what it took keeps a replayed event (a resumed session may send one
// twice) from making a second turn.
package discord

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

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/talaria-agent/talaria/internal/gateway"
)

// DefaultAPIURL is Discord's REST API.
const DefaultAPIURL = "https://discord.com/api/v10"

// pollWait is how long one Poll waits for an update.
const pollWait = 25 * time.Second

// maxEditWait is the longest a rate limit's retry_after is waited for
// once; a longer one fails the call.
const maxEditWait = 5 * time.Second

// closeAuthFailed is the Gateway's close code for a wrong token.
const closeAuthFailed = 4004

// ErrRefused means Discord refused the bot's token: retrying will not help.
var ErrRefused = errors.New("discord: Discord refused the bot's token")

// Options configure the Discord bot.
type Options struct {
	// APIURL is the REST API (DefaultAPIURL when empty).
	APIURL string
	// Token is the bot's token from the Developer Portal.
	Token  string
	Logger *slog.Logger
}

// Discord is a bot user connected over the Gateway.
type Discord struct {
	s      *discordgo.Session
	ctx    context.Context
	token  string
	logger *slog.Logger
	// api is the configured REST API's URL; files downloads attachments
	// (from Discord's CDN, or from api's host).
	api   *url.URL
	files *http.Client

	userID, name string

	start sync.Once

	mu       sync.Mutex
	wake     chan struct{}
	pending  []any           // *discordgo.Message or *discordgo.Interaction, in the order they came
	queued   map[string]bool // the ids of pending
	acked    gateway.Seen
	runErr   error
	presses  map[string]*press  // by interaction id
	channels map[string]channel // what Get Channel said, by id
	topics   map[string]string  // the text of a mention a thread may start from, by message id
}

// press is a button's interaction: its deferred answer, then what
// answering it edits.
type press struct {
	it       *discordgo.Interaction
	deferred chan struct{} // closed once the deferral was sent (or failed)
	at       time.Time
}

// channel is what the adapter needs of a channel: whether it is a DM,
// and the parent of a thread.
type channel struct {
	dm     bool
	parent string
}

// New checks the token (Get Current User) and prepares the Gateway
// connection, which opens on the first Poll (only the gateway replica
// holding the bot's lease polls) and lives as long as ctx.
func New(ctx context.Context, o Options) (*Discord, error) {
	token := strings.TrimSpace(strings.TrimPrefix(o.Token, "Bot "))
	if token == "" {
		return nil, fmt.Errorf("%w: no token (set gateway.discord.token / DISCORD_BOT_TOKEN)", ErrRefused)
	}
	apiURL := strings.TrimRight(cmp.Or(o.APIURL, DefaultAPIURL), "/")
	api, err := url.Parse(apiURL)
	if err != nil || (api.Scheme != "http" && api.Scheme != "https") || api.Host == "" {
		return nil, fmt.Errorf("discord: the API URL %q is not an http(s) URL", apiURL)
	}
	s, err := discordgo.New("Bot " + token)
	if err != nil {
		return nil, fmt.Errorf("discord: %w", err)
	}
	s.Client = &http.Client{Timeout: 30 * time.Second, Transport: gateway.Rebase(discordgo.EndpointAPI, apiURL, nil)}
	s.LogLevel = -1 // its messages may hold payloads; the adapter says what matters
	s.ShouldRetryOnRateLimit = false
	s.StateEnabled = false
	s.SyncEvents = true // in the order they came; the handlers only queue
	s.Identify.Intents = discordgo.IntentsGuildMessages | discordgo.IntentsDirectMessages
	me, err := s.User("@me", discordgo.WithContext(ctx))
	var rest *discordgo.RESTError
	switch {
	case errors.As(err, &rest) && rest.Response != nil && rest.Response.StatusCode == http.StatusUnauthorized:
		return nil, fmt.Errorf("%w: %s says 401 Unauthorized (check gateway.discord.token / DISCORD_BOT_TOKEN)", ErrRefused, apiURL)
	case err != nil:
		return nil, fmt.Errorf("discord: connect to %s: %s", apiURL, redact(err, token))
	}
	d := &Discord{s: s, ctx: ctx, token: token, logger: cmp.Or(o.Logger, slog.Default()), api: api, userID: me.ID, name: me.Username,
		wake: make(chan struct{}), queued: map[string]bool{}, presses: map[string]*press{}, channels: map[string]channel{},
		topics: map[string]string{}}
	d.files = &http.Client{Timeout: downloadTimeout, CheckRedirect: d.checkRedirect}
	s.AddHandler(d.onMessage)
	s.AddHandler(d.onInteraction)
	return d, nil
}

// redact keeps the token out of an error.
func redact(err error, token string) string {
	if err == nil {
		return ""
	}
	return strings.ReplaceAll(err.Error(), token, "<token>")
}

func (d *Discord) Name() string { return "discord" }

// Account is the bot user's id.
func (d *Discord) Account() string { return d.userID }
func (d *Discord) BotName() string { return d.name }

// run opens the Gateway connection (discordgo resumes or reconnects it
// by itself once it was open) until ctx ends.
func (d *Discord) run() {
	go func() {
		for wait := time.Second; d.ctx.Err() == nil; wait = min(2*wait, 30*time.Second) {
			err := d.s.Open()
			if err == nil {
				d.setRunErr(nil)
				<-d.ctx.Done()
				_ = d.s.Close()
				return
			}
			var ce *websocket.CloseError
			if errors.As(err, &ce) && ce.Code == closeAuthFailed {
				d.setRunErr(fmt.Errorf("%w: the Gateway closed with 4004 Authentication failed (check gateway.discord.token / DISCORD_BOT_TOKEN)", ErrRefused))
				return
			}
			d.setRunErr(errors.New("discord: Gateway: " + redact(err, d.token)))
			select {
			case <-d.ctx.Done():
				return
			case <-time.After(wait):
			}
		}
	}()
}

func (d *Discord) setRunErr(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.runErr = err
	d.notifyLocked()
}

func (d *Discord) notifyLocked() {
	close(d.wake)
	d.wake = make(chan struct{})
}

// onMessage queues a message for the bot: one in a DM, or one that
// mentions it. Its own messages, other bots', webhooks' and system
// messages are not.
func (d *Discord) onMessage(_ *discordgo.Session, m *discordgo.MessageCreate) {
	defer d.survive("message")
	if m.Message == nil || m.Author == nil || m.Author.ID == d.userID || m.Author.Bot || m.WebhookID != "" {
		return
	}
	if m.Type != discordgo.MessageTypeDefault && m.Type != discordgo.MessageTypeReply {
		return
	}
	if m.GuildID != "" && !mentions(m.Message, d.userID) {
		return
	}
	d.queue(m.ID, m.Message)
}

// survive, deferred by an event handler, logs a panic in it (a fault of
// this adapter) and leaves the event: a handler runs in discordgo's own
// goroutine, where a panic would bring the process down.
func (d *Discord) survive(event string) {
	if v := recover(); v != nil {
		d.logger.Error("discord: an event could not be read; it is left", "event", event, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	}
}

func mentions(m *discordgo.Message, userID string) bool {
	for _, u := range m.Mentions {
		if u != nil && u.ID == userID {
			return true
		}
	}
	return false
}

// onInteraction queues a press on one of the bot's buttons, and defers
// its answer at once: Discord waits 3 seconds for one, and the gateway
// answers a press only once it took it.
func (d *Discord) onInteraction(_ *discordgo.Session, i *discordgo.InteractionCreate) {
	defer d.survive("interaction")
	if i.Interaction == nil || i.Type != discordgo.InteractionMessageComponent || i.Message == nil {
		return
	}
	p := &press{it: i.Interaction, deferred: make(chan struct{}), at: time.Now()}
	d.mu.Lock()
	d.presses[i.ID] = p
	for id, old := range d.presses {
		if time.Since(old.at) > 15*time.Minute { // an interaction's token lives 15 minutes
			delete(d.presses, id)
		}
	}
	d.mu.Unlock()
	go func() {
		defer close(p.deferred)
		ctx, cancel := context.WithTimeout(d.ctx, 3*time.Second)
		defer cancel()
		err := d.s.InteractionRespond(i.Interaction, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate},
			discordgo.WithContext(ctx))
		if err != nil && d.ctx.Err() == nil {
			d.logger.Debug("discord: defer a press's answer", "error", redact(err, d.token))
		}
	}()
	d.queue("press."+i.ID, i.Interaction)
}

// queue adds an event under its update id, once.
func (d *Discord) queue(id string, ev any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.acked.Has(id) || d.queued[id] {
		return
	}
	d.queued[id] = true
	d.pending = append(d.pending, ev)
	d.notifyLocked()
}

// Poll waits for updates not acknowledged yet: those that came since the
// last poll, and those of earlier polls the gateway did not take.
func (d *Discord) Poll(ctx context.Context) ([]gateway.Update, error) {
	d.start.Do(d.run)
	deadline := time.After(pollWait)
	for {
		d.mu.Lock()
		err, wake := d.runErr, d.wake
		evs := append([]any(nil), d.pending[:min(len(d.pending), 100)]...)
		d.mu.Unlock()
		if len(evs) > 0 {
			return d.updates(ctx, evs)
		}
		if err != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-d.ctx.Done():
			return nil, d.ctx.Err()
		case <-deadline:
			return nil, nil
		case <-wake:
		}
	}
}

// updates reads queued events as updates, in order; the first one whose
// chat cannot be told now (its channel not looked up) ends the batch, and
// one whose channel is gone or out of the bot's reach is dropped.
func (d *Discord) updates(ctx context.Context, evs []any) ([]gateway.Update, error) {
	var out []gateway.Update
	for _, ev := range evs {
		u, err := d.updateOf(ctx, ev)
		if hasCode(err, codeUnknownChannel) || hasCode(err, codeMissingAccess) {
			d.logger.Info("discord: an event of a channel out of reach dropped", "error", err)
			_ = d.Ack(ctx, gateway.Update{ID: eventID(ev)})
			continue
		}
		if err != nil {
			if len(out) > 0 {
				return out, nil
			}
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// AcksOneByOne: each event is forgotten alone (gateway.AcksOneByOne).
func (d *Discord) AcksOneByOne() {}

var _ gateway.AcksOneByOne = (*Discord)(nil)

// Ack forgets an update the gateway took: an event delivered again is
// dropped as it comes.
func (d *Discord) Ack(_ context.Context, u gateway.Update) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.acked.Add(u.ID)
	delete(d.queued, u.ID)
	for i, ev := range d.pending {
		if eventID(ev) == u.ID {
			d.pending = append(d.pending[:i:i], d.pending[i+1:]...)
			break
		}
	}
	return nil
}

// eventID is the update id of a queued event: a message's id, or
// "press." and the interaction's. Pure.
func eventID(ev any) string {
	switch e := ev.(type) {
	case *discordgo.Message:
		return e.ID
	case *discordgo.Interaction:
		return "press." + e.ID
	}
	return ""
}
