package fakeslack

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/talaria-agent/talaria/internal/fakewire"
)

// Slack's limits the fake enforces.
const (
	textLimit        = 40000 // chat.postMessage's text
	sectionTextLimit = 3000  // a section block's text
	buttonValueLimit = 2000
	actionIDLimit    = 255
)

// serveAPI routes POST /api/<method>.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		writeError(w, "method_not_supported_for_channel_type")
		return
	}
	params, err := fakewire.ReadParams(r)
	if err != nil {
		writeError(w, "invalid_form_data")
		return
	}
	token := params["token"]
	if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		token = bearer
	}
	if !s.admit(r, method) {
		return // held, and its client went away: never taken
	}
	s.mu.Lock()
	if errs := s.failNext[method]; len(errs) > 0 {
		s.failNext[method] = errs[1:]
		s.mu.Unlock()
		if errs[0] == "ratelimited" {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			_ = json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": "ratelimited"})
			return
		}
		writeError(w, errs[0])
		return
	}
	s.mu.Unlock()
	// apps.connections.open takes the app token, every other method the
	// bot token; the other kind is refused as Slack refuses it.
	want, other := s.BotToken, s.AppToken
	if method == "apps.connections.open" {
		want, other = s.AppToken, s.BotToken
	}
	if code := tokenError(token, want, other); code != "" {
		writeError(w, code)
		return
	}
	switch method {
	case "apps.connections.open":
		s.connectionsOpen(w)
	case "auth.test":
		writeOK(w, map[string]any{"url": "https://fake.slack.com/", "team": "Fake", "user": s.BotName,
			"team_id": TeamID, "user_id": BotUserID, "bot_id": BotID, "is_enterprise_install": false})
	case "chat.postMessage":
		s.postMessage(w, params)
	case "chat.update":
		s.update(w, params)
	case "chat.postEphemeral":
		s.postEphemeral(w, params)
	case "files.getUploadURLExternal":
		s.getUploadURLExternal(w, params)
	case "files.completeUploadExternal":
		s.completeUploadExternal(w, params)
	case "files.info":
		s.filesInfo(w, params)
	default:
		writeError(w, "unknown_method")
	}
}

// tokenError is Slack's error for a call with token when it takes want
// ("" when token is want). Pure.
func tokenError(token, want, other string) string {
	switch token {
	case want:
		return ""
	case "":
		return "not_authed"
	case other:
		return "not_allowed_token_type"
	}
	return "invalid_auth"
}

func (s *Server) connectionsOpen(w http.ResponseWriter) {
	s.mu.Lock()
	ticket := s.idLocked("tk")
	s.tickets[ticket] = true
	s.mu.Unlock()
	url := "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/link/?ticket=" + ticket + "&app_id=" + AppID
	writeOK(w, map[string]any{"url": url})
}

func (s *Server) postMessage(w http.ResponseWriter, p map[string]string) {
	channel := p["channel"]
	if channel == "" {
		writeError(w, "channel_not_found")
		return
	}
	if p["text"] == "" && p["blocks"] == "" {
		writeError(w, "no_text")
		return
	}
	if len(p["text"]) > textLimit {
		writeError(w, "msg_too_long")
		return
	}
	buttons, err := checkBlocks(p["blocks"])
	if err != nil {
		writeError(w, "invalid_blocks")
		return
	}
	s.mu.Lock()
	if p["thread_ts"] != "" && !s.hasTSLocked(channel, p["thread_ts"]) {
		s.mu.Unlock()
		writeError(w, "thread_not_found") // Slack posts it unthreaded; a test wants to know
		return
	}
	m := Message{Channel: channel, TS: s.tsLocked(), ThreadTS: p["thread_ts"], Text: p["text"], Buttons: buttons}
	if p["blocks"] != "" && p["blocks"] != "[]" {
		m.Blocks = p["blocks"]
	}
	s.sent = append(s.sent, m)
	// Slack sends the bot's own message in a DM to an app subscribed to
	// message.im: the app must know its own messages.
	if strings.HasPrefix(channel, "D") {
		ev := map[string]any{"type": "message", "user": BotUserID, "bot_id": BotID, "text": m.Text, "ts": m.TS,
			"channel": channel, "channel_type": "im", "event_ts": m.TS, "team": TeamID}
		if m.ThreadTS != "" {
			ev["thread_ts"] = m.ThreadTS
		}
		s.pushEventLocked(ev)
	}
	s.mu.Unlock()
	msg := map[string]any{"type": "message", "user": BotUserID, "bot_id": BotID, "text": m.Text, "ts": m.TS}
	if m.ThreadTS != "" {
		msg["thread_ts"] = m.ThreadTS
	}
	writeOK(w, map[string]any{"channel": channel, "ts": m.TS, "message": msg})
}

// hasTSLocked reports whether a message ts is in channel (one the bot
// sent, or one a user sent: those are all the fake's ts).
func (s *Server) hasTSLocked(channel, ts string) bool {
	return ts != "" && ts <= fmt.Sprintf("%d.%06d", s.nextTS/1_000_000, s.nextTS%1_000_000)
}

func (s *Server) update(w http.ResponseWriter, p map[string]string) {
	if len(p["text"]) > textLimit {
		writeError(w, "msg_too_long")
		return
	}
	buttons, err := checkBlocks(p["blocks"])
	if err != nil {
		writeError(w, "invalid_blocks")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.sent {
		m := &s.sent[i]
		if m.Channel != p["channel"] || m.TS != p["ts"] {
			continue
		}
		if _, ok := p["text"]; ok {
			m.Text = p["text"]
		}
		// Without blocks the message keeps its blocks; "[]" clears them.
		if blocks, ok := p["blocks"]; ok {
			m.Blocks, m.Buttons = blocks, buttons
			if blocks == "[]" {
				m.Blocks = ""
			}
		}
		m.Edits++
		m.EditTimes = append(m.EditTimes, time.Now())
		if strings.HasPrefix(m.Channel, "D") {
			s.pushEventLocked(map[string]any{"type": "message", "subtype": "message_changed", "channel": m.Channel,
				"channel_type": "im", "hidden": true, "ts": s.tsLocked(), "event_ts": m.TS,
				"message": map[string]any{"type": "message", "user": BotUserID, "bot_id": BotID, "text": m.Text, "ts": m.TS}})
		}
		writeOK(w, map[string]any{"channel": m.Channel, "ts": m.TS, "text": m.Text})
		return
	}
	writeError(w, "message_not_found")
}

// checkBlocks reads a message's blocks as Slack checks them and returns
// the buttons of its actions blocks.
func checkBlocks(raw string) ([][]Button, error) {
	if raw == "" {
		return nil, nil
	}
	var blocks []struct {
		Type    string `json:"type"`
		BlockID string `json:"block_id"`
		Text    *struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"text"`
		Elements []struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
			Text     struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"text"`
		} `json:"elements"`
	}
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
		return nil, err
	}
	var rows [][]Button
	actionIDs := map[string]bool{}
	for _, b := range blocks {
		switch b.Type {
		case "section":
			if b.Text == nil || b.Text.Text == "" || len(b.Text.Text) > sectionTextLimit {
				return nil, fmt.Errorf("a section's text is empty or over %d characters", sectionTextLimit)
			}
		case "actions":
			if len(b.Elements) == 0 || len(b.Elements) > 25 {
				return nil, fmt.Errorf("an actions block has %d elements", len(b.Elements))
			}
			var row []Button
			for _, e := range b.Elements {
				if e.Type != "button" || e.Text.Type != "plain_text" || e.Text.Text == "" || len(e.Value) > buttonValueLimit ||
					e.ActionID == "" || len(e.ActionID) > actionIDLimit || actionIDs[e.ActionID] {
					return nil, fmt.Errorf("a bad button %+v", e)
				}
				actionIDs[e.ActionID] = true
				row = append(row, Button{Text: e.Text.Text, ActionID: e.ActionID, Value: e.Value})
			}
			rows = append(rows, row)
		case "context", "divider", "header":
		default:
			return nil, fmt.Errorf("block type %q", b.Type)
		}
	}
	return rows, nil
}

func writeOK(w http.ResponseWriter, body map[string]any) {
	body["ok"] = true
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

func writeError(w http.ResponseWriter, code string) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": code})
}
