package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// A turn's reply is streamed into one draft message while the turn runs:
// the draft is sent when there is first something to show and then edited
// in place, at most once every editEvery in a chat (Telegram's rate for a
// chat), with the reply text so far and a status line for the tool that
// runs now. The reply activity edits the draft into the first part of the
// final reply, so the chat keeps one message for it.
//
// The draft shows the text since the last tool call or wait notice only:
// text the model writes before calling a tool belongs to that call (the
// final answer is the text after the last call). A message shown below the
// draft (an approval, a question) ends it: what follows goes to a new
// draft, under it, so the reply is never above the question it follows.
// Each draft is recorded in the outbox (draftKey), so a retried activity
// keeps editing the message it sent.
const (
	// editEvery is the least time between two sends or edits of a chat's
	// messages by the draft.
	editEvery = time.Second
	// draftSettle is how long a change waits before it is shown: a tool
	// that ends at once, or text that follows at once, is not shown apart.
	draftSettle = 400 * time.Millisecond
	// draftTextMax is how much of the reply's Markdown a draft with a status
	// line shows (the status line must fit in the same message).
	draftTextMax = 3000
	// statusArgsMax is how many characters of a tool's arguments the status
	// line shows.
	statusArgsMax = 48
)

// draftKey is the outbox key of a turn's draft: gen counts the messages
// shown below earlier drafts (approvals and questions).
func draftKey(platform, account, turnID string, gen int) string {
	key := fmt.Sprintf("%s/%s/%s/draft", platform, account, turnID)
	if gen > 0 {
		key += fmt.Sprintf("/%d", gen)
	}
	return key
}

// chatRate spaces the draft's sends and edits in each chat: one every
// editEvery at most. The zero value is ready; safe for concurrent use.
type chatRate struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// next is when chat may be sent to or edited next: now, or later.
func (r *chatRate) next(chat string, now time.Time) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if at := r.last[chat].Add(editEvery); at.After(now) {
		return at
	}
	return now
}

// take records a send or edit in chat at now.
func (r *chatRate) take(chat string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		r.last = map[string]time.Time{}
	}
	if len(r.last) > 1000 {
		for c, t := range r.last {
			if now.Sub(t) > editEvery {
				delete(r.last, c)
			}
		}
	}
	r.last[chat] = now
}

// wait waits until chat may be edited (at most editEvery, or until ctx
// ends) and takes it.
func (r *chatRate) wait(ctx context.Context, chat string) {
	if d := time.Until(r.next(chat, time.Now())); d > 0 {
		sleep(ctx, min(d, editEvery))
	}
	r.take(chat, time.Now())
}

// runningTool is a tool call the turn runs now.
type runningTool struct {
	id, name, args string
}

// draft is what a turn's draft message says: the reply text since the last
// tool call or wait notice, the tools running, the latest wait notice.
type draft struct {
	text  string
	tools []runningTool
	wait  string
}

// apply takes one live event and reports whether the draft changed.
func (d *draft) apply(kind, data string) bool {
	switch kind {
	case events.KindDelta:
		d.text += data
		d.wait = ""
		return data != ""
	case events.KindToolStart, events.KindToolEnd:
		var e struct {
			ID   string `json:"id"`
			Name string `json:"name"`
			Args string `json:"args"`
		}
		if json.Unmarshal([]byte(data), &e) != nil {
			return false
		}
		d.text, d.wait = "", ""
		kept := d.tools[:0]
		for _, t := range d.tools {
			if t.id != e.ID {
				kept = append(kept, t)
			}
		}
		d.tools = kept
		if kind == events.KindToolStart {
			d.tools = append(d.tools, runningTool{id: e.ID, name: e.Name, args: e.Args})
		}
		return true
	case events.KindWait:
		d.text, d.wait = "", data
		return true
	case events.KindAttempt:
		// A model call's attempt streams its text from the start: the
		// draft shows that attempt's text alone.
		d.text = ""
		return true
	case events.KindTaskStart, events.KindTaskEnd:
		// A running task shows like a running tool: its goal.
		var t turnapi.TaskEvent
		if json.Unmarshal([]byte(data), &t) != nil {
			return false
		}
		task, _ := json.Marshal(map[string]string{"id": "task:" + t.Session, "name": "task", "args": t.Goal})
		return d.apply(map[string]string{events.KindTaskStart: events.KindToolStart, events.KindTaskEnd: events.KindToolEnd}[kind], string(task))
	}
	return false
}

// status is the draft's status line, Markdown: the tool started last that
// still runs (and how many others do), or the latest wait notice.
func (d *draft) status() string {
	if n := len(d.tools); n > 0 {
		t := d.tools[n-1]
		line := statusLine(t.name, t.args)
		if n > 1 {
			line += fmt.Sprintf(" (+%d more)", n-1)
		}
		return line
	}
	if w := compact(d.wait, 80); w != "" {
		return "⏳ " + escapeMarkdown(w)
	}
	return ""
}

// render is the draft as p shows it, one part; "" when there is nothing to
// show. Without a status line it is the first part of the text, as the
// final reply's first part will be; with one, the text is cut to
// draftTextMax and the status line follows it (two rendered parts
// concatenated: each is valid on its own).
func (d *draft) render(p Platform) string {
	st := d.status()
	text := strings.TrimSpace(d.text)
	if st == "" {
		if text == "" {
			return ""
		}
		return p.Parts(d.text)[0]
	}
	line := p.Parts(st)[0]
	if text == "" {
		return line
	}
	if cut := []rune(text); len(cut) > draftTextMax {
		text = string(cut[:draftTextMax]) + "…"
	}
	return p.Parts(text)[0] + "\n\n" + line
}

// statusLine is the Markdown line shown while a tool runs: "⏳ terminal:
// echo hi", its arguments cut short and escaped (they are the model's
// text). Pure.
func statusLine(name, args string) string {
	name = cmp.Or(compact(name, 40), "tool")
	line := "⏳ " + escapeMarkdown(name)
	if a := argSummary(args); a != "" {
		line += ": " + escapeMarkdown(a)
	}
	return line
}

// summaryKeys are the arguments that say best what a call does, in order.
var summaryKeys = []string{"command", "cmd", "path", "file_path", "query", "url", "pattern", "name"}

// argSummary is a tool call's arguments in a few words: the most telling
// string argument (summaryKeys, else the first in name order) or, when the
// arguments are not a JSON object, their text; on one line, cut to
// statusArgsMax characters. Pure.
func argSummary(args string) string {
	var obj map[string]any
	s := args
	if json.Unmarshal([]byte(args), &obj) == nil {
		s = ""
		for _, k := range summaryKeys {
			if v, ok := obj[k].(string); ok && strings.TrimSpace(v) != "" {
				s = v
				break
			}
		}
		if s == "" {
			keys := slices.Sorted(maps.Keys(obj))
			for _, k := range keys {
				if v, ok := obj[k].(string); ok && strings.TrimSpace(v) != "" {
					s = v
					break
				}
			}
		}
	} else if strings.TrimSpace(args) == "{}" {
		s = ""
	}
	return compact(s, statusArgsMax)
}

// compact puts s on one line (runs of white space and control characters
// become one space; invalid UTF-8 is dropped) and cuts it to max
// characters, marking the cut with "…". Pure.
func compact(s string, max int) string {
	s = strings.ToValidUTF8(s, "")
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	out := b.String()
	if utf8.RuneCountInString(out) > max {
		out = strings.TrimSpace(string([]rune(out)[:max-1])) + "…"
	}
	return out
}

// escapeMarkdown makes s literal text in Markdown: every ASCII punctuation
// character is backslash-escaped (CommonMark allows it for each). Pure.
func escapeMarkdown(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf && (unicode.IsPunct(r) || unicode.IsSymbol(r)) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// streamer keeps a turn's draft message in its chat.
type streamer struct {
	a      *chatActivities
	p      Platform
	in     workflows.ChatMessageInput
	turnID string

	gen   int       // messages shown below earlier drafts
	d     draft     // what the draft says now
	msgID string    // the draft's message ("" before it is sent)
	shown string    // what the draft message shows
	since time.Time // when d changed first since it was shown (zero: no change)
	dead  bool      // the draft message cannot be edited any more
}

// follow follows a turn's live events while it runs: it keeps the turn's
// draft (see editEvery) and shows what the turn waits for (showWait). It is
// the turn's one reader of its events.
func (a *chatActivities) follow(ctx context.Context, in workflows.ChatMessageInput, turnID string) {
	p := a.g.platform(in.Platform)
	if p == nil {
		return
	}
	s := &streamer{a: a, p: p, in: in, turnID: turnID}
	_, editless := p.(Editless)
	evs := events.Tail(ctx, a.g.rt.Store, turnID, 0, 200*time.Millisecond)
	var due <-chan time.Time
	for {
		select {
		case ev, ok := <-evs:
			if !ok {
				return
			}
			if a.showWait(ctx, p, in, turnID, ev) {
				// A message below the draft: what follows goes to a new one.
				s.gen++
				s.d, s.msgID, s.shown, s.since, s.dead = draft{}, "", "", time.Time{}, false
				due = nil
				continue
			}
			if editless {
				continue // no draft: the reply goes once it is whole
			}
			if s.d.apply(ev.Kind, ev.Data) && s.since.IsZero() {
				s.since = time.Now()
			}
		case <-due:
			due = nil
			s.flush(ctx)
		}
		if !s.since.IsZero() && due == nil && !s.dead {
			at := s.since.Add(draftSettle)
			if n := a.rate.next(in.ChatID, time.Now()); n.After(at) {
				at = n
			}
			due = time.After(time.Until(at))
		}
	}
}

// flush shows the draft as it is now: it sends the draft message the first
// time (or finds the one a previous attempt sent) and edits it after.
// Failures are logged: a draft never fails the turn's reply.
func (s *streamer) flush(ctx context.Context) {
	s.since = time.Time{}
	part := s.d.render(s.p)
	if part == "" || part == s.shown {
		return
	}
	chat := s.in.ChatID
	if s.msgID == "" {
		key := draftKey(s.in.Platform, s.in.Account, s.turnID, s.gen)
		pace := func() { s.a.rate.take(chat, time.Now()) }
		id, fresh, err := s.a.sendOnce(ctx, s.p, key, Outgoing{ChatID: chat, ReplyTo: s.in.MessageID}, part, pace)
		if err != nil {
			s.a.g.logger.Debug("gateway: send the draft", "platform", s.in.Platform, "error", err)
		}
		if id == "" {
			return
		}
		s.msgID = id
		if fresh {
			s.shown = part
			return
		}
	}
	s.a.rate.take(chat, time.Now())
	if err := s.p.Edit(ctx, chat, s.msgID, part, nil); err != nil {
		s.dead = errors.Is(err, ErrNotEditable)
		s.a.g.logger.Debug("gateway: edit the draft", "platform", s.in.Platform, "error", err)
		return
	}
	s.shown = part
}

// draftOf finds the turn's current draft message, if it has one: the one
// sent after the last message shown below a draft (an approval or a
// question).
func (a *chatActivities) draftOf(ctx context.Context, in workflows.ChatReplyInput) (string, bool, error) {
	st := a.g.rt.Store
	gen := 0
	for after := int64(0); ; {
		evs, err := st.EventsAfter(ctx, in.TurnID, after, models.DefaultEventsLimit)
		if err != nil {
			return "", false, fmt.Errorf("read the turn's events: %w", err)
		}
		for _, ev := range evs {
			if ev.Kind == events.KindApproval || ev.Kind == events.KindQuestion {
				gen++
			}
			after = ev.ID
		}
		if len(evs) < models.DefaultEventsLimit {
			break
		}
	}
	return st.Sent(ctx, draftKey(in.Platform, in.Account, in.TurnID, gen))
}
