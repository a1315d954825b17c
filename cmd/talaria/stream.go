package main

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/talaria-agent/talaria"

	"github.com/talaria-agent/talaria/internal/textline"
)

// streamPrinter shows a turn as it happens: reply text on out as it is
// generated, one progress line per tool on errOut.
type streamPrinter struct {
	out, errOut io.Writer
	mu          sync.Mutex
	text        strings.Builder
	midLine     bool
	// shown keeps a retried model call's text from being printed twice.
	shown talaria.ShownEvent
}

func (p *streamPrinter) onEvent(ev talaria.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev.Kind {
	case talaria.KindAttempt:
		p.shown.Attempt(ev.Data)
	case talaria.KindDelta:
		text, restarted := p.shown.Delta(ev.Data)
		if restarted {
			// A retried call answered differently: what was shown of it
			// is not the answer; the new text follows on a line of its own.
			if p.midLine {
				fmt.Fprintln(p.out)
			}
			fmt.Fprintln(p.errOut, "  ⟲ the retried model call answered differently; its answer follows anew")
		}
		if text == "" {
			return
		}
		fmt.Fprint(p.out, text)
		p.text.WriteString(text)
		p.midLine = !strings.HasSuffix(text, "\n")
	case talaria.KindStatus, talaria.KindWait:
		if p.midLine {
			fmt.Fprintln(p.out)
			p.midLine = false
		}
		fmt.Fprintf(p.errOut, "  ⋯ %s\n", textline.Visible(ev.Data))
	case talaria.KindApproval, talaria.KindApprovalDecided, talaria.KindQuestion, talaria.KindAnswered:
		// A wait on a person: chat already prompts for it and shows the
		// outcome from the turn's progress query, so it is not printed
		// twice.
	case talaria.KindTaskStart, talaria.KindTaskEnd:
		var t talaria.TaskEvent
		if json.Unmarshal([]byte(ev.Data), &t) != nil {
			return
		}
		if p.midLine {
			fmt.Fprintln(p.out)
			p.midLine = false
		}
		if ev.Kind == talaria.KindTaskStart {
			fmt.Fprintf(p.errOut, "  ↳ task %s: %s\n", textline.Visible(t.Session), textline.Visible(t.Goal))
		} else {
			fmt.Fprintf(p.errOut, "  ↳ task %s ended: %s\n", textline.Visible(t.Session), textline.Visible(t.StopReason))
		}
	case talaria.KindToolStart, talaria.KindToolEnd:
		var t talaria.ToolEvent
		if json.Unmarshal([]byte(ev.Data), &t) != nil {
			return
		}
		if p.midLine {
			fmt.Fprintln(p.out)
			p.midLine = false
		}
		switch {
		case ev.Kind == talaria.KindToolStart:
			fmt.Fprintf(p.errOut, "  ⚙ %s %s\n", textline.Visible(t.Name), textline.Visible(t.Args))
		case t.Refused != "":
			fmt.Fprintf(p.errOut, "  ✗ %s\n", refusalLine(textline.Visible(t.Name), t.Refused))
		case t.Failed:
			fmt.Fprintf(p.errOut, "  ✗ %s failed\n", textline.Visible(t.Name))
		default:
			fmt.Fprintf(p.errOut, "  ✓ %s\n", textline.Visible(t.Name))
		}
	}
}

// finish ends the turn's output: the final answer is printed unless it was
// just streamed; a turn that did not complete is explained on errOut.
func (p *streamPrinter) finish(res talaria.ConversationResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	streamed := strings.TrimSpace(p.text.String())
	switch {
	case res.FinalResponse != nil && !strings.HasSuffix(streamed, strings.TrimSpace(*res.FinalResponse)):
		if p.midLine {
			fmt.Fprintln(p.out)
		}
		fmt.Fprintln(p.out, *res.FinalResponse)
	case p.midLine:
		fmt.Fprintln(p.out)
	}
	p.text.Reset()
	p.midLine = false
	printOutcome(p.errOut, res)
}

// refusalLine says why a call was not run, from the refusal the model read
// (talaria.DenialMessage): "terminal blocked: REASON", "terminal denied:
// not run" (by 'talaria deny', at the prompt, or by approvals.noninteractive),
// "terminal not run: no one approved it". Pure.
func refusalLine(name, refusal string) string {
	switch {
	case strings.HasPrefix(refusal, "BLOCKED:"):
		if why := refusalReason(refusal); why != "" {
			return name + " blocked: " + why
		}
		return name + " blocked"
	case strings.HasPrefix(refusal, "DENIED:"):
		return name + " denied: not run"
	case strings.HasPrefix(refusal, "NOT APPROVED:"):
		return name + " not run: no one approved it"
	}
	first, _, _ := strings.Cut(refusal, ". ")
	return name + " refused: " + textline.Of(textline.Visible(first), 200)
}

// refusalReason is the REASON of "...not run: REASON [rule R]. Commands...".
// Pure.
func refusalReason(refusal string) string {
	_, why, ok := strings.Cut(refusal, "not run: ")
	if !ok {
		return ""
	}
	why, _, _ = strings.Cut(why, ". Commands like it")
	why, _, _ = strings.Cut(why, " [rule ")
	return textline.Of(textline.Visible(why), 200)
}

// Temporal's decorations of an error, which a person need not read.
var (
	workflowErrorPrefix = regexp.MustCompile(`workflow execution error \(type: [^,()]*, workflowID: ([^,()]*), runID: [^()]*\): `)
	activityErrorPrefix = regexp.MustCompile(`activity error \(type: [^,()]*, scheduledEventID: \d+, startedEventID: \d+, identity: [^()]*\): `)
	applicationErrType  = regexp.MustCompile(` \(type: [A-Za-z0-9_.-]*, retryable: (?:true|false)\)`)
)

// plainError is an error message without Temporal's decorations ("workflow
// execution error (type: ..., workflowID: ...): ", "(type: X, retryable:
// true)"), on one line. Pure.
func plainError(msg string) string {
	msg = workflowErrorPrefix.ReplaceAllString(msg, "")
	msg = activityErrorPrefix.ReplaceAllString(msg, "")
	msg = applicationErrType.ReplaceAllString(msg, "")
	return lineBreaks.ReplaceAllString(strings.TrimSpace(msg), "; ")
}

// errorTurnID is the turn (workflow) id a Temporal error names, if any. Pure.
func errorTurnID(msg string) string {
	if m := workflowErrorPrefix.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}
