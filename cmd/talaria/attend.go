package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/talaria-agent/talaria"

	"github.com/talaria-agent/talaria/internal/textline"

	"github.com/talaria-agent/talaria/config"
)

// attendant keeps the person at the terminal in the loop while a turn runs:
// it asks approvals and clarify questions inline, sends "/steer TEXT" to the
// turn as a steer, and keeps any other line typed meanwhile for after the
// turn (type-ahead).
type attendant struct {
	rt      *talaria.Runtime
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
	// unattended is set when no one can answer at this terminal (a
	// one-shot chat whose input is not a terminal): the value of
	// approvals.noninteractive, deny (answer at once: refuse, or "no one
	// is available") or wait (say how to answer from elsewhere, and wait).
	unattended string
	// hint: also say how to answer from another terminal (one-shot chat).
	hint bool
	// turnID is the running turn, once seen.
	turnID string
}

type turnOutcome struct {
	res talaria.ConversationResult
	err error
}

// attend runs run (one turn) while watching it.
func (a *attendant) attend(ctx context.Context, run func() (talaria.ConversationResult, error)) (talaria.ConversationResult, error) {
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

// poll shows a new approval request or question, and answers it at once
// when no one can (unattended deny).
func (a *attendant) poll(ctx context.Context) {
	p, task, err := a.rt.Waiting(ctx, a.session)
	if err != nil {
		return
	}
	if p.TurnID != "" && task == "" {
		a.turnID = p.TurnID
	}
	if task != "" && p.PendingApproval != nil && p.PendingApproval.CallID != a.asking {
		fmt.Fprintf(a.errOut, "\n  (a delegated task, session %s:)", task)
	}
	switch {
	case p.PendingApproval != nil && p.PendingApproval.CallID != a.asking:
		ap := p.PendingApproval
		a.asking, a.question = ap.CallID, false
		if a.unattended == "" && !a.hint {
			fmt.Fprintf(a.errOut, "\n  ⚠ the agent wants to run: %s\n    (%s) approve? [o]nce / [s]ession / [a]lways (this same command) / [d]eny: ", textline.Visible(ap.Command), textline.Visible(ap.Reason))
			return
		}
		fmt.Fprintf(a.errOut, "\n  ⚠ the agent wants to run: %s\n    (%s)\n", textline.Visible(ap.Command), textline.Visible(ap.Reason))
		fmt.Fprintf(a.errOut, "    %s\n", approveHow(a.session, a.unattended == ""))
		a.decideUnattended(func() bool {
			if !a.done(a.rt.Decide(ctx, p.TurnID, ap.CallID, talaria.ChoiceDeny)) {
				return false
			}
			fmt.Fprintln(a.errOut, "  ✗ refused: no one at this terminal can approve it (approvals.noninteractive: deny; set it to wait to answer from another terminal)")
			return true
		}, "    waiting for a decision (it is refused if none comes within approvals.timeout)...")
		if a.unattended == "" {
			fmt.Fprint(a.errOut, "    approve? [o]nce / [s]ession / [a]lways (this same command) / [d]eny: ")
		}
	case p.PendingQuestion != nil && p.PendingQuestion.CallID != a.asking:
		q := p.PendingQuestion
		a.asking, a.question = q.CallID, true
		fmt.Fprintf(a.errOut, "\n  ? %s\n", textline.Visible(q.Question))
		for i, c := range q.Choices {
			fmt.Fprintf(a.errOut, "    %d. %s\n", i+1, textline.Visible(c))
		}
		if a.hint || a.unattended != "" {
			fmt.Fprintf(a.errOut, "    %s\n", answerHow(a.session, a.unattended == ""))
		}
		a.decideUnattended(func() bool {
			if !a.done(a.rt.Answer(ctx, p.TurnID, q.CallID, talaria.NoUserAnswer)) {
				return false
			}
			fmt.Fprintln(a.errOut, "  ↪ answered: no one is available to answer; the agent proceeds on its best judgement and says what it assumed (approvals.noninteractive: deny)")
			return true
		}, "    waiting for an answer...")
		if a.unattended == "" {
			fmt.Fprint(a.errOut, "  your answer: ")
		}
	}
}

// decideUnattended answers at once (deny) or says that the turn waits
// (wait) when no one can answer here. A failed answer is tried again at
// the next poll.
func (a *attendant) decideUnattended(deny func() bool, waiting string) {
	switch a.unattended {
	case config.NonInteractiveDeny:
		if !deny() {
			a.asking = ""
		}
	case config.NonInteractiveWait:
		fmt.Fprintln(a.errOut, waiting)
	}
}

// approveHow says how to decide on a pending command from a shell; also
// says the session id.
func approveHow(session string, here bool) string {
	how := fmt.Sprintf("session %s: talaria approve %s [--session|--always] / talaria deny %s", session, session, session)
	if here {
		return how + " (from another terminal), or answer here"
	}
	return how
}

// answerHow says how to answer a pending question from a shell.
func answerHow(session string, here bool) string {
	how := fmt.Sprintf("session %s: talaria answer %s \"TEXT\"", session, session)
	if here {
		return how + " (from another terminal), or answer here"
	}
	return how
}

// reply answers what is being asked, or steers the turn with the line.
func (a *attendant) reply(ctx context.Context, line string) {
	if line == "" {
		return
	}
	p, _, err := a.rt.Waiting(ctx, a.session)
	if err != nil {
		a.ahead = append(a.ahead, line)
		return
	}
	switch {
	case p.PendingApproval != nil && p.PendingApproval.CallID == a.asking:
		choice, err := talaria.ParseApprovalChoice(line)
		if err != nil {
			fmt.Fprintf(a.errOut, "  %v — answer o, s, a or d: ", err)
			return
		}
		a.done(a.rt.Decide(ctx, p.TurnID, a.asking, choice))
	case p.PendingQuestion != nil && p.PendingQuestion.CallID == a.asking:
		a.done(a.rt.Answer(ctx, p.TurnID, a.asking, pickChoice(line, p.PendingQuestion.Choices)))
	case strings.HasPrefix(line, "/steer "):
		a.done(a.rt.Signal(ctx, p.TurnID, talaria.SignalSteer, strings.TrimSpace(strings.TrimPrefix(line, "/steer "))))
		fmt.Fprintln(a.errOut, "  ↪ sent to the running turn")
	default:
		a.ahead = append(a.ahead, line)
	}
}

// done reports whether a decision, answer or steer reached the turn, and
// says why not when it did not.
func (a *attendant) done(err error) bool {
	if err != nil {
		fmt.Fprintf(a.errOut, "talaria: %s\n", oneLine(err))
		return false
	}
	return true
}

// pickChoice turns "2" into the second choice; other text is the answer.
func pickChoice(line string, choices []string) string {
	var n int
	if _, err := fmt.Sscanf(line, "%d", &n); err == nil && fmt.Sprint(n) == line && n >= 1 && n <= len(choices) {
		return choices[n-1]
	}
	return line
}
