package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/keypool"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// KeyPoolStatus is one configured endpoint with several keys, as status
// shows it: its keys by position and digest, never a key.
type KeyPoolStatus struct {
	// Role is "primary", "fallback N" (from 1), or "other": an endpoint
	// not configured here whose keys cool down.
	Role string `json:"role"`
	// Endpoint is the wire format, redacted base URL and model.
	Endpoint string `json:"endpoint"`
	// Pool is the digest the pool's cool-downs are stored under.
	Pool string      `json:"pool"`
	Keys []KeyStatus `json:"keys"`
	// Error says why the cool-downs could not be read (the keys are then
	// shown as unknown).
	Error string `json:"error,omitempty"`
}

// KeyStatus is one key of a pool.
type KeyStatus struct {
	// Position is the key's place in the pool, from 1, of Of (0 for a
	// pool status does not see configured).
	Position int    `json:"position"`
	Of       int    `json:"of"`
	KeyID    string `json:"key_id"`
	Ready    bool   `json:"ready"`
	// State is "ready", "cooling down for 4s (rate limited)" or
	// "unknown".
	State string `json:"state"`
	// CoolingUntil and Reason (the failure's class) are set while the key
	// cools down.
	CoolingUntil *time.Time `json:"cooling_until,omitempty"`
	Reason       string     `json:"reason,omitempty"`
}

// keyPools are the key pools of the endpoints session id's model calls
// use (its own model, when it has one), read from the store at now; then
// the keys of other endpoints that cool down now (an endpoint whose keys
// this process's configuration does not see: a key serve reads from its
// environment, another model). Endpoints of one key are left out.
func keyPools(ctx context.Context, mc *ModelConfig, store *models.Store, id string, now time.Time) []KeyPoolStatus {
	model := ""
	if store != nil {
		if s, err := store.Session(ctx, id); err == nil {
			model = s.Model
		}
	}
	var out []KeyPoolStatus
	known := map[string]bool{}
	if endpoints, err := mc.Providers(model); err == nil {
		for i, e := range endpoints {
			if len(e.Keys) < 2 {
				continue
			}
			p := poolStatus(ctx, store, roleOf(i), e, now)
			known[p.Pool] = true
			out = append(out, p)
		}
	}
	if store == nil {
		return out
	}
	rows, err := store.AllKeyCooldowns(ctx)
	if err != nil {
		return out
	}
	return append(out, otherPools(rows, known, now)...)
}

// otherPools are the pools of rows (ordered by pool) not known, with
// their keys that cool down at now; a pool with none is left out. Their
// keys' positions are not known: only their digests. Pure.
func otherPools(rows []models.KeyCooldown, known map[string]bool, now time.Time) []KeyPoolStatus {
	var out []KeyPoolStatus
	for _, r := range rows {
		if known[r.Pool] || !r.Until.After(now) {
			continue
		}
		if len(out) == 0 || out[len(out)-1].Pool != r.Pool {
			out = append(out, KeyPoolStatus{Role: "other", Endpoint: r.Endpoint, Pool: r.Pool})
		}
		k := keypool.KeyState{KeyID: r.KeyID, Wait: r.Until.Sub(now), Class: turnapi.ErrorClass(r.Class)}
		until := r.Until
		p := &out[len(out)-1]
		p.Keys = append(p.Keys, KeyStatus{KeyID: r.KeyID, State: k.String(), CoolingUntil: &until, Reason: r.Class})
	}
	return out
}

// roleOf names the i-th endpoint of a model's list. Pure.
func roleOf(i int) string {
	if i == 0 {
		return "primary"
	}
	return fmt.Sprintf("fallback %d", i)
}

// poolStatus is e's pool with its keys' cool-downs from the store.
func poolStatus(ctx context.Context, store *models.Store, role string, e llm.Endpoint, now time.Time) KeyPoolStatus {
	pool := keypool.OfEndpoint(e)
	var cooling map[string]keypool.Cooldown
	var readErr error
	if store != nil {
		cooling, readErr = activities.KeyCooldowns(ctx, store, pool)
	}
	return describePool(role, pool, cooling, readErr, now)
}

// describePool is the status of pool, whose cool-downs are cooling (or
// could not be read: readErr). Pure.
func describePool(role string, pool keypool.Pool, cooling map[string]keypool.Cooldown, readErr error, now time.Time) KeyPoolStatus {
	p := KeyPoolStatus{Role: role, Endpoint: pool.Endpoint, Pool: pool.ID}
	if readErr != nil {
		p.Error = readErr.Error()
	}
	for _, k := range keypool.States(pool, cooling, now) {
		s := KeyStatus{Position: k.Position, Of: len(pool.Keys), KeyID: k.KeyID, Ready: k.Ready(), State: k.String()}
		switch {
		case readErr != nil:
			s.Ready, s.State = false, "unknown"
		case !k.Ready():
			until := now.Add(k.Wait)
			s.CoolingUntil, s.Reason = &until, string(k.Class)
		}
		p.Keys = append(p.Keys, s)
	}
	return p
}
