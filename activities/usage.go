package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/modelinfo"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// callRecord names a model call whose usage is recorded.
type callRecord struct {
	Key, Purpose, SessionID, TurnID string
}

// priceOf is the price of the model ep served: the worker's
// (configuration, discovery at ep) when it has one, else the bundled
// table's.
func (a *Activities) priceOf(ctx context.Context, ep llm.Endpoint) (modelinfo.Price, bool) {
	if a.Price != nil {
		if p, ok := a.Price(ctx, ep); ok {
			return p, true
		}
	}
	info, ok := modelinfo.Bundled(ep.Model)
	return info.Price, ok && info.Price.Known()
}

// recordCall stores what a model call that answered used and cost, once
// per key, counts the cost, and returns the usage as a turn sums it.
func (a *Activities) recordCall(ctx context.Context, rec callRecord, ep llm.Endpoint, u llm.Usage) (turnapi.Usage, error) {
	row := a.callRow(ctx, rec, ep, u)
	if err := a.Store.RecordModelCall(ctx, row); err != nil {
		return turnapi.Usage{}, fmt.Errorf("record model usage: %w", err)
	}
	return a.countCall(ctx, ep, row), nil
}

// callRow is the record of a model call that answered: what it used and
// cost.
func (a *Activities) callRow(ctx context.Context, rec callRecord, ep llm.Endpoint, u llm.Usage) models.ModelCall {
	price, priced := a.priceOf(ctx, ep)
	cost := 0.0
	if priced {
		cost = price.Cost(u)
	}
	return models.ModelCall{Key: rec.Key, SessionID: rec.SessionID, TurnID: rec.TurnID, Purpose: rec.Purpose,
		Provider: string(wireOf(ep)), Endpoint: llm.Host(ep.BaseURL), Model: ep.Model,
		PromptTokens: int64(u.PromptTokens), CompletionTokens: int64(u.CompletionTokens),
		CacheReadTokens: int64(u.CacheReadTokens), CacheWriteTokens: int64(u.CacheWriteTokens),
		ReasoningTokens: int64(u.ReasoningTokens), CostUSD: cost, Priced: priced}
}

// countCall counts the cost of a recorded call and returns its usage as a
// turn sums it.
func (a *Activities) countCall(ctx context.Context, ep llm.Endpoint, row models.ModelCall) turnapi.Usage {
	a.Metrics.Cost(ctx, ep.BaseURL, row.CostUSD)
	return usageOfCall(row)
}

// recordedUsage is the usage recorded under key, for a retry that finds
// its reply stored; the stored reply's tokens when none was recorded.
func (a *Activities) recordedUsage(ctx context.Context, key string, m *models.Message) turnapi.Usage {
	row, err := a.Store.ModelCallByKey(ctx, key)
	if err != nil {
		if !errors.Is(err, models.ErrNotFound) {
			a.logger().Warn("model usage not read", "key", key, "error", err)
		}
		return usageOf(m)
	}
	return usageOfCall(row)
}

// usageOfCall is a recorded call's usage as a turn sums it. Pure.
func usageOfCall(c models.ModelCall) turnapi.Usage {
	return turnapi.Usage{PromptTokens: c.PromptTokens, CompletionTokens: c.CompletionTokens,
		TotalTokens: c.PromptTokens + c.CompletionTokens, CacheReadTokens: c.CacheReadTokens,
		CacheWriteTokens: c.CacheWriteTokens, CostUSD: c.CostUSD}
}

// wireOf is an endpoint's wire format (openai when unset). Pure.
func wireOf(ep llm.Endpoint) llm.Wire {
	return cmp.Or(ep.Wire, llm.WireOpenAI)
}

// activityKey is the usage key of the model call of this activity: the
// same for every attempt of one scheduled activity; outside an activity
// (a direct call), unique to the call.
func activityKey(ctx context.Context, purpose string) string {
	if activity.IsActivity(ctx) {
		info := activity.GetInfo(ctx)
		return purpose + ":" + info.WorkflowExecution.ID + ":" + info.WorkflowExecution.RunID + ":" + info.ActivityID
	}
	return purpose + ":direct:" + strconv.FormatInt(time.Now().UnixNano(), 36)
}
