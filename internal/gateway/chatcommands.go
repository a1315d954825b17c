package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/sessionview"
	"github.com/talaria-agent/talaria/internal/textline"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// commandFunc carries out a chat command and says what to answer ("":
// nothing, the command answered by other means).
type commandFunc func(g *Gateway, ctx context.Context, p Platform, u Update, c Command) (string, error)

// chatCommands are the commands' handlers, by name.
var chatCommands = map[string]commandFunc{
	"help":       func(*Gateway, context.Context, Platform, Update, Command) (string, error) { return HelpText(), nil },
	"stop":       (*Gateway).cmdStop,
	"steer":      (*Gateway).cmdSteerQueue,
	"queue":      (*Gateway).cmdSteerQueue,
	"status":     (*Gateway).cmdStatus,
	"approve":    (*Gateway).cmdApprove,
	"deny":       (*Gateway).cmdApprove,
	"new":        (*Gateway).cmdNew,
	"usage":      (*Gateway).cmdUsage,
	"model":      (*Gateway).cmdModel,
	"sessions":   (*Gateway).cmdSessions,
	"resume":     (*Gateway).cmdResume,
	"cron":       (*Gateway).cmdCron,
	"retry":      (*Gateway).cmdRetry,
	"undo":       (*Gateway).cmdUndo,
	"sethome":    (*Gateway).cmdSetHome,
	"compress":   (*Gateway).cmdCompress,
	"background": (*Gateway).cmdBackground,
	"goal":       (*Gateway).cmdGoal,
}

// command carries out a chat command and answers in the chat.
func (g *Gateway) command(ctx context.Context, p Platform, u Update, c Command) error {
	f := chatCommands[c.Name]
	answer := fmt.Sprintf("/%s is not available here yet (see /help).", c.Name)
	if f != nil {
		var err error
		answer, err = f(g, ctx, p, u, c)
		switch {
		case errors.Is(err, models.ErrOwned):
			// Another owner's session: the command is refused, once, not
			// retried.
			answer = notOwned
		case err != nil:
			return err
		}
	}
	if answer == "" {
		return nil
	}
	_, err := p.SendPart(ctx, Outgoing{ChatID: u.Chat.ID, ReplyTo: u.MessageID}, p.Parts(answer)[0])
	return err
}

func nothingRuns(err error) bool { return errors.Is(err, engine.ErrNoRunningTurn) || isNotFound(err) }

func (g *Gateway) cmdStop(ctx context.Context, _ Platform, u Update, _ Command) (string, error) {
	session, err := g.sessionOf(ctx, u)
	if err != nil {
		return "", err
	}
	_, err = g.rt.Interrupt(ctx, session, "stopped from the chat")
	switch {
	case nothingRuns(err):
		return "Nothing is running.", nil
	case err != nil:
		return "", err
	}
	return "Stopped.", nil
}

func (g *Gateway) cmdSteerQueue(ctx context.Context, p Platform, u Update, c Command) (string, error) {
	if c.Args == "" {
		return fmt.Sprintf("Usage: /%s TEXT", c.Name), nil
	}
	mode := workflows.BusySteer
	if c.Name == "queue" {
		mode = workflows.BusyQueue
	}
	return "", g.handOver(ctx, p, u, c.Args, mode, nil)
}

func (g *Gateway) cmdStatus(ctx context.Context, _ Platform, u Update, _ Command) (string, error) {
	pr, err := g.running(ctx, u)
	switch {
	case nothingRuns(err):
		return "Nothing is running.", nil
	case err != nil:
		return "", err
	}
	return sessionview.Running(pr), nil
}

func (g *Gateway) cmdApprove(ctx context.Context, p Platform, u Update, c Command) (string, error) {
	if _, coded := p.(CodedApprovals); coded {
		return "Here an approval is decided only by answering with one of the code lines of the approval's message (anyone can put a name on a message; only its reader has the code).", nil
	}
	choice := turnapi.ChoiceOnce
	switch {
	case c.Name == "deny":
		choice = turnapi.ChoiceDeny
	case c.Args == "session":
		choice = turnapi.ChoiceSession
	case c.Args == "always":
		choice = turnapi.ChoiceAlways
	case c.Args != "":
		return "Usage: /approve [session|always]", nil
	}
	return g.decide(ctx, u, choice)
}

func (g *Gateway) cmdNew(ctx context.Context, _ Platform, u Update, _ Command) (string, error) {
	c, err := g.chatOf(ctx, u)
	if err != nil {
		return "", err
	}
	if _, err := g.newSession(ctx, c, g.now()); err != nil {
		return "", err
	}
	return "New session: the conversation starts afresh.", nil
}

func (g *Gateway) cmdUsage(ctx context.Context, _ Platform, u Update, _ Command) (string, error) {
	session, err := g.sessionOf(ctx, u)
	if err != nil {
		return "", err
	}
	return sessionview.Usage(ctx, g.rt.Store, session)
}

func (g *Gateway) cmdModel(ctx context.Context, _ Platform, u Update, c Command) (string, error) {
	chat, err := g.chatOf(ctx, u)
	if err != nil {
		return "", err
	}
	if c.Args == "" {
		if chat.Model == "" {
			return "This chat uses the server's model.", nil
		}
		return "This chat's model: " + chat.Model + " (/model default goes back to the server's).", nil
	}
	name := c.Args
	if name == "default" {
		name = ""
	}
	if !g.modelOffered(name) {
		return fmt.Sprintf("%q is not a model this server offers (its model, or a fallback's).", c.Args), nil
	}
	chat.Model = name
	if err := g.rt.Store.SaveChat(ctx, chat); err != nil {
		return "", err
	}
	if name == "" {
		return "This chat uses the server's model again.", nil
	}
	return "This chat's turns use " + name + " from now on.", nil
}

// modelOffered reports whether a chat may choose name: the configured
// model or a fallback provider's ("": the server's).
func (g *Gateway) modelOffered(name string) bool {
	return name == "" || name == g.cfg.Model.Name ||
		slices.ContainsFunc(g.cfg.FallbackProviders, func(p config.Provider) bool { return p.Model == name })
}

func (g *Gateway) cmdSessions(ctx context.Context, _ Platform, u Update, _ Command) (string, error) {
	chat, err := g.chatOf(ctx, u)
	if err != nil {
		return "", err
	}
	lines := []string{"This chat's sessions (newest first; /resume ID goes back to one):"}
	for n := chat.Generation; n >= 0 && n > chat.Generation-10; n-- {
		id := generationID(chat.Key, n)
		mark := ""
		if id == chat.SessionID {
			mark = " (current)"
		}
		lines = append(lines, "• "+id+mark)
	}
	return strings.Join(lines, "\n"), nil
}

func (g *Gateway) cmdResume(ctx context.Context, _ Platform, u Update, c Command) (string, error) {
	chat, err := g.chatOf(ctx, u)
	if err != nil {
		return "", err
	}
	// Only this chat's own sessions: a chat never reaches another's.
	for n := chat.Generation; n >= 0; n-- {
		if id := generationID(chat.Key, n); id == c.Args {
			chat.Previous, chat.SessionID, chat.LastActive = chat.SessionID, id, g.now()
			if err := g.rt.Store.SaveChat(ctx, chat); err != nil {
				return "", err
			}
			return "Resumed " + id + ".", nil
		}
	}
	return "Usage: /resume ID, with an ID /sessions lists.", nil
}

// lastExchange is the session's last visible user message (nil: none)
// and the ids of every message from it on.
func (g *Gateway) lastExchange(ctx context.Context, session string) (*models.Message, []int64, error) {
	tip, err := g.rt.Store.Tip(ctx, session)
	if err != nil {
		tip = session
	}
	msgs, err := g.rt.Store.Messages(ctx, tip)
	if err != nil {
		return nil, nil, err
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" && !msgs[i].Steer {
			ids := make([]int64, 0, len(msgs)-i)
			for _, m := range msgs[i:] {
				ids = append(ids, m.ID)
			}
			return &msgs[i], ids, nil
		}
	}
	return nil, nil, nil
}

// forgetLast hides the session's last exchange from the model (not while
// a turn runs) and returns its user message; refusal says why not.
func (g *Gateway) forgetLast(ctx context.Context, u Update) (last *models.Message, refusal string, err error) {
	session, err := g.sessionOf(ctx, u)
	if err != nil {
		return nil, "", err
	}
	if _, err := g.rt.Running(ctx, session); err == nil {
		return nil, "A turn is running: /stop it first.", nil
	}
	last, ids, err := g.lastExchange(ctx, session)
	if err != nil || last == nil || (last.Content == "" && len(last.Images) == 0) {
		return nil, "There is no exchange to forget.", err
	}
	return last, "", g.rt.Store.HideMessages(ctx, ids)
}

// cmdRetry sends the last user message again, its pictures with it, after
// forgetting the exchange it began.
func (g *Gateway) cmdRetry(ctx context.Context, p Platform, u Update, _ Command) (string, error) {
	last, refusal, err := g.forgetLast(ctx, u)
	if err != nil || refusal != "" {
		return refusal, err
	}
	return "", g.handOver(ctx, p, u, last.Content, "", last.Images)
}

func (g *Gateway) cmdUndo(ctx context.Context, _ Platform, u Update, _ Command) (string, error) {
	last, refusal, err := g.forgetLast(ctx, u)
	if err != nil || refusal != "" {
		return refusal, err
	}
	label := textline.Of(last.Content, 60)
	if label == "" {
		label = "a picture"
	}
	return "Forgot the last exchange (" + label + ").", nil
}

func (g *Gateway) cmdSetHome(ctx context.Context, p Platform, u Update, _ Command) (string, error) {
	if err := g.rt.Store.SetHome(ctx, p.Name()+":"+u.Chat.ID); err != nil {
		return "", err
	}
	return "This chat is home now: deliveries to home come here.", nil
}

// cmdCompress compacts the chat's conversation between turns, the way a
// turn does past its threshold; the chat is told how it went when it is
// done (ChatCompactWorkflow, which survives a restart meanwhile).
func (g *Gateway) cmdCompress(ctx context.Context, p Platform, u Update, _ Command) (string, error) {
	chat, err := g.chatOf(ctx, u)
	if err != nil {
		return "", err
	}
	if err := g.chatsOwn(ctx, chat); err != nil {
		return "", err
	}
	t := engine.WithModel(engine.TurnTemplate(g.cfg, g.workdir()), chat.Model)
	in, err := g.rt.CompactionOf(ctx, chat.SessionID, t)
	switch {
	case errors.Is(err, engine.ErrTurnRunning):
		return "A turn is running: /compress when it is done (or /stop it).", nil
	case errors.Is(err, engine.ErrNoConversation):
		return "Nothing to compact: this chat's session has no conversation yet.", nil
	case err != nil:
		return "", err
	}
	// Said first: the report may come at once (nothing to compact).
	if _, err := p.SendPart(ctx, Outgoing{ChatID: u.Chat.ID, ReplyTo: u.MessageID}, "Compacting the conversation…"); err != nil {
		return "", err
	}
	return "", g.startOnce(ctx, updateWorkflowID(p, u), workflows.ChatCompactWorkflowName, workflows.ChatCompactInput{
		Platform: p.Name(), ChatID: u.Chat.ID, Compact: in,
	})
}
