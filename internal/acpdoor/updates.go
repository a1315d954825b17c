package acpdoor

import (
	"encoding/json"
	"fmt"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/gateway/format"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// translator turns one turn's live events into ACP session updates, in
// order. A retried model call streams its text again from the start: the
// text already shown is not sent twice (events.Shown), and an attempt
// whose text differs says so in a thought before its text. Not safe for
// concurrent use: one follower owns it.
type translator struct {
	shown events.Shown
	// started are the tool calls the editor was told of.
	started map[string]bool
}

// updates is what ev shows the editor; nil for events that show nothing
// (status changes, the end) or that the agent handles itself (approvals,
// questions).
func (t *translator) updates(ev models.Event) []acp.SessionUpdate {
	switch ev.Kind {
	case events.KindAttempt:
		t.shown.Attempt(ev.Data)
	case events.KindDelta:
		show, restarted := t.shown.Delta(ev.Data)
		var out []acp.SessionUpdate
		if restarted {
			out = append(out, acp.UpdateAgentThoughtText("(the model call was retried and answered differently; its reply follows in full)"))
			show = "\n\n" + show
		}
		if show != "" {
			out = append(out, acp.UpdateAgentMessageText(show))
		}
		return out
	case events.KindReasoning:
		if ev.Data != "" {
			return []acp.SessionUpdate{acp.UpdateAgentThoughtText(ev.Data)}
		}
	case events.KindWait:
		if ev.Data != "" {
			return []acp.SessionUpdate{acp.UpdateAgentThoughtText("(" + ev.Data + ")")}
		}
	case events.KindToolStart:
		var te activities.ToolEvent
		if json.Unmarshal([]byte(ev.Data), &te) != nil || te.ID == "" {
			return nil
		}
		if t.started == nil {
			t.started = map[string]bool{}
		}
		t.started[te.ID] = true
		return []acp.SessionUpdate{toolStart(te)}
	case events.KindToolEnd:
		var te activities.ToolEvent
		if json.Unmarshal([]byte(ev.Data), &te) != nil || te.ID == "" {
			return nil
		}
		if !t.started[te.ID] {
			// A call refused before it ran (denied, blocked) has no start:
			// the editor is told of it whole, already ended.
			return []acp.SessionUpdate{toolRefused(te)}
		}
		return []acp.SessionUpdate{toolEnd(te)}
	}
	return nil
}

// toolStart announces a tool call: its kind and the file it touches, when
// its arguments name one.
func toolStart(te activities.ToolEvent) acp.SessionUpdate {
	var args map[string]any
	_ = json.Unmarshal([]byte(te.Args), &args) // arguments the model could not write stay raw text
	opts := []acp.ToolCallStartOpt{acp.WithStartKind(toolKind(te.Name)), acp.WithStartStatus(acp.ToolCallStatusInProgress)}
	if args != nil {
		opts = append(opts, acp.WithStartRawInput(args))
		if p, ok := args["path"].(string); ok && p != "" {
			opts = append(opts, acp.WithStartLocations([]acp.ToolCallLocation{{Path: p}}))
		}
	} else if te.Args != "" {
		opts = append(opts, acp.WithStartRawInput(te.Args))
	}
	return acp.StartToolCall(acp.ToolCallId(te.ID), toolTitle(te.Name, args), opts...)
}

// toolEnd reports a tool call's end; a refused command says why.
func toolEnd(te activities.ToolEvent) acp.SessionUpdate {
	status := acp.ToolCallStatusCompleted
	if te.Failed {
		status = acp.ToolCallStatusFailed
	}
	opts := []acp.ToolCallUpdateOpt{acp.WithUpdateStatus(status)}
	if te.Refused != "" {
		opts = append(opts, acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(te.Refused))}))
	}
	return acp.UpdateToolCall(acp.ToolCallId(te.ID), opts...)
}

// toolRefused announces a call that ended without running, with why.
func toolRefused(te activities.ToolEvent) acp.SessionUpdate {
	opts := []acp.ToolCallStartOpt{acp.WithStartKind(toolKind(te.Name)), acp.WithStartStatus(acp.ToolCallStatusFailed)}
	if te.Refused != "" {
		opts = append(opts, acp.WithStartContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(te.Refused))}))
	}
	return acp.StartToolCall(acp.ToolCallId(te.ID), te.Name, opts...)
}

// toolKind is the ACP kind of a Talaria tool, for the editor's icon. Pure.
func toolKind(name string) acp.ToolKind {
	switch name {
	case "read_file":
		return acp.ToolKindRead
	case "write_file", "patch":
		return acp.ToolKindEdit
	case "search_files", "session_search":
		return acp.ToolKindSearch
	case "terminal", "execute_code", "process":
		return acp.ToolKindExecute
	case "web_fetch", "web_search":
		return acp.ToolKindFetch
	case "todo", "delegate_task":
		return acp.ToolKindThink
	}
	return acp.ToolKindOther
}

// toolTitle is the line the editor shows for a call: the tool and what it
// works on (a command, a path, a query). Pure.
func toolTitle(name string, args map[string]any) string {
	for _, key := range []string{"command", "path", "query", "url", "pattern", "goal"} {
		if v, ok := args[key].(string); ok && v != "" {
			return name + ": " + oneLine(v, 120)
		}
	}
	return name
}

// oneLine is s on one line, at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// stopReason is the ACP stop reason of a turn's end, or an error for an end
// ACP has no reason for (the model or the engine failed). Pure.
func stopReason(res workflows.ConversationResult) (acp.StopReason, error) {
	switch res.TurnExitReason {
	case workflows.StopTextResponse:
		return acp.StopReasonEndTurn, nil
	case workflows.StopInterrupted:
		return acp.StopReasonCancelled, nil
	case workflows.StopMaxIterations, workflows.StopBudgetExhausted:
		return acp.StopReasonMaxTurnRequests, nil
	case workflows.StopTruncated, workflows.StopThinkingExhausted:
		return acp.StopReasonMaxTokens, nil
	case workflows.StopGuardrailHalt:
		return acp.StopReasonRefusal, nil
	}
	msg := fmt.Sprintf("the turn ended: %s", res.TurnExitReason)
	if res.Error != nil {
		msg += ": " + oneLine(*res.Error, 500)
	}
	return "", acp.NewInternalError(map[string]any{"error": msg, "turn_id": res.TurnID})
}

// promptText is the user message of a prompt's content blocks: text as is,
// a resource link as a Markdown link, an embedded text resource as the
// file's text in a fenced block named by its URI, a picture as the line
// that names it (pictures, by block index; keepPictures). Audio and binary
// resources are not taken (initialize says so); each is named in one line.
// Pure.
func promptText(blocks []acp.ContentBlock, pictures map[int]string) string {
	var parts []string
	for i, b := range blocks {
		switch {
		case b.Text != nil:
			parts = append(parts, b.Text.Text)
		case b.ResourceLink != nil:
			name := b.ResourceLink.Name
			if name == "" {
				name = b.ResourceLink.Uri
			}
			parts = append(parts, fmt.Sprintf("[%s](%s)", name, b.ResourceLink.Uri))
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			r := b.Resource.Resource.TextResourceContents
			parts = append(parts, fmt.Sprintf("%s:\n%s\n%s\n%s", r.Uri, format.Fence(r.Text), r.Text, format.Fence(r.Text)))
		case b.Resource != nil && b.Resource.Resource.BlobResourceContents != nil:
			parts = append(parts, fmt.Sprintf("(a binary file was attached and is not shown: %s)", b.Resource.Resource.BlobResourceContents.Uri))
		case b.Image != nil && pictures[i] != "":
			parts = append(parts, pictures[i])
		case b.Image != nil:
			parts = append(parts, "(an image was attached and is not shown)")
		case b.Audio != nil:
			parts = append(parts, "(an audio clip was attached; this agent does not take audio)")
		}
	}
	return strings.Join(parts, "\n\n")
}
