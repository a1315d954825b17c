package gateway

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// Button data: "ap:<choice>:<call>" decides an approval, "q:<n>:<call>"
// picks a question's choice n; <call> is callRef of the call id (Telegram
// allows 64 bytes of data).
const (
	approvalPrefix = "ap:"
	questionPrefix = "q:"
)

// callRef is a short, stable digest of a tool call id, for outbox keys.
// Pure.
func callRef(callID string) string {
	sum := sha256.Sum256([]byte(callID))
	return hex.EncodeToString(sum[:8])
}

// buttonSecret names the installation's secret that keys button
// references.
const buttonSecret = "gateway-buttons"

// buttonRef is what a button carries to name a tool call: an HMAC-SHA256
// of the call's id under the installation's secret (shared by every
// gateway of the database), cut to 16 bytes. Whoever has not seen the
// message cannot make it, whatever call id the model chose: on a platform
// whose senders can be forged (email, SMS), sending it back is what
// decides. (The call, not its turn: a task's approval is shown by the
// turn that started the task and decided on the task's own turn.)
func (g *Gateway) buttonRef(ctx context.Context, callID string) (string, error) {
	g.secretMu.Lock()
	defer g.secretMu.Unlock()
	if g.secret == nil {
		key, err := g.rt.Store.Secret(ctx, buttonSecret)
		if err != nil {
			return "", err
		}
		g.secret = key
	}
	m := hmac.New(sha256.New, g.secret)
	m.Write([]byte(callID))
	return hex.EncodeToString(m.Sum(nil)[:16]), nil
}

// approvalButtons are the choices offered for a command whose call ref
// names. Pure.
func approvalButtons(ref string) [][]Button {
	return [][]Button{
		{{Text: "Approve once", Data: approvalPrefix + "once:" + ref}, {Text: "For this session", Data: approvalPrefix + "session:" + ref}},
		{{Text: "Always", Data: approvalPrefix + "always:" + ref}, {Text: "Deny", Data: approvalPrefix + "deny:" + ref}},
	}
}

// questionButtons offer a question's choices, one a row, for the call
// ref names. Pure.
func questionButtons(q turnapi.QuestionEvent, ref string) [][]Button {
	var rows [][]Button
	for i, c := range q.Choices {
		if i >= 10 {
			break
		}
		rows = append(rows, []Button{{Text: c, Data: fmt.Sprintf("%s%d:%s", questionPrefix, i, ref)}})
	}
	return rows
}

// TextChoices says in words what rows of buttons offer, for a platform
// that has no buttons: the command that makes each approval choice, or a
// question's choices, numbered, to answer with. Pure.
func TextChoices(rows [][]Button) string {
	var commands, choices []string
	for _, row := range rows {
		for _, b := range row {
			kind, choice, _, ok := parseButton(b.Data)
			switch {
			case !ok:
			case kind == "ap" && choice == "once":
				commands = append(commands, "/approve ("+b.Text+")")
			case kind == "ap" && choice == "deny":
				commands = append(commands, "/deny")
			case kind == "ap":
				commands = append(commands, "/approve "+choice+" ("+b.Text+")")
			default:
				choices = append(choices, b.Text)
			}
		}
	}
	switch {
	case len(commands) > 0:
		return "Reply " + strings.Join(commands, ", ") + "."
	case len(choices) > 0:
		return "Reply with one of: " + strings.Join(choices, ", ") + " (or an answer of your own)."
	}
	return ""
}

// CodeChoices says how to answer buttons on a platform whose senders can
// be forged (CodedApprovals): an approval's choices are code lines (the
// button's data, which names its one call and only the message's reader
// has), to send back as the first line; a question's choices are words
// (TextChoices). Pure.
func CodeChoices(rows [][]Button) string {
	var lines []string
	for _, row := range rows {
		for _, b := range row {
			if strings.HasPrefix(b.Data, approvalPrefix) {
				lines = append(lines, "    "+b.Data+"    "+b.Text)
			}
		}
	}
	if len(lines) == 0 {
		return TextChoices(rows)
	}
	return "To decide, answer with one of these lines as the first line of your reply:\n\n" + strings.Join(lines, "\n")
}

// IsButtonData reports whether s is the data of one of the gateway's
// buttons ("ap:<choice>:<ref>", "q:<n>:<ref>"): what a platform without
// buttons may take as a press when its user sends it back. Pure.
func IsButtonData(s string) bool {
	_, _, _, ok := parseButton(s)
	return ok && !strings.ContainsAny(s, " \t")
}

// parseButton reads a button's data: its kind ("ap" or "q"), what it
// chose and the call it is for. Pure.
func parseButton(data string) (kind, choice, ref string, ok bool) {
	kind, rest, ok := strings.Cut(data, ":")
	if !ok || (kind != "ap" && kind != "q") {
		return "", "", "", false
	}
	choice, ref, ok = strings.Cut(rest, ":")
	return kind, choice, ref, ok && ref != ""
}

// showWait shows the chat what the turn waits for, when ev says it: a
// command to approve, with buttons, or a question, with its choices. Each
// is shown once (the outbox records it). It reports whether ev is such a
// wait (shown now or before).
func (a *chatActivities) showWait(ctx context.Context, p Platform, in workflows.ChatMessageInput, turnID string, ev models.Event) bool {
	var out Outgoing
	var callID, text string
	ref := func(callID string) string {
		r, err := a.g.buttonRef(ctx, callID)
		if err != nil {
			a.g.logger.Warn("gateway: make the buttons of a wait", "platform", in.Platform, "error", err)
		}
		return r
	}
	switch ev.Kind {
	case events.KindApproval:
		var e turnapi.ApprovalEvent
		if json.Unmarshal([]byte(ev.Data), &e) != nil {
			return true
		}
		callID = e.CallID
		text = fmt.Sprintf("Approve this command?\n\n```\n%s\n```\n%s", e.Command, e.Reason)
		r := ref(e.CallID)
		if r == "" {
			return true
		}
		out = Outgoing{ChatID: in.ChatID, Buttons: approvalButtons(r)}
	case events.KindQuestion:
		var e turnapi.QuestionEvent
		if json.Unmarshal([]byte(ev.Data), &e) != nil {
			return true
		}
		callID = e.CallID
		text = e.Question
		if len(e.Choices) == 0 {
			text += "\n\n(answer with your next message)"
		}
		r := ref(e.CallID)
		if r == "" {
			return true
		}
		out = Outgoing{ChatID: in.ChatID, Buttons: questionButtons(e, r)}
	default:
		return false
	}
	key := fmt.Sprintf("%s/%s/%s/wait/%s", in.Platform, in.Account, turnID, callRef(callID))
	pace := func() { a.rate.take(in.ChatID, time.Now()) }
	if _, _, err := a.sendOnce(ctx, p, key, out, p.Parts(text)[0], pace); err != nil {
		a.g.logger.Warn("gateway: show what the turn waits for", "platform", in.Platform, "error", err)
	}
	return true
}

// Notices a press is answered with when it decides nothing.
const (
	noticeStale    = "This button is no longer current."
	noticeUnknown  = "This could not be checked just now; press it again."
	noticeStranger = "Only the people allowed to use this assistant can answer it."
)

// press carries out a press on an approval or question button: it
// decides the command the chat's running turn waits on (if the button is
// for that command), or answers its question. The press is answered with
// a notice, and once it decided, the buttons are taken off the message. A
// press that decides nothing leaves them: in a group they may be another
// member's to press.
func (g *Gateway) press(ctx context.Context, p Platform, u Update) error {
	notice, decided, err := g.decidePress(ctx, u)
	if err != nil {
		return err
	}
	if err := p.AnswerButton(ctx, u, notice, decided); err != nil {
		g.logger.Debug("gateway: answer a button press", "error", err)
	}
	return nil
}

// decidePress carries out what a press decides, if anything, and says
// so: notice is what its presser is told. An error is one of signalling
// the turn: the press comes again.
func (g *Gateway) decidePress(ctx context.Context, u Update) (notice string, decided bool, err error) {
	kind, choice, ref, ok := parseButton(u.Button)
	if !ok {
		return noticeStale, false, nil
	}
	pr, err := g.waiting(ctx, u)
	switch {
	case errors.Is(err, engine.ErrNoRunningTurn):
	case err != nil:
		g.logger.Warn("gateway: look up what a button is for", "error", err)
		return noticeUnknown, false, nil
	case kind == "ap" && pr.PendingApproval != nil && g.refIs(ctx, pr.PendingApproval.CallID, ref):
		c := turnapi.ApprovalChoice(choice)
		if !c.Known() {
			break
		}
		if err := g.rt.Decide(ctx, pr.TurnID, pr.PendingApproval.CallID, c); err != nil {
			return "", false, err
		}
		return map[turnapi.ApprovalChoice]string{turnapi.ChoiceOnce: "Approved once.", turnapi.ChoiceSession: "Approved for this session.",
			turnapi.ChoiceAlways: "Approved always.", turnapi.ChoiceDeny: "Denied."}[c], true, nil
	case kind == "q" && pr.PendingQuestion != nil && g.refIs(ctx, pr.PendingQuestion.CallID, ref):
		var n int
		if _, err := fmt.Sscan(choice, &n); err != nil || n < 0 || n >= len(pr.PendingQuestion.Choices) {
			break
		}
		if err := g.rt.Answer(ctx, pr.TurnID, pr.PendingQuestion.CallID, pr.PendingQuestion.Choices[n]); err != nil {
			return "", false, err
		}
		return "Answered: " + pr.PendingQuestion.Choices[n], true, nil
	}
	return noticeStale, false, nil
}

// refIs reports whether ref is the button reference of the call
// (compared in constant time).
func (g *Gateway) refIs(ctx context.Context, callID, ref string) bool {
	want, err := g.buttonRef(ctx, callID)
	return err == nil && hmac.Equal([]byte(want), []byte(ref))
}

// refusePress answers a stranger's press on a button: it decides
// nothing, and the buttons stay for those who may press them.
func (g *Gateway) refusePress(ctx context.Context, p Platform, u Update) {
	if err := p.AnswerButton(ctx, u, noticeStranger, false); err != nil {
		g.logger.Debug("gateway: answer a stranger's button press", "error", err)
	}
	g.logger.Info("gateway: a button press by a user who is not allowed", "platform", p.Name(), "user", u.User)
}

// decide answers /approve [session|always] and /deny for the command the
// chat's running turn waits on.
func (g *Gateway) decide(ctx context.Context, u Update, c turnapi.ApprovalChoice) (string, error) {
	pr, err := g.waiting(ctx, u)
	if err != nil || pr.PendingApproval == nil {
		return "No command is waiting for approval.", nil
	}
	if err := g.rt.Decide(ctx, pr.TurnID, pr.PendingApproval.CallID, c); err != nil {
		return "", err
	}
	if c == turnapi.ChoiceDeny {
		return "Denied: " + pr.PendingApproval.Command, nil
	}
	return "Approved: " + pr.PendingApproval.Command, nil
}

// answerPending gives text to the question the chat's running turn asked,
// if it asked one; ok reports whether it did.
func (g *Gateway) answerPending(ctx context.Context, u Update, text string) (bool, error) {
	pr, err := g.running(ctx, u)
	if err != nil || pr.PendingQuestion == nil {
		return false, nil
	}
	err = g.rt.Answer(ctx, pr.TurnID, pr.PendingQuestion.CallID, text)
	return err == nil, err
}
