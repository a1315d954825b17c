package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/talaria-agent/talaria/approval"
	"github.com/talaria-agent/talaria/engine"
	"github.com/talaria-agent/talaria/workflows"
)

// attendant keeps the person at the terminal in the loop while a turn runs:
// it asks approvals and clarify questions inline, sends "/steer TEXT" to the
// turn as a steer, and keeps any other line typed meanwhile for after the
// turn (type-ahead).
type attendant struct {
	rt      *engine.Runtime
	session string
	lines   <-chan string
	errOut  io.Writer
	// asking is the call id of the approval or question shown, if any.
	asking   string
	question bool
	// ahead are lines typed during the turn, to run after it.
	ahead []string
	// eof: input ended during the turn.
	eof bool
}

type turnOutcome struct {
	res workflows.ConversationResult
	err error
}

// attend runs run (one turn) while watching it.
func (a *attendant) attend(ctx context.Context, run func() (workflows.ConversationResult, error)) (workflows.ConversationResult, error) {
	done := make(chan turnOutcome, 1)
	go func() {
		res, err := run()
		done <- turnOutcome{res, err}
	}()
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	lines := a.lines
	for {
		select {
		case o := <-done:
			return o.res, o.err
		case <-tick.C:
			a.poll(ctx)
		case l, ok := <-lines:
			if !ok {
				lines, a.eof = nil, true // end of input: let the turn finish
				continue
			}
			a.reply(ctx, strings.TrimSpace(l))
		}
	}
}

// poll shows a new approval request or question.
func (a *attendant) poll(ctx context.Context) {
	p, err := a.rt.Running(ctx, a.session)
	if err != nil {
		return
	}
	switch {
	case p.PendingApproval != nil && p.PendingApproval.CallID != a.asking:
		ap := p.PendingApproval
		a.asking, a.question = ap.CallID, false
		fmt.Fprintf(a.errOut, "\n  ⚠ the agent wants to run: %s\n    (%s) approve? [o]nce / [s]ession / [a]lways (this same command) / [d]eny: ", shown(ap.Command), shown(ap.Reason))
	case p.PendingQuestion != nil && p.PendingQuestion.CallID != a.asking:
		q := p.PendingQuestion
		a.asking, a.question = q.CallID, true
		fmt.Fprintf(a.errOut, "\n  ? %s\n", q.Question)
		for i, c := range q.Choices {
			fmt.Fprintf(a.errOut, "    %d. %s\n", i+1, c)
		}
		fmt.Fprint(a.errOut, "  your answer: ")
	}
}

// reply answers what is being asked, or steers the turn with the line.
func (a *attendant) reply(ctx context.Context, line string) {
	if line == "" {
		return
	}
	p, err := a.rt.Running(ctx, a.session)
	if err != nil {
		a.ahead = append(a.ahead, line)
		return
	}
	switch {
	case p.PendingApproval != nil && p.PendingApproval.CallID == a.asking:
		choice, err := approval.ParseChoice(line)
		if err != nil {
			fmt.Fprintf(a.errOut, "  %v — answer o, s, a or d: ", err)
			return
		}
		a.signal(ctx, p.TurnID, workflows.SignalApproval, workflows.ApprovalDecision{CallID: a.asking, Choice: choice})
	case p.PendingQuestion != nil && p.PendingQuestion.CallID == a.asking:
		a.signal(ctx, p.TurnID, workflows.SignalAnswer, workflows.Answer{CallID: a.asking, Text: pickChoice(line, p.PendingQuestion.Choices)})
	case strings.HasPrefix(line, "/steer "):
		a.signal(ctx, p.TurnID, workflows.SignalSteer, strings.TrimSpace(strings.TrimPrefix(line, "/steer ")))
		fmt.Fprintln(a.errOut, "  ↪ sent to the running turn")
	default:
		a.ahead = append(a.ahead, line)
	}
}

func (a *attendant) signal(ctx context.Context, turnID, name string, payload any) {
	if err := a.rt.Signal(ctx, turnID, name, payload); err != nil {
		fmt.Fprintf(a.errOut, "talaria: %s\n", oneLine(err))
	}
}

// pickChoice turns "2" into the second choice; other text is the answer.
func pickChoice(line string, choices []string) string {
	var n int
	if _, err := fmt.Sscanf(line, "%d", &n); err == nil && fmt.Sprint(n) == line && n >= 1 && n <= len(choices) {
		return choices[n-1]
	}
	return line
}
