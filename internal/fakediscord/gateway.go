package fakediscord

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// Gateway opcodes.
const (
	opDispatch       = 0
	opHeartbeat      = 1
	opIdentify       = 2
	opResume         = 6
	opInvalidSession = 9
	opHello          = 10
	opHeartbeatAck   = 11
)

// closeAuthFailed is the close code of a wrong token.
const closeAuthFailed = 4004

// session is the bot's Gateway session: its dispatches, numbered, kept
// for a RESUME.
type session struct {
	id   string
	seq  int64
	log  []frame
	conn *gwConn // nil while disconnected
}

// frame is one Gateway payload.
type frame struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	S  *int64          `json:"s"`
	T  *string         `json:"t"`
}

// gwConn is one Gateway connection; its writer sends out, in order.
type gwConn struct {
	ws   *websocket.Conn
	out  chan frame
	done chan struct{}
}

func (c *gwConn) send(f frame) {
	select {
	case c.out <- f:
	case <-c.done:
	default:
		_ = c.ws.Close() // a client that does not read is dropped
	}
}

func (c *gwConn) writer() {
	for {
		select {
		case <-c.done:
			return
		case f := <-c.out:
			_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if c.ws.WriteJSON(f) != nil {
				_ = c.ws.Close()
				return
			}
		}
	}
}

func payload(op int, d any) frame {
	raw, _ := json.Marshal(d)
	return frame{Op: op, D: raw}
}

// dispatchLocked numbers an event in the session and sends it when the
// session is connected. With no session, a user's message is not
// delivered (Discord keeps nothing for a bot that is not there).
func (s *Server) dispatchLocked(t string, d any) {
	ss := s.session
	if ss == nil {
		if m, ok := d.(map[string]any); ok && t == "MESSAGE_CREATE" {
			if a, _ := m["author"].(map[string]any); a["id"] != BotID {
				s.dropped = append(s.dropped, m["id"].(string))
			}
		}
		return
	}
	ss.seq++
	f := payload(opDispatch, d)
	seq, typ := ss.seq, t
	f.S, f.T = &seq, &typ
	ss.log = append(ss.log, f)
	if ss.conn != nil {
		ss.conn.send(f)
	}
}

// Drop closes the bot's Gateway connection abruptly; its session stays,
// to be resumed.
func (s *Server) Drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session != nil && s.session.conn != nil {
		_ = s.session.conn.ws.Close()
		s.session.conn = nil
	}
}

// Connected reports whether the bot has a Gateway connection with a
// session (after READY or RESUMED).
func (s *Server) Connected() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.session != nil && s.session.conn != nil
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// serveGateway is the Gateway WebSocket.
func (s *Server) serveGateway(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("encoding") != "json" {
		http.Error(w, "encoding=json expected", http.StatusBadRequest)
		return
	}
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &gwConn{ws: ws, out: make(chan frame, 4096), done: make(chan struct{})}
	go c.writer()
	defer func() {
		close(c.done)
		_ = ws.Close()
		s.mu.Lock()
		if s.session != nil && s.session.conn == c {
			s.session.conn = nil
		}
		s.mu.Unlock()
	}()
	s.mu.Lock()
	interval := s.heartbeat
	s.mu.Unlock()
	c.send(payload(opHello, map[string]any{"heartbeat_interval": interval.Milliseconds()}))
	for {
		var f frame
		if err := ws.ReadJSON(&f); err != nil {
			return
		}
		switch f.Op {
		case opHeartbeat:
			c.send(payload(opHeartbeatAck, nil))
		case opIdentify:
			var id struct {
				Token   string `json:"token"`
				Intents int    `json:"intents"`
			}
			_ = json.Unmarshal(f.D, &id)
			if !s.tokenOK(id.Token) {
				s.refuse(c)
				return
			}
			s.identify(c, r)
		case opResume:
			var res struct {
				Token     string `json:"token"`
				SessionID string `json:"session_id"`
				Seq       int64  `json:"seq"`
			}
			_ = json.Unmarshal(f.D, &res)
			if !s.tokenOK(res.Token) {
				s.refuse(c)
				return
			}
			s.resume(c, res.SessionID, res.Seq)
		}
	}
}

// tokenOK: IDENTIFY and RESUME carry the token with or without "Bot ".
func (s *Server) tokenOK(token string) bool {
	return strings.TrimPrefix(token, "Bot ") == s.Token
}

func (s *Server) refuse(c *gwConn) {
	msg := websocket.FormatCloseMessage(closeAuthFailed, "Authentication failed.")
	_ = c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
}

// identify starts a new session on c (the one before it ends).
func (s *Server) identify(c *gwConn, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session != nil && s.session.conn != nil && s.session.conn != c {
		_ = s.session.conn.ws.Close()
	}
	s.session = &session{id: randomHex(16), conn: c}
	s.dispatchLocked("READY", map[string]any{"v": 10, "session_id": s.session.id,
		"resume_gateway_url": "ws://" + r.Host + "/gateway",
		"user":               map[string]any{"id": BotID, "username": s.BotName, "discriminator": "0", "bot": true},
		"guilds":             []any{map[string]any{"id": GuildID, "unavailable": true}}, "private_channels": []any{},
		"application": map[string]any{"id": AppID, "flags": 0}})
}

// resume reattaches c to the session and replays what came after seq; an
// unknown session is told to identify again.
func (s *Server) resume(c *gwConn, sessionID string, seq int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.session
	if ss == nil || ss.id != sessionID || seq > ss.seq {
		c.send(payload(opInvalidSession, false))
		return
	}
	if ss.conn != nil && ss.conn != c {
		_ = ss.conn.ws.Close()
	}
	ss.conn = c
	for _, f := range ss.log {
		if *f.S > seq {
			c.send(f)
		}
	}
	s.dispatchLocked("RESUMED", map[string]any{})
}
