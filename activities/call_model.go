package activities

import (
	"context"
	"errors"
	"fmt"

	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/llm"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/transcript"
)

// CallModel sends the session's stored messages to the model and persists the
// reply under the key (turn, call). A retry that finds the reply already
// stored returns it without calling the model again.
func (a *Activities) CallModel(ctx context.Context, in CallModelInput) (CallModelResult, error) {
	key := replyKey(in.TurnID, in.Call)
	if stored, err := a.Store.MessageByKey(ctx, key); err == nil {
		return resultFromMessage(stored, Usage{}), nil
	} else if !errors.Is(err, models.ErrNotFound) {
		return CallModelResult{}, fmt.Errorf("call model: look up stored reply: %w", err)
	}

	history, err := a.Store.Messages(ctx, in.SessionID)
	if err != nil {
		return CallModelResult{}, fmt.Errorf("call model: load session %s: %w", in.SessionID, err)
	}
	req := a.buildRequest(history, in)

	provider, err := a.resolve(in.Model)
	if err != nil {
		return CallModelResult{}, err
	}
	stop := a.heartbeat(ctx, func() any { return in.Call })
	reply, err := llm.Call(ctx, provider, req, llm.Options{Stream: a.Stream})
	stop()
	if err != nil {
		return CallModelResult{}, modelError(ctx, err)
	}

	rows, err := a.Store.AppendMessages(ctx, []models.Message{{
		SessionID:    in.SessionID,
		TurnID:       in.TurnID,
		IdemKey:      key,
		Role:         openai.ChatMessageRoleAssistant,
		Content:      reply.Content,
		Reasoning:    reply.Reasoning,
		ToolCalls:    transcript.ToolCallsFromOpenAI(reply.ToolCalls, fmt.Sprintf("call_%d_", in.Call)),
		FinishReason: reply.FinishReason,
	}})
	if err != nil {
		return CallModelResult{}, fmt.Errorf("call model: persist reply: %w", err)
	}
	return resultFromMessage(&rows[0], Usage{
		PromptTokens:     int64(reply.Usage.PromptTokens),
		CompletionTokens: int64(reply.Usage.CompletionTokens),
		TotalTokens:      int64(reply.Usage.TotalTokens),
	}), nil
}

// buildRequest assembles the chat request from stored history.
func (a *Activities) buildRequest(history []models.Message, in CallModelInput) openai.ChatCompletionRequest {
	msgs := make([]openai.ChatCompletionMessage, 0, len(history)+2)
	if a.SystemPrompt != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: a.SystemPrompt})
	}
	msgs = append(msgs, transcript.Repair(transcript.ToOpenAI(history))...)
	if in.ExtraUserMessage != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: in.ExtraUserMessage})
	}
	req := openai.ChatCompletionRequest{Messages: msgs, MaxTokens: a.MaxTokens}
	if in.ToolsEnabled && a.Tools != nil {
		req.Tools = a.Tools.Definitions()
	}
	return req
}

func (a *Activities) resolve(model string) (llm.Provider, error) {
	if a.Provider == nil {
		return llm.Provider{}, temporal.NewNonRetryableApplicationError(
			"no model endpoint is configured on this worker", string(llm.ClassAuth), nil)
	}
	p, err := a.Provider(model)
	if err != nil {
		return llm.Provider{}, temporal.NewNonRetryableApplicationError(err.Error(), string(llm.ClassAuth), err)
	}
	return p, nil
}

// modelError turns a classified model failure into a Temporal error: the
// class is the error type, Retry-After sets the next retry delay, and
// failures a retry cannot fix are non-retryable.
func modelError(ctx context.Context, err error) error {
	var e *llm.Error
	if !errors.As(err, &e) {
		return err
	}
	if e.Class == llm.ClassCancelled && ctx.Err() != nil {
		return ctx.Err()
	}
	opts := temporal.ApplicationErrorOptions{NonRetryable: !e.Class.Retryable()}
	if e.RetryAfter > 0 {
		opts.NextRetryDelay = e.RetryAfter
	}
	return temporal.NewApplicationErrorWithOptions(e.Error(), string(e.Class), opts)
}

func resultFromMessage(m *models.Message, usage Usage) CallModelResult {
	res := CallModelResult{
		MessageID:    m.ID,
		FinishReason: m.FinishReason,
		TextChars:    len(transcript.StripThinking(m.Content)),
		Usage:        usage,
	}
	for _, tc := range m.ToolCalls {
		res.ToolCalls = append(res.ToolCalls, ToolCallRef{ID: tc.ID, Name: tc.Function.Name})
	}
	return res
}
