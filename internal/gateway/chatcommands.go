package gateway

import (
	"context"
	"errors"
	"fmt"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/workflows"
)

// command carries out a chat command and answers in the chat. A command
// that needs a turn (/steer, /queue) is handed over as a message is.
func (g *Gateway) command(ctx context.Context, p Platform, u Update, c Command) error {
	session := g.sessionOf(u)
	var answer string
	switch c.Name {
	case "help":
		answer = HelpText()
	case "stop":
		_, err := g.rt.Interrupt(ctx, session, "stopped from the chat")
		switch {
		case errors.Is(err, engine.ErrNoRunningTurn) || isNotFound(err):
			answer = "Nothing is running."
		case err != nil:
			return err
		default:
			answer = "Stopped."
		}
	case "steer", "queue":
		if c.Args == "" {
			answer = fmt.Sprintf("Usage: /%s TEXT", c.Name)
			break
		}
		mode := workflows.BusySteer
		if c.Name == "queue" {
			mode = workflows.BusyQueue
		}
		return g.handOver(ctx, p, u, c.Args, mode)
	case "status":
		pr, err := g.rt.Running(ctx, session)
		switch {
		case errors.Is(err, engine.ErrNoRunningTurn) || isNotFound(err):
			answer = "Nothing is running."
		case err != nil:
			return err
		default:
			answer = fmt.Sprintf("Running: iteration %d, %d left", pr.Iteration, pr.BudgetLeft)
			if pr.CurrentTool != "" {
				answer += ", now " + pr.CurrentTool
			}
		}
	case "approve", "deny":
		choice := turnapi.ChoiceOnce
		switch {
		case c.Name == "deny":
			choice = turnapi.ChoiceDeny
		case c.Args == "session":
			choice = turnapi.ChoiceSession
		case c.Args == "always":
			choice = turnapi.ChoiceAlways
		case c.Args != "":
			answer = "Usage: /approve [session|always]"
		}
		if answer == "" {
			var err error
			if answer, err = g.decide(ctx, u, choice); err != nil {
				return err
			}
		}
	default:
		answer = fmt.Sprintf("/%s is not available here yet.", c.Name)
	}
	_, err := p.SendPart(ctx, Outgoing{ChatID: u.Chat.ID, ReplyTo: u.MessageID}, p.Parts(answer)[0])
	return err
}
