package gateway

import (
	"context"
	"crypto/rand"
	"strings"
	"sync"
	"time"
)

// PairingTTL is how long a pairing code is good for.
const PairingTTL = 10 * time.Minute

// pairingAlphabet leaves out letters and digits that read alike.
const pairingAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

// NewPairingCode makes a code a user sends the bot to be let in:
// "XXXX-XXXX", 40 bits from crypto/rand.
func NewPairingCode() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	out := make([]byte, 0, 9)
	for i, c := range b {
		if i == 4 {
			out = append(out, '-')
		}
		out = append(out, pairingAlphabet[int(c)%len(pairingAlphabet)])
	}
	return string(out)
}

// normalizeCode reads a code as a person may type it. Pure.
func normalizeCode(s string) string {
	s = strings.ToUpper(strings.Join(strings.Fields(s), ""))
	s = strings.ReplaceAll(s, "-", "")
	if len(s) != 8 {
		return ""
	}
	return s[:4] + "-" + s[4:]
}

// pairAttempts bounds the pairing attempts of one user: a code is not
// guessed by trying.
type pairAttempts struct {
	mu   sync.Mutex
	seen map[string][]time.Time
}

// allow records an attempt of user and reports whether it may go on: at
// most 5 an hour.
func (p *pairAttempts) allow(user string, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen == nil {
		p.seen = map[string][]time.Time{}
	}
	recent := p.seen[user][:0]
	for _, t := range p.seen[user] {
		if now.Sub(t) < time.Hour {
			recent = append(recent, t)
		}
	}
	if len(recent) >= 5 || len(p.seen) > 10000 {
		p.seen[user] = recent
		return false
	}
	p.seen[user] = append(recent, now)
	return true
}

// allowed reports whether user reaches the agent on p: in the
// configuration's list, or paired with a code.
func (g *Gateway) allowed(ctx context.Context, p Platform, user string) bool {
	if g.accessOf(p.Name()).Allowed(user) {
		return true
	}
	if user == "" {
		return false
	}
	ok, err := g.rt.Store.Paired(ctx, p.Name(), user)
	if err != nil {
		g.logger.Warn("gateway: look up a paired user", "platform", p.Name(), "error", err)
	}
	return ok
}

// tryPair handles "/pair CODE" from a stranger in a DM: a valid code lets
// them in. It reports whether the update was a pairing attempt.
func (g *Gateway) tryPair(ctx context.Context, p Platform, u Update) (bool, error) {
	c, ok := ParseCommand(u.Text, p.BotName())
	if !ok || c.Name != "pair" || u.Chat.Kind != ChatDM {
		return false, nil
	}
	answer := "That code is not valid (codes last 10 minutes and work once)."
	switch code := normalizeCode(c.Args); {
	case !g.pairing.allow(u.User, time.Now()):
		answer = "Too many attempts; try again in an hour."
	case code != "":
		paired, err := g.rt.Store.Pair(ctx, p.Name(), code, u.User, time.Now())
		if err != nil {
			return true, err
		}
		if paired {
			answer = "Paired: you can talk to the agent now."
			g.logger.Info("gateway: a user paired", "platform", p.Name(), "user", u.User)
		}
	}
	_, err := p.SendPart(ctx, Outgoing{ChatID: u.Chat.ID, ReplyTo: u.MessageID}, p.Parts(answer)[0])
	return true, err
}
