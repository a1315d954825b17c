package fakediscord

import (
	"context"
	"net/http"
)

// flagEphemeral marks a message only its interaction's user sees.
const flagEphemeral = 1 << 6

// replyLocked is an interaction's message: shown to its user alone when
// ephemeral, else sent in its channel.
func (s *Server) replyLocked(it *interaction, b messageBody) (Message, string) {
	bs, bad := checkBody(b)
	if bad != "" {
		return Message{}, bad
	}
	m := &Message{ID: s.snowflakeLocked(), ChannelID: it.channel, Author: BotID, Buttons: bs, AllowedMentions: string(b.AllowedMentions)}
	if b.Content != nil {
		m.Content = *b.Content
	}
	if b.Flags&flagEphemeral != 0 {
		m.ReplyTo = it.message
		s.ephemerals = append(s.ephemerals, *m)
		return *m, ""
	}
	s.messages[m.ID] = m
	s.sent = append(s.sent, m)
	s.dispatchLocked("MESSAGE_CREATE", s.messageJSONLocked(m, false))
	return *m, ""
}

// followup is Create Followup Message: after the interaction's first
// response, with its token.
func (s *Server) followup(w http.ResponseWriter, token string, b messageBody) {
	it := s.interactionByToken(token)
	if it == nil || !it.answered {
		writeError(w, http.StatusNotFound, codeUnknownInteraction, "Unknown Webhook")
		return
	}
	m, bad := s.replyLocked(it, b)
	if bad != "" {
		writeError(w, http.StatusBadRequest, codeInvalidForm, "Invalid Form Body: "+bad)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": m.ID, "channel_id": m.ChannelID, "content": m.Content, "flags": b.Flags})
}

// editOriginal is Edit Original Interaction Response: for a button's
// interaction, the message the button is on.
func (s *Server) editOriginal(w http.ResponseWriter, token string, b messageBody) {
	it := s.interactionByToken(token)
	if it == nil || !it.answered {
		writeError(w, http.StatusNotFound, codeUnknownInteraction, "Unknown Webhook")
		return
	}
	m := s.messages[it.message]
	if bad := s.applyEditLocked(m, b); bad != "" {
		writeError(w, http.StatusBadRequest, codeInvalidForm, "Invalid Form Body: "+bad)
		return
	}
	writeJSON(w, http.StatusOK, s.messageJSONLocked(m, false))
}

// Answered reports whether the interaction of a press on message
// messageID was answered, each press in order.
func (s *Server) Answered(messageID string) []bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []bool
	for _, it := range s.interactions {
		if it.message == messageID {
			out = append(out, it.answered)
		}
	}
	return out
}

// HoldAfter lets the next n calls of a route through and holds the ones
// after them unanswered until Release (see fakewire.Hold).
func (s *Server) HoldAfter(route string, n int) { s.hold.After(route, n) }

// Held is how many calls are held now.
func (s *Server) Held() int { return s.hold.Held() }

// WaitHeld waits until ok holds for the number of held calls, or ctx ends.
func (s *Server) WaitHeld(ctx context.Context, ok func(int) bool) (int, error) {
	return s.hold.WaitHeld(ctx, ok)
}

// Release ends the hold: the held calls go on, and later ones pass.
func (s *Server) Release() { s.hold.Release() }
