package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/talaria-agent/talaria/internal/keypool"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// callKeys is llm.Call over the endpoint's key pool (internal/keypool). An
// endpoint of one key (or none) is called as it is. With several, the call
// sends the first key that is not cooling down (the cool-downs are in the
// store, shared by every worker and kept across restarts); a key that is
// rate limited or refused cools down, and the call moves on at once, in
// this same attempt, to the next ready key. When every key cools, the
// error is a rate limit whose RetryAfter is the wait until the first is
// ready again, so the next attempt comes exactly then (or, when every key
// was refused, the refusal). Only this endpoint's pool is read and
// written: a fallback's keys are a pool of their own. Each request is
// counted once (the last by callModel).
func (a *Activities) callKeys(ctx context.Context, p llm.Endpoint, req llm.Request, opts llm.Options) (llm.Reply, error) {
	if len(p.Keys) < 2 {
		return llm.Call(ctx, p, req, opts)
	}
	pool := keypool.OfEndpoint(p)
	cooling := a.poolCooldowns(ctx, pool)
	var last *llm.Error
	var lastErr error
	var lastTook time.Duration
	for range p.Keys {
		c := keypool.Pick(pool.Keys, cooling, a.now())
		probe := false
		if !c.Ready() {
			if lastErr != nil || c.Class == turnapi.ClassRateLimit {
				return llm.Reply{}, keypool.Exhausted(pool, c, last)
			}
			// Every key was refused (or out of credit) earlier: the
			// first is tried once, so that a key renewed or topped up
			// since is used again rather than refused unasked for an
			// hour.
			c, probe = keypool.Choice{Index: 0}, true
		}
		if lastErr != nil {
			// callModel counts the call's last request; the key
			// given up before it is counted here.
			a.Metrics.ModelCall(ctx, p.BaseURL, modelOutcome(lastErr), lastTook)
		}
		p.APIKey = p.Keys[c.Index]
		began := time.Now()
		reply, err := llm.Call(ctx, p, req, opts)
		lastTook = time.Since(began)
		cd, cools := keypool.Cool(pool.Keys[c.Index], err, a.now())
		if !cools {
			if probe && err == nil {
				a.readyKey(ctx, pool, c.Index)
			}
			return reply, err
		}
		cooling[cd.KeyID] = cd
		a.coolKey(ctx, pool, c.Index, cd)
		lastErr = err
		errors.As(err, &last)
		if last.Streamed != "" || ctx.Err() != nil {
			// Part of the reply was shown, or the call is over: no
			// other key is tried in this attempt.
			return reply, err
		}
	}
	if c := keypool.Pick(pool.Keys, cooling, a.now()); !c.Ready() {
		return llm.Reply{}, keypool.Exhausted(pool, c, last)
	}
	// A rest ended while the other keys were tried: the next attempt
	// begins with that key.
	return llm.Reply{}, lastErr
}

// now is the time of the key cool-downs.
func (a *Activities) now() time.Time {
	if a.Clock != nil {
		return a.Clock()
	}
	return time.Now()
}

// poolCooldowns are the stored cool-downs of pool's keys; none without a
// store, or when it cannot be read (the call goes on: a key that still
// cools is refused again and cools anew).
func (a *Activities) poolCooldowns(ctx context.Context, pool keypool.Pool) map[string]keypool.Cooldown {
	if a.Store == nil {
		return map[string]keypool.Cooldown{}
	}
	cooling, err := KeyCooldowns(ctx, a.Store, pool)
	if err != nil {
		a.logger().Warn("key cool-downs not read", "endpoint", pool.Endpoint, "pool", pool.ID, "error", err)
		return map[string]keypool.Cooldown{}
	}
	return cooling
}

// coolKey records that the index-th key of pool cools down (cd) and logs
// it, by position and digest: never the key.
func (a *Activities) coolKey(ctx context.Context, pool keypool.Pool, index int, cd keypool.Cooldown) {
	a.logger().Warn("model key cooling down", "endpoint", pool.Endpoint, "pool", pool.ID,
		"key", keypool.Position(index, len(pool.Keys)), "key_id", cd.KeyID,
		"for", cd.Until.Sub(a.now()).Round(time.Millisecond).String(), "reason", keypool.Reason(cd.Class), "status", cd.Status)
	if a.Store == nil {
		return
	}
	row := models.KeyCooldown{Pool: pool.ID, KeyID: cd.KeyID, Endpoint: pool.Endpoint, Until: cd.Until,
		Class: string(cd.Class), Status: cd.Status}
	if err := a.Store.SetKeyCooldown(ctx, row); err != nil {
		a.logger().Warn("key cool-down not stored", "endpoint", pool.Endpoint, "pool", pool.ID,
			"key", keypool.Position(index, len(pool.Keys)), "error", err)
	}
}

// readyKey records that the index-th key of pool, refused before, was
// taken again: its cool-down ends now.
func (a *Activities) readyKey(ctx context.Context, pool keypool.Pool, index int) {
	a.logger().Info("model key taken again", "endpoint", pool.Endpoint, "pool", pool.ID,
		"key", keypool.Position(index, len(pool.Keys)), "key_id", pool.Keys[index])
	if a.Store == nil {
		return
	}
	row := models.KeyCooldown{Pool: pool.ID, KeyID: pool.Keys[index], Endpoint: pool.Endpoint, Until: a.now()}
	if err := a.Store.SetKeyCooldown(ctx, row); err != nil {
		a.logger().Warn("key cool-down not cleared", "endpoint", pool.Endpoint, "pool", pool.ID,
			"key", keypool.Position(index, len(pool.Keys)), "error", err)
	}
}

// KeyCooldowns reads the cool-downs the store holds for pool's keys, by
// key id.
func KeyCooldowns(ctx context.Context, store *models.Store, pool keypool.Pool) (map[string]keypool.Cooldown, error) {
	rows, err := store.KeyCooldowns(ctx, pool.ID)
	if err != nil {
		return nil, fmt.Errorf("key cool-downs of %s: %w", pool.Endpoint, err)
	}
	list := make([]keypool.Cooldown, len(rows))
	for i, r := range rows {
		list[i] = keypool.Cooldown{KeyID: r.KeyID, Until: r.Until, Class: turnapi.ErrorClass(r.Class), Status: r.Status}
	}
	return keypool.ByKey(list), nil
}
