package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/workflows"
)

// cmdBackground runs TEXT as one turn in a session of its own, in the
// background; its answer comes to this chat when it ends.
func (g *Gateway) cmdBackground(ctx context.Context, p Platform, u Update, c Command) (string, error) {
	return g.startRun(ctx, p, u, c.Args, true)
}

// cmdGoal pursues GOAL over as many turns as it takes (within a budget),
// in a session of its own; the outcome comes to this chat when it ends.
func (g *Gateway) cmdGoal(ctx context.Context, p Platform, u Update, c Command) (string, error) {
	return g.startRun(ctx, p, u, c.Args, false)
}

// startRun starts a background task (once) or a goal from a chat. The
// session is named after the update, so an update taken twice starts it
// once.
func (g *Gateway) startRun(ctx context.Context, p Platform, u Update, text string, once bool) (string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		if once {
			return "Usage: /background TEXT — run TEXT in a session of its own; the answer comes here when it is done.", nil
		}
		return "Usage: /goal GOAL — work toward GOAL over as many turns as it takes; the outcome comes here.", nil
	}
	chat, err := g.chatOf(ctx, u)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(p.Name() + "/" + u.Chat.ID + "/" + u.ID))
	kind := "goal"
	if once {
		kind = "bg"
	}
	session := kind + "-" + hex.EncodeToString(sum[:8])
	in := workflows.GoalInput{SessionID: session, Goal: text, Once: once, Deliver: []string{origin(p, u)},
		Turn: engine.WithModel(engine.TurnTemplate(g.cfg, g.workdir()), chat.Model)}
	in.Turn.Owner = chat.Key // the chat's, as its own sessions are
	// Nobody answers in its session: no questions, and commands that need
	// approval are refused.
	in.Turn.Tools, in.Turn.Approvals.Mode = engine.UnattendedTools(g.cfg, nil), workflows.ApprovalDeny
	if !once {
		in.Budget = engine.ChatGoalBudget
	}
	err = g.rt.StartGoal(ctx, in)
	switch {
	case errors.Is(err, engine.ErrSessionInUse):
		return "Already started, in session " + session + ".", nil
	case err != nil:
		return "", err
	}
	if once {
		return "Started in the background (session " + session + "); the answer comes here when it is done.", nil
	}
	return "Working toward the goal in session " + session + " (at most 8 hours and 500 model calls); the outcome comes here. " +
		"Stop it from a terminal: talaria stop " + session, nil
}
