package keypool

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/textline"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// Cool-downs of a key that failed.
const (
	// DefaultRateLimitCooldown is how long a rate-limited key rests when
	// the provider gave no Retry-After.
	DefaultRateLimitCooldown = time.Minute
	// MaxRateLimitCooldown caps the rest a Retry-After asks for.
	MaxRateLimitCooldown = time.Hour
	// AuthCooldown is how long a refused key (401, 403, billing) rests: a
	// revoked key is not worth a request at every call.
	AuthCooldown = time.Hour
)

// Lengths of the digests that name pools and keys, in hex characters.
const (
	keyIDLen  = 12
	poolIDLen = 16
	// maxLabel bounds a pool's endpoint as shown.
	maxLabel = 300
)

// KeyID is the short digest that names a key: the first 12 hex characters
// of its SHA-256. Pure.
func KeyID(key string) string { return digest(key, keyIDLen) }

// digest is the first n hex characters of s's SHA-256. Pure.
func digest(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:n]
}

// Pool is one endpoint's key pool, as it is stored and shown: no key in
// it, only their digests.
type Pool struct {
	// ID is a digest of the endpoint: its cool-downs are stored under it.
	ID string
	// Endpoint names the endpoint as shown: wire format, redacted base URL
	// and model, on one line.
	Endpoint string
	// Keys are the digests (KeyID) of the pool's keys, in order.
	Keys []string
}

// Of is the pool of the endpoint at baseURL speaking wire for model, with
// these keys in order. An empty wire is openai, as llm.For reads it. Pure.
func Of(wire, baseURL, model string, keys []string) Pool {
	wire = cmp.Or(wire, string(llm.WireOpenAI))
	url := llm.RedactURL(baseURL)
	p := Pool{
		ID:       digest(wire+"\x00"+url+"\x00"+model, poolIDLen),
		Endpoint: textline.Of(wire+" "+url+" "+model, maxLabel),
		Keys:     make([]string, len(keys)),
	}
	for i, k := range keys {
		p.Keys[i] = KeyID(k)
	}
	return p
}

// OfEndpoint is the pool of e (its Keys). Pure.
func OfEndpoint(e llm.Endpoint) Pool { return Of(string(e.Wire), e.BaseURL, e.Model, e.Keys) }

// Position names the i-th key (from 0) of a pool of n: "key 2 of 3". Pure.
func Position(i, n int) string { return fmt.Sprintf("key %d of %d", i+1, n) }

// Cooldown is one key's rest: until when, and the failure that began it.
type Cooldown struct {
	KeyID  string
	Until  time.Time
	Class  turnapi.ErrorClass
	Status int
}

// CoolFor is how long the key a call sent rests after the call failed
// with err: a rate limit rests for its Retry-After (DefaultRateLimitCooldown
// without one, at most MaxRateLimitCooldown), a refusal (auth, billing)
// for AuthCooldown; false for any other outcome, which is not the key's
// doing. Pure.
func CoolFor(err error) (time.Duration, bool) {
	var e *llm.Error
	if !errors.As(err, &e) {
		return 0, false
	}
	switch e.Class {
	case turnapi.ClassRateLimit:
		if e.RetryAfter <= 0 {
			return DefaultRateLimitCooldown, true
		}
		return min(e.RetryAfter, MaxRateLimitCooldown), true
	case turnapi.ClassAuth, turnapi.ClassBilling:
		return AuthCooldown, true
	}
	return 0, false
}

// Cool is the cool-down of key id after a call that failed with err at
// now (CoolFor); false when err cools no key. Pure.
func Cool(id string, err error, now time.Time) (Cooldown, bool) {
	d, ok := CoolFor(err)
	if !ok {
		return Cooldown{}, false
	}
	var e *llm.Error
	errors.As(err, &e)
	return Cooldown{KeyID: id, Until: now.Add(d), Class: e.Class, Status: e.Status}, true
}

// ByKey indexes cool-downs by key; of two for one key the later one
// counts. Pure.
func ByKey(list []Cooldown) map[string]Cooldown {
	out := make(map[string]Cooldown, len(list))
	for _, c := range list {
		if old, ok := out[c.KeyID]; !ok || c.Until.After(old.Until) {
			out[c.KeyID] = c
		}
	}
	return out
}

// Choice is the key a call sends, or why none.
type Choice struct {
	// Index is the position (from 0) of the key to send; -1 when every key
	// is cooling down.
	Index int
	// Wait is, when every key cools, how long until one is ready: the
	// shortest rest of a rate-limited key, else the shortest rest of all.
	Wait time.Duration
	// Class is the failure that began that rest.
	Class turnapi.ErrorClass
}

// Ready reports whether the choice names a key.
func (c Choice) Ready() bool { return c.Index >= 0 }

// Pick is the first key, in order, that is not cooling down at now; when
// every key cools, none, with the shortest wait (a rate limit's first: a
// rate-limited pool comes back, a refused one may not). An empty pool has
// no key and no wait. Pure.
func Pick(keys []string, cooling map[string]Cooldown, now time.Time) Choice {
	for i, id := range keys {
		if c, ok := cooling[id]; !ok || !c.Until.After(now) {
			return Choice{Index: i}
		}
	}
	best := Choice{Index: -1}
	for _, id := range keys {
		c := cooling[id]
		wait := c.Until.Sub(now)
		limited, bestLimited := c.Class == turnapi.ClassRateLimit, best.Class == turnapi.ClassRateLimit
		if best.Class == "" || (limited && !bestLimited) || (limited == bestLimited && wait < best.Wait) {
			best.Wait, best.Class = wait, c.Class
		}
	}
	return best
}

// KeyState is one key of a pool as status shows it.
type KeyState struct {
	// Position is the key's place in the pool, from 1.
	Position int
	KeyID    string
	// Wait is how long the key still cools down (0: ready), Class why.
	Wait  time.Duration
	Class turnapi.ErrorClass
}

// Ready reports whether the key may be sent now.
func (k KeyState) Ready() bool { return k.Wait <= 0 }

// String is "ready" or e.g. "cooling down for 4s (rate limited)". Pure.
func (k KeyState) String() string {
	if k.Ready() {
		return "ready"
	}
	return fmt.Sprintf("cooling down for %s (%s)", roundWait(k.Wait), Reason(k.Class))
}

// roundWait is d to the second, at least one second. Pure.
func roundWait(d time.Duration) time.Duration {
	return max(d.Round(time.Second), time.Second)
}

// States are the pool's keys at now, in order. Pure.
func States(p Pool, cooling map[string]Cooldown, now time.Time) []KeyState {
	out := make([]KeyState, len(p.Keys))
	for i, id := range p.Keys {
		out[i] = KeyState{Position: i + 1, KeyID: id}
		if c, ok := cooling[id]; ok && c.Until.After(now) {
			out[i].Wait, out[i].Class = c.Until.Sub(now), c.Class
		}
	}
	return out
}

// Reason says in words why a key cools down. Pure.
func Reason(c turnapi.ErrorClass) string {
	switch c {
	case turnapi.ClassRateLimit:
		return "rate limited"
	case turnapi.ClassAuth:
		return "refused"
	case turnapi.ClassBilling:
		return "billing"
	case "":
		return "unknown"
	}
	return string(c)
}

// Exhausted is the error of a call none of whose keys is ready (c, from
// Pick): a rate limit whose RetryAfter is the wait until the first key is
// ready again, so the next attempt comes exactly then; or, when every key
// was refused, the refusal (which no retry fixes). last is the failure of
// the call's last key, if it sent one; its text comes first. Pure.
func Exhausted(p Pool, c Choice, last *llm.Error) *llm.Error {
	class := cmp.Or(c.Class, turnapi.ClassRateLimit)
	e := &llm.Error{Class: class, Message: fmt.Sprintf("all %d keys of %s are cooling down; the first is ready in %s (%s)",
		len(p.Keys), p.Endpoint, roundWait(c.Wait), Reason(class))}
	if class == turnapi.ClassRateLimit {
		e.RetryAfter = max(c.Wait, 0)
	}
	if last != nil {
		e.Message = last.Message + "; " + e.Message
		e.Err = last
		if last.Class == class {
			e.Status = last.Status
		}
	}
	return e
}
