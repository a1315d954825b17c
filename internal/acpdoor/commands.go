package acpdoor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/sessionview"
	"github.com/talaria-agent/talaria/workflows"
)

// commands are the slash commands the editor is told of: what the chat
// doors already have, answered here without a model call.
var commands = []acp.AvailableCommand{
	{Name: "status", Description: "what the session's running turn is doing"},
	{Name: "usage", Description: "the session's turns, tokens and what its model calls cost"},
	{Name: "compact", Description: "compact the conversation now, between turns"},
	{Name: "goal", Description: "work toward a goal over many turns, in a session of its own",
		Input: &acp.AvailableCommandInput{Unstructured: &acp.UnstructuredCommandInput{Hint: "the goal"}}},
	{Name: "background", Description: "run a message as one turn in a session of its own, in the background",
		Input: &acp.AvailableCommandInput{Unstructured: &acp.UnstructuredCommandInput{Hint: "the message"}}},
}

// commandsUpdate tells the editor the slash commands.
func commandsUpdate() acp.SessionUpdate {
	return acp.SessionUpdate{AvailableCommandsUpdate: &acp.SessionAvailableCommandsUpdate{
		SessionUpdate: "available_commands_update", AvailableCommands: commands}}
}

// parseCommand splits "/name args" when name is one of commands. Pure.
func parseCommand(text string) (name, args string, ok bool) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "/") {
		return "", "", false
	}
	name, args, _ = strings.Cut(text[1:], " ")
	for _, c := range commands {
		if c.Name == name {
			return name, strings.TrimSpace(args), true
		}
	}
	return "", "", false
}

// command carries out a slash command in a session and returns its answer.
func (a *Agent) command(ctx context.Context, id, cwd, name, args string) (string, error) {
	switch name {
	case "status":
		pr, err := a.rt.Running(ctx, id)
		if errors.Is(err, engine.ErrNoRunningTurn) {
			return "Nothing is running.", nil
		}
		if err != nil {
			return "", err
		}
		return sessionview.Running(pr), nil
	case "usage":
		return sessionview.Usage(ctx, a.rt.Store, id)
	case "compact":
		res, err := a.rt.Compact(ctx, id, engine.TurnTemplate(a.cfg, cwd))
		switch {
		case errors.Is(err, engine.ErrTurnRunning):
			return "A turn is running: /compact when it is done (or cancel it).", nil
		case errors.Is(err, engine.ErrNoConversation):
			return "Nothing to compact: the session has no conversation yet.", nil
		}
		return workflows.CompactionReport(res, err), nil
	case "goal", "background":
		return a.startRun(ctx, cwd, args, name == "background")
	}
	return "", fmt.Errorf("no command /%s", name)
}

// startRun starts a goal, or one background turn, in a session of its own.
// Nobody answers there: no questions, and commands that need approval are
// refused.
func (a *Agent) startRun(ctx context.Context, cwd, text string, once bool) (string, error) {
	if text == "" {
		if once {
			return "Usage: /background TEXT — run TEXT as one turn in a session of its own.", nil
		}
		return "Usage: /goal GOAL — work toward GOAL over as many turns as it takes, in a session of its own.", nil
	}
	kind := "goal-"
	if once {
		kind = "bg-"
	}
	in := workflows.GoalInput{SessionID: kind + a.newID(), Goal: text, Once: once, Turn: engine.TurnTemplate(a.cfg, cwd)}
	in.Turn.Tools, in.Turn.Approvals.Mode = engine.UnattendedTools(a.cfg, nil), workflows.ApprovalDeny
	if !once {
		in.Budget = engine.ChatGoalBudget
	}
	if err := a.rt.StartGoal(ctx, in); err != nil {
		return "", err
	}
	if once {
		return fmt.Sprintf("Started in the background, in session %s: open it with session/load (or talaria sessions show %s) for the answer.", in.SessionID, in.SessionID), nil
	}
	return fmt.Sprintf("Working toward the goal in session %s (at most 8 hours and 500 model calls): open it with session/load to follow it; talaria stop %s stops it.",
		in.SessionID, in.SessionID), nil
}
