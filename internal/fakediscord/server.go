package fakediscord

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/talaria-agent/talaria/internal/fakewire"
)

// Ids of the fake's guild, bot user and application.
const (
	GuildID = "100000000000000001"
	BotID   = "100000000000000002"
	AppID   = "100000000000000003"
)

// Channel types, as Discord numbers them.
const (
	typeText   = 0
	typeDM     = 1
	typeThread = 11
)

// discordEpoch is the first millisecond of 2015, where snowflakes count from.
const discordEpoch = 1420070400000

// Server is a running fake of Discord for one bot.
type Server struct {
	Token, BotName string
	srv            *httptest.Server

	mu           sync.Mutex
	seq          int64 // snowflake counter
	channels     map[string]*channel
	messages     map[string]*Message // by id: every message, users' and the bot's
	sent         []*Message          // the bot's, in order
	ephemerals   []Message
	interactions map[string]*interaction
	session      *session // the bot's Gateway session, if it has one
	dropped      []string // what users said while no session was there
	failNext     map[string][]string
	hold         fakewire.Hold
	heartbeat    time.Duration
	files        map[string]File // every attachment, by id, for the CDN
	downloads    []Download
	cdnKey       []byte // signs the CDN's URLs
}

type channel struct {
	ID, Parent, Recipient string
	typ                   int
}

// Message is a message in the fake: a user's, or one the bot sent (with its
// latest content, after edits).
type Message struct {
	ID, ChannelID, Author, Content string
	// ReplyTo is the message this one answers (message_reference).
	ReplyTo string
	// Buttons are its components' buttons, a row each.
	Buttons [][]Button
	// AllowedMentions is what the sender let Discord ping ("" for the
	// default: every mention in the content).
	AllowedMentions string
	// Edits counts the edits; EditTimes are when.
	Edits     int
	EditTimes []time.Time
	// Files are its attachments: a user's files, or what the bot
	// uploaded (name, type and bytes as they came).
	Files []File
	// Flags are the message's flags (IS_VOICE_MESSAGE for a voice
	// message).
	Flags   int
	payload map[string]any
}

// Button is a message component button.
type Button struct {
	Label, CustomID string
}

type interaction struct {
	id, token, user, channel, message string
	at                                time.Time
	answered                          bool
}

// Start starts a fake Discord for a bot with token.
func Start(token, botName string) *Server {
	s := &Server{Token: token, BotName: botName, channels: map[string]*channel{}, messages: map[string]*Message{},
		interactions: map[string]*interaction{}, failNext: map[string][]string{}, heartbeat: 2 * time.Second,
		files: map[string]File{}, cdnKey: []byte(randomHex(32))}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v10/", s.serveREST)
	mux.HandleFunc("/attachments/", s.serveCDN) // the CDN's paths, on the fake's host
	mux.HandleFunc("/gateway", s.serveGateway)
	mux.HandleFunc("/gateway/", s.serveGateway) // clients add a slash
	s.srv = httptest.NewServer(mux)
	return s
}

// URL is the REST API's base ("http://127.0.0.1:port/api/v10").
func (s *Server) URL() string { return s.srv.URL + "/api/v10" }

// Close stops the server and drops its connections.
func (s *Server) Close() {
	s.Drop()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// HeartbeatInterval sets the interval HELLO asks for (2 s by default).
func (s *Server) HeartbeatInterval(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.heartbeat = d
}

// FailNext makes the next calls of a route fail: "ratelimited" is HTTP
// 429 with Retry-After: 1, "500" an internal error. Routes are named as
// Discord's documentation names them, in camel case: createMessage,
// editMessage, triggerTyping, startThread, interactionCallback, followup,
// editOriginal, getChannel.
func (s *Server) FailNext(route string, errs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext[route] = append(s.failNext[route], errs...)
}

// DMChannel is the DM channel between the bot and user (created when
// first asked for).
func (s *Server) DMChannel(user string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dmLocked(user)
}

func (s *Server) dmLocked(user string) string {
	for _, c := range s.channels {
		if c.typ == typeDM && c.Recipient == user {
			return c.ID
		}
	}
	c := &channel{ID: s.snowflakeLocked(), typ: typeDM, Recipient: user}
	s.channels[c.ID] = c
	return c.ID
}

// TextChannel creates a text channel in the guild and returns its id.
func (s *Server) TextChannel() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &channel{ID: s.snowflakeLocked(), typ: typeText}
	s.channels[c.ID] = c
	return c.ID
}

// SendDM is user's message to the bot in their DM; it returns the
// message.
func (s *Server) SendDM(user, text string) Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.postLocked(user, s.dmLocked(user), text, false)
}

// Mention is user's message in a guild channel (or thread) that mentions
// the bot ("<@bot id> " before text).
func (s *Server) Mention(user, channelID, text string) Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.postLocked(user, channelID, "<@"+BotID+"> "+text, true)
}

// Say is user's message in a guild channel that does not mention the bot.
func (s *Server) Say(user, channelID, text string) Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.postLocked(user, channelID, text, false)
}

func (s *Server) postLocked(user, channelID, content string, mention bool) Message {
	m := &Message{ID: s.snowflakeLocked(), ChannelID: channelID, Author: user, Content: content}
	s.messages[m.ID] = m
	m.payload = s.messageJSONLocked(m, mention)
	s.dispatchLocked("MESSAGE_CREATE", m.payload)
	return *m
}

// messageJSONLocked is m as Discord's Message object.
func (s *Server) messageJSONLocked(m *Message, mention bool) map[string]any {
	author := map[string]any{"id": m.Author, "username": "user" + m.Author, "discriminator": "0", "global_name": nil}
	if m.Author == BotID {
		author = map[string]any{"id": BotID, "username": s.BotName, "discriminator": "0", "bot": true}
	}
	mentions := []any{}
	if mention {
		mentions = append(mentions, map[string]any{"id": BotID, "username": s.BotName, "discriminator": "0", "bot": true})
	}
	out := map[string]any{"id": m.ID, "channel_id": m.ChannelID, "author": author, "content": m.Content,
		"timestamp": snowflakeTime(m.ID).Format(time.RFC3339Nano), "edited_timestamp": nil, "tts": false,
		"mention_everyone": false, "mentions": mentions, "mention_roles": []any{}, "attachments": attachmentsJSON(m.Files),
		"embeds": []any{}, "pinned": false, "type": 0, "flags": m.Flags, "components": componentsJSON(m.Buttons)}
	if m.ReplyTo != "" {
		out["type"] = 19
		out["message_reference"] = map[string]any{"message_id": m.ReplyTo, "channel_id": m.ChannelID}
	}
	if c := s.channels[m.ChannelID]; c != nil && c.typ != typeDM {
		out["guild_id"] = GuildID
		if m.Author != BotID {
			out["member"] = map[string]any{"roles": []any{}, "joined_at": "2024-01-01T00:00:00Z", "deaf": false, "mute": false}
		}
	}
	return out
}

func componentsJSON(rows [][]Button) []any {
	out := []any{}
	for _, row := range rows {
		var els []any
		for _, b := range row {
			els = append(els, map[string]any{"type": 2, "style": 2, "label": b.Label, "custom_id": b.CustomID})
		}
		out = append(out, map[string]any{"type": 1, "components": els})
	}
	return out
}

// Press is user's press on the button of m (a message the bot sent) whose
// custom id is customID: an INTERACTION_CREATE of type 3.
func (s *Server) Press(user string, m Message, customID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.messages[m.ID]
	if cur == nil {
		return
	}
	it := &interaction{id: s.snowflakeLocked(), token: "itoken-" + randomHex(16), user: user, channel: cur.ChannelID,
		message: cur.ID, at: time.Now()}
	s.interactions[it.id] = it
	who := map[string]any{"id": user, "username": "user" + user, "discriminator": "0"}
	payload := map[string]any{"id": it.id, "application_id": AppID, "type": 3, "token": it.token, "version": 1,
		"channel_id": cur.ChannelID, "app_permissions": "0", "locale": "en-US",
		"data":    map[string]any{"custom_id": customID, "component_type": 2},
		"message": s.messageJSONLocked(cur, false)}
	if c := s.channels[cur.ChannelID]; c != nil && c.typ != typeDM {
		payload["guild_id"] = GuildID
		payload["member"] = map[string]any{"user": who, "roles": []any{}, "permissions": "0", "joined_at": "2024-01-01T00:00:00Z"}
	} else {
		payload["user"] = who
	}
	s.dispatchLocked("INTERACTION_CREATE", payload)
}

// Redeliver dispatches the event that carried a user's message again, as
// a resumed session may, with the session's next sequence number.
func (s *Server) Redeliver(messageID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.messages[messageID]; m != nil && m.payload != nil {
		s.dispatchLocked("MESSAGE_CREATE", m.payload)
	}
}

// Dropped are the ids of users' messages no bot session was there to
// receive.
func (s *Server) Dropped() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.dropped...)
}

// Sent is every message the bot sent, in order, with its latest content.
func (s *Server) Sent() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, len(s.sent))
	for i, m := range s.sent {
		out[i] = *m
		out[i].EditTimes = append([]time.Time(nil), m.EditTimes...)
		out[i].Files = append([]File(nil), m.Files...)
		out[i].payload = nil
	}
	return out
}

// WaitSent waits until ok holds for the sent messages, or ctx ends.
func (s *Server) WaitSent(ctx context.Context, ok func([]Message) bool) ([]Message, error) {
	return fakewire.Wait(ctx, s.Sent, ok)
}

// Ephemerals are the messages the bot showed one user alone (an
// interaction's response or follow-up with the ephemeral flag), in order.
func (s *Server) Ephemerals() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.ephemerals...)
}

// WaitEphemerals waits until ok holds for the ephemeral messages, or ctx
// ends.
func (s *Server) WaitEphemerals(ctx context.Context, ok func([]Message) bool) ([]Message, error) {
	return fakewire.Wait(ctx, s.Ephemerals, ok)
}

// snowflakeLocked is a new id: milliseconds since Discord's epoch, and a
// counter.
func (s *Server) snowflakeLocked() string {
	s.seq++
	ms := time.Now().UnixMilli() - discordEpoch
	return strconv.FormatInt(ms<<22|(s.seq&0x3fffff), 10)
}

// snowflakeTime is when a snowflake was made.
func snowflakeTime(id string) time.Time {
	n, _ := strconv.ParseInt(id, 10, 64)
	return time.UnixMilli(n>>22 + discordEpoch).UTC()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// writeJSON answers v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers a Discord JSON error.
func writeError(w http.ResponseWriter, status, code int, message string) {
	writeJSON(w, status, map[string]any{"message": message, "code": code})
}

// splitPath cuts "/api/v10/a/b/c" into its parts after the version.
func splitPath(p string) []string {
	return strings.Split(strings.Trim(strings.TrimPrefix(p, "/api/v10/"), "/"), "/")
}
