package fakeslack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/talaria-agent/talaria/internal/fakewire"
)

// IDs of the fake workspace and its app.
const (
	TeamID    = "T0TEST"
	BotUserID = "U0BOT"
	BotID     = "B0BOT"
	AppID     = "A0TEST"
)

// Server is a running fake of Slack for one app.
type Server struct {
	BotToken, AppToken string
	// BotName is the bot user's name (auth.test's "user").
	BotName string
	srv     *httptest.Server

	mu             sync.Mutex
	kick           chan struct{}
	redeliverAfter time.Duration
	conns          []*conn
	tickets        map[string]bool
	events         []*event
	nextTS         int64
	nextID         int
	sent           []Message
	failNext       map[string][]string
	badAcks        []string
	hold           *hold
	ephemerals     []Ephemeral
	files          map[string]*storedFile // by id
	uploadURLs     map[string]string      // file ids by upload URL key
	uploads        []Upload
	fetches        []Fetch
	closed         chan struct{}
}

// Message is a message the bot posted (with its latest text, after edits).
type Message struct {
	Channel  string
	TS       string
	ThreadTS string
	Text     string
	// Blocks is the message's Block Kit blocks as JSON ("" for none), and
	// Buttons the buttons of its actions blocks, a row each.
	Blocks  string
	Buttons [][]Button
	// Edits counts the chat.update calls on it; EditTimes are when.
	Edits     int
	EditTimes []time.Time
}

// Button is a Block Kit button.
type Button struct {
	Text, ActionID, Value string
}

// Envelope is one delivery of an event over Socket Mode.
type Envelope struct {
	ID           string
	Type         string // events_api or interactive
	RetryAttempt int
}

type event struct {
	kind      string
	payload   map[string]any
	envelopes []string
	acked     bool
	lastSent  time.Time
	attempts  int // deliveries so far
}

// maxAttempts is how many times Slack delivers an envelope (the first
// time and three retries) before it gives up.
const maxAttempts = 4

// Start starts a fake Slack for an app with a bot token (xoxb-) and an
// app-level token (xapp-).
func Start(botToken, appToken, botName string) *Server {
	s := &Server{BotToken: botToken, AppToken: appToken, BotName: botName, kick: make(chan struct{}, 1),
		redeliverAfter: 3 * time.Second, tickets: map[string]bool{}, nextTS: time.Now().Unix() * 1_000_000,
		failNext: map[string][]string{}, files: map[string]*storedFile{}, uploadURLs: map[string]string{}, closed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.serveAPI)
	mux.HandleFunc("/link/", s.serveSocket)
	mux.HandleFunc("/files-pri/", s.serveFile)
	mux.HandleFunc("/upload/v1/", s.serveUpload)
	s.srv = httptest.NewServer(mux)
	go s.deliverLoop()
	return s
}

// URL is the Web API's base URL ("http://127.0.0.1:port/api/"), for
// slack.OptionAPIURL.
func (s *Server) URL() string { return s.srv.URL + "/api/" }

// Close stops the server and drops its connections.
func (s *Server) Close() {
	close(s.closed)
	s.mu.Lock()
	for _, c := range s.conns {
		_ = c.ws.Close()
	}
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// RedeliverAfter sets how long an envelope may stay unacknowledged before
// it is delivered again (3 s by default, Slack's window to acknowledge).
func (s *Server) RedeliverAfter(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.redeliverAfter = d
}

// FailNext makes the next calls of a Web API method fail with these
// errors ("ratelimited" is HTTP 429 with Retry-After: 1).
func (s *Server) FailNext(method string, errs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext[method] = append(s.failNext[method], errs...)
}

// Sent is every message the bot posted, in order, with its latest text.
func (s *Server) Sent() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, len(s.sent))
	for i, m := range s.sent {
		out[i] = m
		out[i].EditTimes = append([]time.Time(nil), m.EditTimes...)
	}
	return out
}

// WaitSent waits until ok holds for the sent messages, or ctx ends.
func (s *Server) WaitSent(ctx context.Context, ok func([]Message) bool) ([]Message, error) {
	return fakewire.Wait(ctx, s.Sent, ok)
}

// Pending is how many events (messages, presses, the bot's own messages
// Slack echoes) no envelope of which was acknowledged yet.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.events {
		if !e.acked {
			n++
		}
	}
	return n
}

// Envelopes is every envelope delivered so far, in order.
func (s *Server) Envelopes() []Envelope {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Envelope
	for _, e := range s.events {
		for i, id := range e.envelopes {
			out = append(out, Envelope{ID: id, Type: e.kind, RetryAttempt: i})
		}
	}
	return out
}

// BadAcks are acknowledgements of envelopes this server never sent.
func (s *Server) BadAcks() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.badAcks...)
}

// SendDM delivers a message from user in the DM channel (a "D..." id),
// and returns its ts.
func (s *Server) SendDM(user, channel, text string) string {
	return s.post(user, channel, "im", text, "", false, nil)
}

// Mention delivers a message from user in a channel (a "C..." id) that
// mentions the bot ("<@U0BOT> " is put before text), in a thread when
// threadTS is set; it returns its ts.
func (s *Server) Mention(user, channel, text, threadTS string) string {
	return s.post(user, channel, "channel", "<@"+BotUserID+"> "+text, threadTS, true, nil)
}

func (s *Server) post(user, channel, channelType, text, threadTS string, mention bool, files []File) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.tsLocked()
	msg := map[string]any{"type": "message", "user": user, "text": text, "ts": ts, "channel": channel,
		"channel_type": channelType, "event_ts": ts, "client_msg_id": s.idLocked("cm"), "team": TeamID}
	if threadTS != "" {
		msg["thread_ts"] = threadTS
	}
	if len(files) > 0 {
		msg["subtype"], msg["files"], msg["upload"], msg["display_as_bot"] = "file_share", s.storeFilesLocked(user, files), false, false
	}
	if mention {
		m := map[string]any{}
		for k, v := range msg {
			m[k] = v
		}
		delete(m, "channel_type")
		delete(m, "subtype")
		m["type"] = "app_mention"
		s.pushEventLocked(m)
	}
	// Slack sends the message event to an app subscribed to it; this fake
	// app subscribes to message.im only.
	if channelType == "im" {
		s.pushEventLocked(msg)
	}
	return ts
}

// Press delivers a press by user on the button of message m whose value
// is value (a block_actions interaction).
func (s *Server) Press(user string, m Message, value string) {
	var b *Button
	blockID := ""
	for i, row := range m.Buttons {
		for j := range row {
			if row[j].Value == value {
				b, blockID = &m.Buttons[i][j], fmt.Sprintf("actions-%d", i)
			}
		}
	}
	if b == nil {
		panic("fakeslack: no button with value " + value)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if id := s.blockIDLocked(m, blockID); id != "" {
		blockID = id
	}
	actionTS := s.tsLocked()
	container := map[string]any{"type": "message", "message_ts": m.TS, "channel_id": m.Channel, "is_ephemeral": false}
	message := map[string]any{"type": "message", "user": BotUserID, "bot_id": BotID, "ts": m.TS, "text": m.Text}
	if m.ThreadTS != "" {
		container["thread_ts"] = m.ThreadTS
		message["thread_ts"] = m.ThreadTS
	}
	if m.Blocks != "" {
		message["blocks"] = json.RawMessage(m.Blocks)
	}
	payload := map[string]any{
		"type": "block_actions", "api_app_id": AppID, "token": "verification-token",
		"user":         map[string]any{"id": user, "username": "user-" + user, "team_id": TeamID},
		"team":         map[string]any{"id": TeamID, "domain": "fake"},
		"channel":      map[string]any{"id": m.Channel, "name": "directmessage"},
		"container":    container,
		"message":      message,
		"trigger_id":   s.idLocked("tr"),
		"response_url": s.srv.URL + "/response/" + s.idLocked("ru"),
		"actions": []any{map[string]any{"action_id": b.ActionID, "block_id": blockID, "value": b.Value, "type": "button",
			"action_ts": actionTS, "text": map[string]any{"type": "plain_text", "text": b.Text}}},
	}
	s.pushLocked("interactive", payload)
}

// blockIDLocked is the block_id the message's blocks give the actions
// block named fallback ("actions-<row>").
func (s *Server) blockIDLocked(m Message, fallback string) string {
	var blocks []struct {
		Type    string `json:"type"`
		BlockID string `json:"block_id"`
	}
	if json.Unmarshal([]byte(m.Blocks), &blocks) != nil {
		return ""
	}
	row := -1
	fmt.Sscanf(fallback, "actions-%d", &row)
	n := 0
	for _, b := range blocks {
		if b.Type != "actions" {
			continue
		}
		if n == row {
			return b.BlockID
		}
		n++
	}
	return ""
}

// pushEventLocked queues an Events API event_callback carrying ev.
func (s *Server) pushEventLocked(ev map[string]any) {
	s.pushLocked("events_api", map[string]any{
		"token": "verification-token", "team_id": TeamID, "api_app_id": AppID, "event": ev,
		"type": "event_callback", "event_id": s.idLocked("Ev"), "event_time": time.Now().Unix(),
		"authorizations":        []any{map[string]any{"team_id": TeamID, "user_id": BotUserID, "is_bot": true}},
		"is_ext_shared_channel": false, "event_context": s.idLocked("ctx"),
	})
}

func (s *Server) pushLocked(kind string, payload map[string]any) {
	s.events = append(s.events, &event{kind: kind, payload: payload})
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *Server) tsLocked() string {
	s.nextTS++
	return fmt.Sprintf("%d.%06d", s.nextTS/1_000_000, s.nextTS%1_000_000)
}

func (s *Server) idLocked(prefix string) string {
	s.nextID++
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s%04d%s", prefix, s.nextID, strings.ToUpper(hex.EncodeToString(b[:])))
}

// deliverLoop sends each event on the newest connection, and again, as a
// new envelope, while it is not acknowledged.
func (s *Server) deliverLoop() {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.closed:
			return
		case <-s.kick:
		case <-tick.C:
		}
		type send struct {
			c   *conn
			msg map[string]any
		}
		var sends []send
		s.mu.Lock()
		if n := len(s.conns); n > 0 {
			c := s.conns[n-1]
			for _, e := range s.events {
				due := e.attempts == 0 || time.Since(e.lastSent) >= s.redeliverAfter
				if e.acked || !due || e.attempts >= maxAttempts {
					continue
				}
				id := s.idLocked("env-")
				e.envelopes = append(e.envelopes, id)
				msg := map[string]any{"envelope_id": id, "type": e.kind, "payload": e.payload,
					"accepts_response_payload": e.kind == "interactive", "retry_attempt": e.attempts}
				if e.attempts > 0 {
					msg["retry_reason"] = "timeout"
				} else {
					msg["retry_reason"] = ""
				}
				e.attempts++
				e.lastSent = time.Now()
				sends = append(sends, send{c, msg})
			}
		}
		s.mu.Unlock()
		for _, sd := range sends {
			_ = sd.c.write(sd.msg)
		}
	}
}

// conn is one Socket Mode connection.
type conn struct {
	ws *websocket.Conn
	mu sync.Mutex
}

func (c *conn) write(v any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.ws.WriteJSON(v)
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// serveSocket is the Socket Mode endpoint apps.connections.open gave.
func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	ticket := r.URL.Query().Get("ticket")
	s.mu.Lock()
	ok := s.tickets[ticket]
	delete(s.tickets, ticket)
	s.mu.Unlock()
	if !ok {
		http.Error(w, "invalid ticket", http.StatusUnauthorized)
		return
	}
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &conn{ws: ws}
	if err := c.write(map[string]any{"type": "hello", "num_connections": 1,
		"debug_info":      map[string]any{"host": "fakeslack", "build_number": 1, "approximate_connection_time": 18060},
		"connection_info": map[string]any{"app_id": AppID}}); err != nil {
		_ = ws.Close()
		return
	}
	s.mu.Lock()
	s.conns = append(s.conns, c)
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
	done := make(chan struct{})
	go func() { // Slack pings; a client that hears none reconnects.
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = ws.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(5*time.Second))
			}
		}
	}()
	defer func() {
		close(done)
		_ = ws.Close()
		s.mu.Lock()
		for i, o := range s.conns {
			if o == c {
				s.conns = append(s.conns[:i:i], s.conns[i+1:]...)
				break
			}
		}
		s.mu.Unlock()
	}()
	for {
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if err := ws.ReadJSON(&ack); err != nil {
			return
		}
		s.ack(ack.EnvelopeID)
	}
}

func (s *Server) ack(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.events {
		for _, env := range e.envelopes {
			if env == id {
				e.acked = true
				return
			}
		}
	}
	s.badAcks = append(s.badAcks, id)
}
