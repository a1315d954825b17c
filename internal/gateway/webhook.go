package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Hooked is a platform whose updates come by webhook, a request from the
// platform to Talaria's API, rather than by Poll: the gateway never polls
// it and it holds no lease (whichever process the request reaches takes
// it; the update's id keeps a retried request from making a second turn).
type Hooked interface {
	Platform
	// Hook reads a webhook request (its body already read): the updates
	// it carries and what the platform expects back once they are taken.
	// A request whose signature does not hold is ErrForged, and nothing
	// in it is read.
	Hook(r *http.Request, body []byte) (Hooking, error)
}

// Hooking is what a webhook request carried, and its answer.
type Hooking struct {
	Updates []Update
	// ContentType and Body are the answer (200) once every update is
	// taken; empty: no body. Header holds more of its headers.
	ContentType string
	Body        []byte
	Header      http.Header
}

// ErrForged means a webhook request's signature does not hold: it is
// refused (403) and its body is never logged.
var ErrForged = errors.New("gateway: the webhook's signature does not hold")

// maxWebhookBody bounds a webhook request's body.
const maxWebhookBody = 1 << 20

// webhookWithin bounds how long a webhook request waits for its chat's
// earlier updates and takes its own before it is answered 503.
const webhookWithin = 30 * time.Second

// takeInOrder takes a webhook's update (takeGuarded) once every update of
// its chat that came before it to this process's line (after its
// request's signature was checked) is taken (chatOrder).
func (g *Gateway) takeInOrder(ctx context.Context, p Platform, u Update) error {
	leave, err := g.order.enter(ctx, p.Name()+"/"+u.Chat.ID)
	if err != nil {
		return fmt.Errorf("wait for the chat's earlier messages: %w", err)
	}
	defer leave()
	return g.takeGuarded(ctx, p, u)
}

// Webhooks serves the webhooks of the gateway's hooked platforms at
// /webhooks/<platform> (and the paths under it, which the platform's Hook
// reads: SMS serves the files it sends there). A forged request is
// refused with 403 and logged without its body; an update that cannot be
// taken now is answered 503, so the platform sends it again. The updates
// of one chat being taken are taken one after the other, in the order
// their requests were read (takeInOrder); one answered 503 and sent again
// comes after those that came meanwhile. The route
// needs no API key: the platform's signature is what lets a request in.
func (g *Gateway) Webhooks() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/webhooks/"), "/")
		p, ok := g.platform(name).(Hooked)
		if !ok {
			http.Error(w, "no such webhook", http.StatusNotFound)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxWebhookBody+1))
		if err != nil || len(body) > maxWebhookBody {
			http.Error(w, "the body is too large", http.StatusRequestEntityTooLarge)
			return
		}
		h, err := p.Hook(r, body)
		switch {
		case errors.Is(err, ErrForged):
			g.logger.Warn("gateway: a forged webhook refused", "platform", name, "remote", r.RemoteAddr, "reason", err.Error())
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		case err != nil:
			g.logger.Info("gateway: a webhook not understood", "platform", name, "error", err.Error())
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		// The request's own context ends when the platform gives up; the
		// handover goes on to its end either way.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), cmp.Or(g.webhookWithin, webhookWithin))
		defer cancel()
		for _, u := range h.Updates {
			if err := g.takeInOrder(ctx, p, u); err != nil {
				g.logger.Warn("gateway: webhook update not taken, the platform sends it again", "platform", name, "update", u.ID, "error", err)
				http.Error(w, "try again", http.StatusServiceUnavailable)
				return
			}
			g.note(ctx, p, u.ID, "")
		}
		for k, v := range h.Header {
			w.Header()[k] = v
		}
		if h.ContentType != "" {
			w.Header().Set("Content-Type", h.ContentType)
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(h.Body)
	})
}
