package api

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/converter"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// Idempotent run creation. A request that creates a run (POST /v1/runs,
// /v1/chat/completions, /v1/responses) may carry an Idempotency-Key; a
// retry with the same key gets the same run. Nothing of it lives in this
// process: the key becomes the message's request id, which the session's
// coordinator takes once (its handoff dedupe), and, for a request that
// names no session, the id of the session the run is the first turn of,
// so the run is found again from the store and Temporal after any
// restart. A reused key is checked against the run it names, as Temporal
// recorded that run's start: another input, model, budget, tool list or
// kind of run is a 422.

// IdempotencyHeader is the header of a request's idempotency key.
const IdempotencyHeader = "Idempotency-Key"

// maxIdempotencyKey bounds a key, in characters.
const maxIdempotencyKey = 255

// Routes a key is scoped to, beside the API key and the session named.
const (
	keyedRuns      = "runs"
	keyedChat      = "chat"
	keyedResponses = "responses"
)

// keyed is a request's idempotency key and what derives from it.
type keyed struct {
	// key is the key as the client sent it.
	key string
	// requestID is the message's request id: the coordinator of a
	// session takes a message with a given request id once.
	requestID string
	// session is the session of a request that names none: the run is its
	// first turn.
	session string
}

// keyError refuses a malformed key. Pure.
func keyError(why string) error {
	return badParam(IdempotencyHeader, "invalid_idempotency_key",
		"the %s header %s: send 1-%d printable ASCII characters (bare, or as a quoted string), one key per request",
		IdempotencyHeader, why, maxIdempotencyKey)
}

// parseIdempotencyKey reads the header's values: "" when there is none.
// A key is 1-255 printable ASCII characters, sent bare (as Stripe's
// clients send it) or as a quoted string (a Structured Field string, as
// the IETF draft writes it). Pure.
func parseIdempotencyKey(values []string) (string, error) {
	switch {
	case len(values) == 0:
		return "", nil
	case len(values) > 1:
		return "", keyError(fmt.Sprintf("is sent %d times", len(values)))
	}
	v := strings.TrimSpace(values[0])
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		unquoted, ok := unquoteSFString(v[1 : len(v)-1])
		if !ok {
			return "", keyError("is a quoted string with a bare quote or a stray backslash")
		}
		v = unquoted
	}
	switch {
	case v == "":
		return "", keyError("is empty")
	case len(v) > maxIdempotencyKey:
		return "", keyError(fmt.Sprintf("is %d characters long", len(v)))
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return "", keyError(fmt.Sprintf("holds byte 0x%02x, which is not printable ASCII", v[i]))
		}
	}
	return v, nil
}

// unquoteSFString is the inside of a Structured Field string unescaped
// (\" and \\); false for a bare quote or another escape. Pure.
func unquoteSFString(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return "", false
		case '\\':
			if i+1 == len(s) || (s[i+1] != '"' && s[i+1] != '\\') {
				return "", false
			}
			i++
			b.WriteByte(s[i])
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// keyedOf is the request's idempotency key, nil when it carries none. The
// key is scoped to the API key, the route and the session the request
// names ("" for none): the same key sent by another holder of another
// key, to another route or for another session is another request.
func (s *Server) keyedOf(r *http.Request, route, session string) (*keyed, error) {
	key, err := parseIdempotencyKey(r.Header.Values(IdempotencyHeader))
	if err != nil || key == "" {
		return nil, err
	}
	return deriveKeyed(s.keySum[:], route, session, key), nil
}

// deriveKeyed derives a key's request id and session: an HMAC under the
// API key's digest, so they say nothing of the key and no other API key
// reaches them. Pure.
func deriveKeyed(secret []byte, route, session, key string) *keyed {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(route + "\x00" + session + "\x00" + key))
	sum := hex.EncodeToString(mac.Sum(nil))
	return &keyed{key: key, requestID: "api/idempotency/" + sum, session: "api-" + sum[:24]}
}

// ask is what a keyed request asks of its run, in the terms the run's
// start records it, so that a retry can be compared with the run.
type ask struct {
	Input string
	Model string
	// MaxIterations is 0 and Tools nil when the request does not state
	// them: the run's then come from the configuration, which may have
	// changed since.
	MaxIterations int
	Tools         []string
	Background    bool
	Deliver       []string
}

// matches reports whether the run recorded as rec is the one want asks
// for. Pure.
func (want ask) matches(rec ask) bool {
	return want.Input == rec.Input && want.Model == rec.Model && want.Background == rec.Background &&
		(want.MaxIterations == 0 || want.MaxIterations == rec.MaxIterations) &&
		(want.Tools == nil || sameSet(want.Tools, rec.Tools)) &&
		(!want.Background || slices.Equal(want.Deliver, rec.Deliver))
}

// sameSet reports whether a and b hold the same names. Pure.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// askOf is what req asks of its run; deliver is a background run's
// targets (nil: a run in the foreground).
func (s *Server) askOf(req turnRequest, deliver []string) ask {
	in := s.turnInput(req)
	a := ask{Input: in.UserMessage, Model: in.Model, Background: deliver != nil, Deliver: deliver}
	if req.maxIterations > 0 {
		a.MaxIterations = in.MaxIterations
	}
	if len(req.tools) > 0 {
		a.Tools = in.Tools
		if a.Background {
			a.Tools = engine.UnattendedTools(s.cfg, in.Tools)
		}
	}
	return a
}

// reusedKey is the 422 of a key sent again with another request.
func reusedKey(k *keyed, turnID string) error {
	return errorf(http.StatusUnprocessableEntity, typeInvalidRequest, "idempotency_key_reused",
		"the %s %q was sent with another request, which became run %s: a new request needs a new key",
		IdempotencyHeader, oneLine(k.key), runID(runPrefix, turnID))
}

// startKeyed starts req's turn once per key: the run the key names when
// there is one (the request retried), else the turn of a message handed
// over under the key's request id, which the coordinator takes once even
// if an earlier attempt's handoff got through unseen. derived: the
// session is the key's own. The run is then checked against req.
func (s *Server) startKeyed(ctx context.Context, k *keyed, req turnRequest, derived bool) (string, error) {
	if err := s.checkTurnRequest(req); err != nil {
		return "", err
	}
	turnID, err := s.keyedTurn(ctx, k, req.session, derived)
	if err != nil {
		return "", err
	}
	if turnID == "" {
		req.requestID = k.requestID
		if turnID, err = s.startTurn(ctx, req); err != nil {
			return "", err
		}
	}
	var in workflows.TurnInput
	parent, ok, err := s.recordedStart(ctx, turnID, &in)
	switch {
	case err != nil:
		return "", err
	case !ok:
		return turnID, nil // Temporal no longer holds its start: nothing to compare
	}
	rec := ask{Input: in.UserMessage, Model: in.Model, MaxIterations: in.MaxIterations, Tools: in.Tools,
		Background: parent == workflows.GoalWorkflowID(in.SessionID) || s.goalRan(ctx, in.SessionID)}
	if !s.askOf(req, nil).matches(rec) {
		return "", reusedKey(k, turnID)
	}
	return turnID, nil
}

// keyedTurn is the turn a key already names in session, "" for none
// found: the session's latest turn when the key's message reserved it,
// or, in the key's own session, its first turn. A turn reserved whose
// workflow has not started yet is not found: the handoff that follows
// reaches the coordinator that reserved it, which knows the request.
func (s *Server) keyedTurn(ctx context.Context, k *keyed, session string, derived bool) (string, error) {
	root, err := s.rt.Conversation(ctx, session)
	if err != nil {
		return "", err
	}
	sess, err := s.rt.Store.Session(ctx, root)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("find the run of an idempotency key in session %s: %w", root, err)
	}
	n := 0
	switch {
	case sess.LastReservation == k.requestID:
		n = sess.TurnCount
	case derived:
		n = 1
	}
	if n < 1 || n > sess.TurnCount {
		return "", nil
	}
	turnID := workflows.TurnWorkflowID(root, n)
	switch _, err := s.turnOf(ctx, turnID, root); {
	case errors.Is(err, models.ErrNotFound):
		return "", nil
	case err != nil:
		return "", err
	}
	return turnID, nil
}

// goalRan reports whether a goal (a background run) ran in session: its
// turns are the session coordinator's children, like any other message's
// (a background run's session is its own, so its turns are the goal's).
func (s *Server) goalRan(ctx context.Context, session string) bool {
	_, err := s.rt.Client.DescribeWorkflowExecution(ctx, workflows.GoalWorkflowID(session), "")
	return err == nil
}

// recordedStart decodes the input workflowID's latest run was started
// with into v, and returns the id of the workflow that started it; ok
// false when Temporal no longer holds it.
func (s *Server) recordedStart(ctx context.Context, workflowID string, v any) (parent string, ok bool, err error) {
	it := s.rt.Client.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if !it.HasNext() {
		return "", false, nil
	}
	ev, err := it.Next()
	var missing *serviceerror.NotFound
	switch {
	case errors.As(err, &missing):
		return "", false, nil
	case err != nil:
		return "", false, unavailable(fmt.Errorf("read the start of %s: %w", workflowID, err))
	}
	attrs := ev.GetWorkflowExecutionStartedEventAttributes()
	if attrs == nil {
		return "", false, nil
	}
	if err := converter.GetDefaultDataConverter().FromPayloads(attrs.GetInput(), v); err != nil {
		return "", false, fmt.Errorf("decode the start of %s: %w", workflowID, err)
	}
	return attrs.GetParentWorkflowExecution().GetWorkflowId(), true, nil
}

// seedKeyed seeds the key's own session once: a retry finds the messages
// the first attempt stored, which must be its own (a 422 otherwise), and
// stores nothing more.
func (s *Server) seedKeyed(ctx context.Context, k *keyed, session, model string, msgs []models.Message) error {
	stored, err := s.rt.Store.Messages(ctx, session)
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return fmt.Errorf("read the seeds of session %s: %w", session, err)
	}
	if len(stored) == 0 {
		// Nothing stored yet, or a turn reserved by an attempt that had
		// nothing to seed and has not begun.
		sess, err := s.rt.Store.Session(ctx, session)
		if err == nil && sess.TurnCount > 0 && len(msgs) > 0 {
			return reusedConversation(k)
		}
		return s.seedSession(ctx, session, model, msgs)
	}
	var seeds []models.Message
	for _, m := range stored {
		if strings.HasPrefix(m.IdemKey, seedPrefix(session)) {
			seeds = append(seeds, m)
		}
	}
	if !sameConversation(seeds, msgs) {
		return reusedConversation(k)
	}
	return nil
}

// reusedConversation is the 422 of a key sent again with other earlier
// messages.
func reusedConversation(k *keyed) error {
	return errorf(http.StatusUnprocessableEntity, typeInvalidRequest, "idempotency_key_reused",
		"the %s %q was sent with another conversation: a new request needs a new key", IdempotencyHeader, oneLine(k.key))
}

// sameConversation reports whether a and b are the same messages, role
// and text, in order. Pure.
func sameConversation(a, b []models.Message) bool {
	return slices.EqualFunc(a, b, func(x, y models.Message) bool { return x.Role == y.Role && x.Content == y.Content })
}

// keyedGoal is the run a retried background request names: the first
// turn of the goal already started in its session, when that goal is
// this request's (a 422 otherwise, and when the key's own session holds
// no goal); "" when the session is in use by something else.
func (s *Server) keyedGoal(ctx context.Context, k *keyed, req turnRequest, deliver []string, derived bool) (string, error) {
	var goal workflows.GoalInput
	_, ok, err := s.recordedStart(ctx, workflows.GoalWorkflowID(req.session), &goal)
	turnID := workflows.TurnWorkflowID(req.session, 1)
	switch {
	case err != nil:
		return "", err
	case !ok && derived:
		return "", reusedKey(k, turnID)
	case !ok:
		return "", nil
	}
	rec := ask{Input: goal.Goal, Model: goal.Turn.Model, MaxIterations: goal.Turn.MaxIterations, Tools: goal.Turn.Tools,
		Background: true, Deliver: goal.Deliver}
	if !s.askOf(req, deliver).matches(rec) {
		return "", reusedKey(k, turnID)
	}
	return turnID, nil
}
