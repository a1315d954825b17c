package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/events"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// streamPrinter shows a turn as it happens: reply text on out as it is
// generated, one progress line per tool on errOut.
type streamPrinter struct {
	out, errOut io.Writer
	mu          sync.Mutex
	text        strings.Builder
	midLine     bool
}

func (p *streamPrinter) onEvent(ev models.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev.Kind {
	case events.KindDelta:
		fmt.Fprint(p.out, ev.Data)
		p.text.WriteString(ev.Data)
		p.midLine = !strings.HasSuffix(ev.Data, "\n")
	case events.KindStatus, events.KindWait:
		if p.midLine {
			fmt.Fprintln(p.out)
			p.midLine = false
		}
		fmt.Fprintf(p.errOut, "  ⋯ %s\n", ev.Data)
	case events.KindToolStart, events.KindToolEnd:
		var t activities.ToolEvent
		if json.Unmarshal([]byte(ev.Data), &t) != nil {
			return
		}
		if p.midLine {
			fmt.Fprintln(p.out)
			p.midLine = false
		}
		switch {
		case ev.Kind == events.KindToolStart:
			fmt.Fprintf(p.errOut, "  ⚙ %s %s\n", t.Name, t.Args)
		case t.Failed:
			fmt.Fprintf(p.errOut, "  ✗ %s failed\n", t.Name)
		default:
			fmt.Fprintf(p.errOut, "  ✓ %s\n", t.Name)
		}
	}
}

// finish ends the turn's output: the final answer is printed unless it was
// just streamed; a turn that did not complete is explained on errOut.
func (p *streamPrinter) finish(res workflows.ConversationResult) {
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
