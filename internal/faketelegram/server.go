package faketelegram

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/talaria-agent/talaria/internal/fakewire"
)

// Server is a running fake Bot API for one bot.
type Server struct {
	Token    string
	Username string
	srv      *httptest.Server

	mu      sync.Mutex
	wake    chan struct{}
	updates []update // not yet acknowledged
	nextUpd int64
	nextMsg int64
	sent    []Message
	// editTimes are when each message was edited (by message id).
	editTimes map[int64][]time.Time
	// callbacks are the presses' callback query ids, with their updates.
	callbacks map[string]int64
	answers   []Answer
	hold      *hold
	failNext  map[string]int
	// files are the files users sent, by file_id; documents those the bot
	// sent (files.go).
	files     map[string]stored
	nextFile  int
	downloads int
	documents []Document
	// confirmed is the highest offset a getUpdates carried (every update
	// below it is acknowledged for good); polls counts the getUpdates
	// answered.
	confirmed int64
	polls     int
}

// Message is a message the bot sent (or edited).
type Message struct {
	ID        int64
	ChatID    int64
	Text      string
	ParseMode string
	ReplyTo   int64
	Buttons   [][]Button
	// Edits counts editMessageText calls on it.
	Edits   int
	Deleted bool
}

// Button is an inline keyboard button.
type Button struct {
	Text, Data string
}

type update struct {
	ID  int64
	Raw map[string]any
}

// Start starts a fake Bot API for a bot with token and username.
func Start(token, username string) *Server {
	s := &Server{Token: token, Username: username, wake: make(chan struct{}), nextUpd: 1000, nextMsg: 1,
		editTimes: map[int64][]time.Time{}, callbacks: map[string]int64{}, failNext: map[string]int{}, files: map[string]stored{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the server's base URL ("http://127.0.0.1:port").
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server, ending long polls in flight.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Send queues a text message from user in a private chat with them (or
// in chat, when chat is not 0) and returns its update id.
func (s *Server) Send(user int64, chat int64, text string) int64 {
	if chat == 0 {
		chat = user
	}
	kind := chatType(chat)
	s.mu.Lock()
	defer s.mu.Unlock()
	msgID := s.nextMsg
	s.nextMsg++
	return s.pushLocked(map[string]any{"message": map[string]any{
		"message_id": msgID, "date": time.Now().Unix(), "text": text,
		"from": map[string]any{"id": user, "is_bot": false, "first_name": fmt.Sprintf("user%d", user)},
		"chat": map[string]any{"id": chat, "type": kind},
	}})
}

// SendEach queues text from each user in a private chat with them, all at
// once (a poll sees every one or none), and returns their update ids.
func (s *Server) SendEach(users []int64, text string) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]int64, 0, len(users))
	for _, user := range users {
		msgID := s.nextMsg
		s.nextMsg++
		ids = append(ids, s.pushLocked(map[string]any{"message": map[string]any{
			"message_id": msgID, "date": time.Now().Unix(), "text": text,
			"from": map[string]any{"id": user, "is_bot": false, "first_name": fmt.Sprintf("user%d", user)},
			"chat": map[string]any{"id": user, "type": "private"},
		}}))
	}
	return ids
}

// Press queues a press on an inline button of message msg by user (any
// user: in a group every member sees the buttons).
func (s *Server) Press(user int64, msg Message, data string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := fmt.Sprintf("cb%d", s.nextUpd)
	s.callbacks[id] = s.nextUpd
	return s.pushLocked(map[string]any{"callback_query": map[string]any{
		"id": id, "data": data, "chat_instance": "ci",
		"from":    map[string]any{"id": user, "is_bot": false, "first_name": fmt.Sprintf("user%d", user)},
		"message": map[string]any{"message_id": msg.ID, "date": time.Now().Unix(), "chat": map[string]any{"id": msg.ChatID, "type": chatType(msg.ChatID)}, "text": msg.Text},
	}})
}

// chatType is the type of a chat: private, or a supergroup for a
// negative id. Pure.
func chatType(chat int64) string {
	if chat < 0 {
		return "supergroup"
	}
	return "private"
}

func (s *Server) pushLocked(body map[string]any) int64 {
	id := s.nextUpd
	s.nextUpd++
	body["update_id"] = id
	s.updates = append(s.updates, update{ID: id, Raw: body})
	close(s.wake)
	s.wake = make(chan struct{})
	return id
}

// Pending is how many updates are not acknowledged yet.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.updates)
}

// Confirmed is the highest offset the bot's getUpdates carried: every
// update whose id is below it is acknowledged for good.
func (s *Server) Confirmed() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.confirmed
}

// Polls is how many getUpdates calls were answered.
func (s *Server) Polls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.polls
}

// WaitPolls waits until ok holds for the number of getUpdates calls
// answered, or ctx ends.
func (s *Server) WaitPolls(ctx context.Context, ok func(int) bool) (int, error) {
	return fakewire.Wait(ctx, s.Polls, ok)
}

// Sent is every message the bot sent, in order, with its latest text.
func (s *Server) Sent() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.sent...)
}

// EditTimes is when each edit of message id was made, in order (an edit
// refused, as one to the same text is, is not one).
func (s *Server) EditTimes(id int64) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.editTimes[id]...)
}

// WaitSent waits until ok holds for the sent messages, or ctx ends.
func (s *Server) WaitSent(ctx context.Context, ok func([]Message) bool) ([]Message, error) {
	return fakewire.Wait(ctx, s.Sent, ok)
}

// serve routes /bot<token>/<method>.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/file/bot"); ok {
		s.serveFile(w, r, rest)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, cut := strings.Cut(rest, "/")
	if !ok || !cut {
		writeError(w, http.StatusNotFound, "Not Found", 0)
		return
	}
	if token != s.Token {
		writeError(w, http.StatusUnauthorized, "Unauthorized", 0)
		return
	}
	if method == "sendDocument" {
		s.sendDocument(w, r)
		return
	}
	params, err := fakewire.ReadParams(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "Bad Request: "+err.Error(), 0)
		return
	}
	if !s.admit(r, method) {
		return // held, and its client went away: never taken
	}
	if s.failing(method) {
		writeError(w, http.StatusTooManyRequests, "", 1)
		return
	}
	switch method {
	case "getMe":
		writeResult(w, map[string]any{"id": 7000, "is_bot": true, "first_name": "Talaria", "username": s.Username})
	case "getUpdates":
		s.getUpdates(w, r, params)
	case "sendMessage":
		s.sendMessage(w, params)
	case "editMessageText":
		s.editMessage(w, params)
	case "deleteMessage":
		s.deleteMessage(w, params)
	case "editMessageReplyMarkup":
		s.editMarkup(w, params)
	case "answerCallbackQuery":
		s.answerCallback(w, params)
	case "getFile":
		s.getFile(w, params)
	case "sendChatAction", "setMyCommands", "deleteWebhook":
		writeResult(w, true)
	default:
		writeError(w, http.StatusNotFound, "Not Found: method not found", 0)
	}
}

func (s *Server) getUpdates(w http.ResponseWriter, r *http.Request, p map[string]string) {
	offset, _ := strconv.ParseInt(p["offset"], 10, 64)
	timeout, _ := strconv.Atoi(p["timeout"])
	limit, _ := strconv.Atoi(p["limit"])
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	deadline := time.Now().Add(time.Duration(timeout) * time.Second)
	for {
		s.mu.Lock()
		// An offset acknowledges every update below it, for good.
		s.confirmed = max(s.confirmed, offset)
		kept := s.updates[:0]
		for _, u := range s.updates {
			if offset == 0 || u.ID >= offset {
				kept = append(kept, u)
			}
		}
		s.updates = kept
		var out []map[string]any
		for _, u := range s.updates {
			if len(out) < limit {
				out = append(out, u.Raw)
			}
		}
		wake := s.wake
		s.mu.Unlock()
		if len(out) > 0 || !time.Now().Before(deadline) {
			if out == nil {
				out = []map[string]any{}
			}
			s.mu.Lock()
			s.polls++
			s.mu.Unlock()
			writeResult(w, out)
			return
		}
		select {
		case <-wake:
		case <-r.Context().Done():
			return
		case <-time.After(time.Until(deadline)):
		}
	}
}

func (s *Server) sendMessage(w http.ResponseWriter, p map[string]string) {
	chat, err := strconv.ParseInt(p["chat_id"], 10, 64)
	if err != nil || p["text"] == "" {
		writeError(w, http.StatusBadRequest, "Bad Request: chat_id and text are required", 0)
		return
	}
	if err := checkEntities(p["text"], p["parse_mode"]); err != nil {
		writeError(w, http.StatusBadRequest, "Bad Request: can't parse entities: "+err.Error(), 0)
		return
	}
	m := Message{ChatID: chat, Text: p["text"], ParseMode: p["parse_mode"]}
	m.ReplyTo, _ = strconv.ParseInt(p["reply_to_message_id"], 10, 64)
	m.Buttons = keyboard(p["reply_markup"])
	s.mu.Lock()
	m.ID = s.nextMsg
	s.nextMsg++
	s.sent = append(s.sent, m)
	s.mu.Unlock()
	writeResult(w, map[string]any{"message_id": m.ID, "date": time.Now().Unix(), "text": m.Text,
		"chat": map[string]any{"id": chat, "type": "private"}})
}

func (s *Server) editMessage(w http.ResponseWriter, p map[string]string) {
	id, _ := strconv.ParseInt(p["message_id"], 10, 64)
	chat, _ := strconv.ParseInt(p["chat_id"], 10, 64)
	if err := checkEntities(p["text"], p["parse_mode"]); err != nil {
		writeError(w, http.StatusBadRequest, "Bad Request: can't parse entities: "+err.Error(), 0)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.sent {
		if m := &s.sent[i]; m.ID == id && m.ChatID == chat && !m.Deleted {
			if m.Text == p["text"] {
				writeErrorLocked(w, http.StatusBadRequest, "Bad Request: message is not modified")
				return
			}
			m.Text, m.ParseMode, m.Edits = p["text"], p["parse_mode"], m.Edits+1
			s.editTimes[m.ID] = append(s.editTimes[m.ID], time.Now())
			if p["reply_markup"] != "" {
				m.Buttons = keyboard(p["reply_markup"])
			}
			writeResult(w, map[string]any{"message_id": m.ID, "date": time.Now().Unix(), "text": m.Text,
				"chat": map[string]any{"id": chat, "type": "private"}})
			return
		}
	}
	writeErrorLocked(w, http.StatusBadRequest, "Bad Request: message to edit not found")
}

// editMarkup replaces a message's inline keyboard (none: no buttons).
func (s *Server) editMarkup(w http.ResponseWriter, p map[string]string) {
	id, _ := strconv.ParseInt(p["message_id"], 10, 64)
	chat, _ := strconv.ParseInt(p["chat_id"], 10, 64)
	buttons := keyboard(p["reply_markup"])
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.sent {
		if m := &s.sent[i]; m.ID == id && m.ChatID == chat && !m.Deleted {
			if len(m.Buttons) == 0 && len(buttons) == 0 {
				writeErrorLocked(w, http.StatusBadRequest, "Bad Request: message is not modified")
				return
			}
			m.Buttons = buttons
			writeResult(w, map[string]any{"message_id": m.ID, "date": time.Now().Unix(), "text": m.Text,
				"chat": map[string]any{"id": chat, "type": chatType(chat)}})
			return
		}
	}
	writeErrorLocked(w, http.StatusBadRequest, "Bad Request: message to edit not found")
}

func (s *Server) deleteMessage(w http.ResponseWriter, p map[string]string) {
	id, _ := strconv.ParseInt(p["message_id"], 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.sent {
		if s.sent[i].ID == id {
			s.sent[i].Deleted = true
		}
	}
	writeResult(w, true)
}

func writeErrorLocked(w http.ResponseWriter, status int, desc string) { writeError(w, status, desc, 0) }

// keyboard reads an inline keyboard's buttons from reply_markup.
func keyboard(markup string) [][]Button {
	if markup == "" {
		return nil
	}
	var m struct {
		InlineKeyboard [][]struct {
			Text         string `json:"text"`
			CallbackData string `json:"callback_data"`
		} `json:"inline_keyboard"`
	}
	if json.Unmarshal([]byte(markup), &m) != nil {
		return nil
	}
	var out [][]Button
	for _, row := range m.InlineKeyboard {
		var r []Button
		for _, b := range row {
			r = append(r, Button{Text: b.Text, Data: b.CallbackData})
		}
		out = append(out, r)
	}
	return out
}
