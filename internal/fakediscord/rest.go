package fakediscord

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// Discord's limits the fake enforces.
const (
	contentLimit  = 2000
	customIDLimit = 100
	labelLimit    = 80
	rowsLimit     = 5
	buttonsPerRow = 5
	// interactionWindow is how long an interaction waits for its first
	// response.
	interactionWindow = 3 * time.Second
)

// Discord's JSON error codes the fake answers with.
const (
	codeUnknownChannel     = 10003
	codeUnknownMessage     = 10008
	codeUnknownInteraction = 10062
	codeEmptyMessage       = 50006
	codeNotAuthor          = 50005
	codeInvalidForm        = 50035
	codeAlreadyAnswered    = 40060
	codeThreadExists       = 160004
)

// messageBody is what Create and Edit Message, and an interaction's
// responses, carry.
type messageBody struct {
	Content         *string         `json:"content"`
	Components      *[]row          `json:"components"`
	Flags           int             `json:"flags"`
	AllowedMentions json.RawMessage `json:"allowed_mentions"`
	Reference       *struct {
		MessageID string `json:"message_id"`
	} `json:"message_reference"`
}

type row struct {
	Type       int `json:"type"`
	Components []struct {
		Type     int    `json:"type"`
		Label    string `json:"label"`
		CustomID string `json:"custom_id"`
	} `json:"components"`
}

// buttons reads the components' buttons; "" or what is wrong.
func buttons(rows *[]row) ([][]Button, string) {
	if rows == nil {
		return nil, ""
	}
	if len(*rows) > rowsLimit {
		return nil, "components: more than 5 action rows"
	}
	var out [][]Button
	for _, r := range *rows {
		if r.Type != 1 || len(r.Components) == 0 || len(r.Components) > buttonsPerRow {
			return nil, "components: an action row holds 1 to 5 components"
		}
		var bs []Button
		for _, c := range r.Components {
			if c.Type != 2 || c.CustomID == "" || len(c.CustomID) > customIDLimit || utf8.RuneCountInString(c.Label) > labelLimit {
				return nil, "components: a button needs a custom_id of at most 100 characters and a label of at most 80"
			}
			bs = append(bs, Button{Label: c.Label, CustomID: c.CustomID})
		}
		out = append(out, bs)
	}
	return out, ""
}

// serveREST routes the REST API.
func (s *Server) serveREST(w http.ResponseWriter, r *http.Request) {
	p := splitPath(r.URL.Path)
	route, auth := routeOf(r.Method, p)
	if route == "" {
		writeError(w, http.StatusNotFound, 0, "404: Not Found")
		return
	}
	if auth && r.Header.Get("Authorization") != "Bot "+s.Token {
		writeError(w, http.StatusUnauthorized, 0, "401: Unauthorized")
		return
	}
	// The body is read first: the server notices a client that went
	// away only once it was.
	raw, files, tooLarge, err := readBody(r)
	if !s.hold.Admit(r, route) {
		return // held, and its client went away: never taken
	}
	if tooLarge {
		writeError(w, http.StatusRequestEntityTooLarge, codeEntityTooLarge, "Request entity too large")
		return
	}
	s.mu.Lock()
	if errs := s.failNext[route]; len(errs) > 0 {
		s.failNext[route] = errs[1:]
		s.mu.Unlock()
		if errs[0] == "ratelimited" {
			w.Header().Set("Retry-After", "1")
			w.Header().Set("X-RateLimit-Scope", "user")
			writeJSON(w, http.StatusTooManyRequests, map[string]any{"message": "You are being rate limited.", "retry_after": 1.0, "global": false})
			return
		}
		writeError(w, http.StatusInternalServerError, 0, "500: Internal Server Error")
		return
	}
	s.mu.Unlock()
	var body messageBody
	var callback struct {
		Type int         `json:"type"`
		Data messageBody `json:"data"`
	}
	into := any(&body)
	if route == "interactionCallback" {
		into = &callback
	}
	if err != nil || len(raw) > 0 && json.Unmarshal(raw, into) != nil {
		writeError(w, http.StatusBadRequest, codeInvalidForm, "Invalid Form Body")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch route {
	case "getCurrentUser":
		writeJSON(w, http.StatusOK, map[string]any{"id": BotID, "username": s.BotName, "discriminator": "0", "bot": true, "verified": true})
	case "getGateway":
		writeJSON(w, http.StatusOK, map[string]any{"url": "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/gateway", "shards": 1,
			"session_start_limit": map[string]any{"total": 1000, "remaining": 999, "reset_after": 14400000, "max_concurrency": 1}})
	case "getChannel":
		s.getChannel(w, p[1])
	case "triggerTyping":
		if s.channels[p[1]] == nil {
			writeError(w, http.StatusNotFound, codeUnknownChannel, "Unknown Channel")
			return
		}
		w.WriteHeader(http.StatusNoContent)
	case "createMessage":
		s.createMessage(w, p[1], body, files)
	case "editMessage":
		s.editMessage(w, p[1], p[3], body)
	case "startThread":
		s.startThread(w, p[1], p[3])
	case "interactionCallback":
		s.interactionCallback(w, p[1], p[2], callback.Type, callback.Data)
	case "followup":
		s.followup(w, p[2], body)
	case "editOriginal":
		s.editOriginal(w, p[2], body)
	}
}

// routeOf names the route of a request, and says whether it takes the
// bot's token (an interaction's own routes take the interaction's token
// in the path instead).
func routeOf(method string, p []string) (string, bool) {
	switch {
	case method == http.MethodGet && len(p) == 2 && p[0] == "users" && p[1] == "@me":
		return "getCurrentUser", true
	case method == http.MethodGet && p[0] == "gateway" && (len(p) == 1 || len(p) == 2 && p[1] == "bot"):
		return "getGateway", len(p) == 2
	case method == http.MethodGet && len(p) == 2 && p[0] == "channels":
		return "getChannel", true
	case method == http.MethodPost && len(p) == 3 && p[0] == "channels" && p[2] == "typing":
		return "triggerTyping", true
	case method == http.MethodPost && len(p) == 3 && p[0] == "channels" && p[2] == "messages":
		return "createMessage", true
	case method == http.MethodPatch && len(p) == 4 && p[0] == "channels" && p[2] == "messages":
		return "editMessage", true
	case method == http.MethodPost && len(p) == 5 && p[0] == "channels" && p[2] == "messages" && p[4] == "threads":
		return "startThread", true
	case method == http.MethodPost && len(p) == 4 && p[0] == "interactions" && p[3] == "callback":
		return "interactionCallback", false
	case method == http.MethodPost && len(p) == 3 && p[0] == "webhooks":
		return "followup", false
	case method == http.MethodPatch && len(p) == 5 && p[0] == "webhooks" && p[3] == "messages" && p[4] == "@original":
		return "editOriginal", false
	}
	return "", false
}

func (s *Server) getChannel(w http.ResponseWriter, id string) {
	c := s.channels[id]
	if c == nil {
		writeError(w, http.StatusNotFound, codeUnknownChannel, "Unknown Channel")
		return
	}
	out := map[string]any{"id": c.ID, "type": c.typ}
	switch c.typ {
	case typeDM:
		out["recipients"] = []any{map[string]any{"id": c.Recipient, "username": "user" + c.Recipient, "discriminator": "0"}}
	case typeThread:
		out["guild_id"], out["parent_id"], out["name"] = GuildID, c.Parent, "thread"
	default:
		out["guild_id"], out["name"] = GuildID, "general"
	}
	writeJSON(w, http.StatusOK, out)
}

// checkBody is what is wrong with a new message's body ("" for nothing),
// and its buttons.
func checkBody(b messageBody) ([][]Button, string) {
	bs, bad := buttons(b.Components)
	switch {
	case bad != "":
		return nil, bad
	case b.Content != nil && utf8.RuneCountInString(*b.Content) > contentLimit:
		return nil, "content: Must be 2000 or fewer in length."
	}
	return bs, ""
}

func (s *Server) createMessage(w http.ResponseWriter, channelID string, b messageBody, files []File) {
	if s.channels[channelID] == nil {
		writeError(w, http.StatusNotFound, codeUnknownChannel, "Unknown Channel")
		return
	}
	bs, bad := checkBody(b)
	if bad != "" {
		writeError(w, http.StatusBadRequest, codeInvalidForm, "Invalid Form Body: "+bad)
		return
	}
	if (b.Content == nil || *b.Content == "") && len(bs) == 0 && len(files) == 0 {
		writeError(w, http.StatusBadRequest, codeEmptyMessage, "Cannot send an empty message")
		return
	}
	if len(files) > 10 {
		writeError(w, http.StatusBadRequest, codeInvalidForm, "Invalid Form Body: files: Must be 10 or fewer in length.")
		return
	}
	m := &Message{ID: s.snowflakeLocked(), ChannelID: channelID, Author: BotID, Buttons: bs, AllowedMentions: string(b.AllowedMentions)}
	if b.Content != nil {
		m.Content = *b.Content
	}
	if b.Reference != nil {
		if s.messages[b.Reference.MessageID] == nil {
			writeError(w, http.StatusBadRequest, codeInvalidForm, "Invalid Form Body: message_reference: Unknown message")
			return
		}
		m.ReplyTo = b.Reference.MessageID
	}
	m.Files = s.attachLocked(channelID, files)
	s.messages[m.ID] = m
	s.sent = append(s.sent, m)
	payload := s.messageJSONLocked(m, false)
	// The bot receives its own messages, as every member of the channel does.
	s.dispatchLocked("MESSAGE_CREATE", payload)
	writeJSON(w, http.StatusOK, payload)
}

func (s *Server) editMessage(w http.ResponseWriter, channelID, id string, b messageBody) {
	m := s.messages[id]
	if m == nil || m.ChannelID != channelID {
		writeError(w, http.StatusNotFound, codeUnknownMessage, "Unknown Message")
		return
	}
	if m.Author != BotID {
		writeError(w, http.StatusForbidden, codeNotAuthor, "Cannot edit a message authored by another user")
		return
	}
	if bad := s.applyEditLocked(m, b); bad != "" {
		writeError(w, http.StatusBadRequest, codeInvalidForm, "Invalid Form Body: "+bad)
		return
	}
	writeJSON(w, http.StatusOK, s.messageJSONLocked(m, false))
}

// applyEditLocked edits m as b says; "" or what is wrong.
func (s *Server) applyEditLocked(m *Message, b messageBody) string {
	bs, bad := checkBody(b)
	if bad != "" {
		return bad
	}
	if b.Content != nil {
		m.Content = *b.Content
	}
	if b.Components != nil {
		m.Buttons = bs
	}
	m.Edits++
	m.EditTimes = append(m.EditTimes, time.Now())
	return ""
}

func (s *Server) startThread(w http.ResponseWriter, channelID, messageID string) {
	parent, m := s.channels[channelID], s.messages[messageID]
	switch {
	case parent == nil || parent.typ != typeText:
		writeError(w, http.StatusNotFound, codeUnknownChannel, "Unknown Channel")
		return
	case m == nil || m.ChannelID != channelID:
		writeError(w, http.StatusNotFound, codeUnknownMessage, "Unknown Message")
		return
	case s.channels[messageID] != nil:
		writeError(w, http.StatusBadRequest, codeThreadExists, "A thread has already been created for this message")
		return
	}
	// A thread started from a message has the message's id.
	s.channels[messageID] = &channel{ID: messageID, typ: typeThread, Parent: channelID}
	writeJSON(w, http.StatusCreated, map[string]any{"id": messageID, "type": typeThread, "guild_id": GuildID, "parent_id": channelID, "name": "thread"})
}

// interactionByToken finds a live interaction by its token.
func (s *Server) interactionByToken(token string) *interaction {
	for _, it := range s.interactions {
		if it.token == token && time.Since(it.at) < 15*time.Minute {
			return it
		}
	}
	return nil
}

func (s *Server) interactionCallback(w http.ResponseWriter, id, token string, typ int, data messageBody) {
	it := s.interactions[id]
	if it == nil || it.token != token || time.Since(it.at) > interactionWindow {
		writeError(w, http.StatusNotFound, codeUnknownInteraction, "Unknown interaction")
		return
	}
	if it.answered {
		writeError(w, http.StatusBadRequest, codeAlreadyAnswered, "Interaction has already been acknowledged.")
		return
	}
	switch typ {
	case 4: // a message in reply
		if _, bad := s.replyLocked(it, data); bad != "" {
			writeError(w, http.StatusBadRequest, codeInvalidForm, "Invalid Form Body: "+bad)
			return
		}
		it.answered = true
	case 6: // deferred: the message is updated later
		it.answered = true
	case 7: // the message the button is on, updated
		if bad := s.applyEditLocked(s.messages[it.message], data); bad != "" {
			writeError(w, http.StatusBadRequest, codeInvalidForm, "Invalid Form Body: "+bad)
			return
		}
		it.answered = true
	default:
		writeError(w, http.StatusBadRequest, codeInvalidForm, "Invalid Form Body: type")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
