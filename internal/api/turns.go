package api

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// Bounds of what a request may ask of a turn.
const (
	maxInputBytes     = workflows.MaxMessageBytes
	maxIterationsCap  = 10000
	maxModelNameBytes = 200
	maxToolNames      = 64
)

// DefaultModelID is the model the API lists first: whatever model the
// worker runs turns with.
const DefaultModelID = "talaria"

// turnRequest is what a way in asks of a turn.
type turnRequest struct {
	session string
	input   string
	// images are the pictures sent with input (stored, by reference).
	images        []turnapi.Image
	model         string
	maxIterations int
	tools         []string
	mode          workflows.BusyMode
	// approvals is the turn's approval mode: a client that cannot answer
	// (an OpenAI client) gets deny, so nothing waits on a person no one
	// asks.
	approvals workflows.ApprovalMode
	// requestID is the message's request id when the request has an
	// Idempotency-Key ("": a new one), so its session takes it once.
	requestID string
}

// modelFor is the turn's explicit model for a requested model id ("": the
// worker's), or an error for a model the API does not offer.
func (s *Server) modelFor(id string) (string, error) {
	if id == "" || id == DefaultModelID {
		return "", nil
	}
	if len(id) > maxModelNameBytes {
		return "", badRequest("model_not_found", "the model name is longer than %d bytes", maxModelNameBytes)
	}
	for _, m := range s.modelIDs()[1:] {
		if m == id {
			return id, nil
		}
	}
	return "", errorf(http.StatusNotFound, typeInvalidRequest, "model_not_found",
		"the model %q is not offered here: use %q (GET /v1/models lists the others)", id, DefaultModelID)
}

// modelIDs are the models GET /v1/models lists: talaria first, then the
// configured model and the fallback providers' models.
func (s *Server) modelIDs() []string {
	ids := []string{DefaultModelID}
	add := func(m string) {
		if m == "" {
			return
		}
		for _, have := range ids {
			if have == m {
				return
			}
		}
		ids = append(ids, m)
	}
	add(s.cfg.Model.Name)
	for _, p := range s.cfg.FallbackProviders {
		add(p.Model)
	}
	return ids
}

// checkInput validates the text of a message. Pure.
func checkInput(text string) error {
	switch {
	case strings.TrimSpace(text) == "":
		return badRequest("empty_input", "the message is empty")
	case len(text) > maxInputBytes:
		return errorf(http.StatusRequestEntityTooLarge, typeInvalidRequest, "input_too_large", "the message is longer than %d bytes", maxInputBytes)
	}
	return nil
}

// checkTools validates the tool names a run asks for. Pure.
func checkTools(names []string) error {
	if len(names) > maxToolNames {
		return badRequest("invalid_tools", "at most %d tool names", maxToolNames)
	}
	for _, n := range names {
		if n == "" || len(n) > 64 || strings.Trim(n, "abcdefghijklmnopqrstuvwxyz0123456789_-") != "" {
			return badRequest("invalid_tools", "tool name %q: use lower-case letters, digits, '_' or '-'", oneLine(n))
		}
	}
	return nil
}

// startTurn hands the request's message to its session and returns the
// turn it became, once it started. The message is durable from there.
func (s *Server) startTurn(ctx context.Context, req turnRequest) (string, error) {
	if err := s.checkTurnRequest(req); err != nil {
		return "", err
	}
	in := s.turnInput(req)
	mode := req.mode
	if mode == "" {
		m, err := workflows.ParseBusyMode(s.cfg.BusyInputMode)
		if err != nil {
			return "", err
		}
		mode = m
	}
	var turnID string
	var err error
	if req.requestID != "" {
		turnID, err = s.rt.Deliver(ctx, workflows.Message{RequestID: req.requestID, Text: in.UserMessage, Mode: mode, Turn: in})
	} else {
		turnID, err = s.rt.StartMessage(ctx, in, mode)
	}
	if err != nil {
		if ctx.Err() != nil {
			return "", errorf(499, typeInvalidRequest, "client_closed", "the client went away before the turn started")
		}
		return "", fmt.Errorf("start a turn in session %s: %w", req.session, err)
	}
	return turnID, nil
}

// startOwnTurn starts the turn of a chat completion or a response in
// req.session or, when it names none, in a new session that begins with
// prior (a client that keeps the conversation itself sends it whole each
// time). With a key, that new session is the key's own, and a retry gets
// the same turn (see startKeyed). It returns the turn and its session.
func (s *Server) startOwnTurn(ctx context.Context, k *keyed, req turnRequest, prior []models.Message) (turnID, session string, err error) {
	if err := s.checkTurnRequest(req); err != nil {
		return "", "", err
	}
	derived := false
	if req.session == "" {
		switch {
		case k != nil:
			req.session, derived = k.session, true
			err = s.seedKeyed(ctx, k, req.session, req.model, prior)
		default:
			req.session = newSessionID()
			err = s.seedSession(ctx, req.session, req.model, prior)
		}
		if err != nil {
			return "", "", err
		}
	}
	if k != nil {
		turnID, err = s.startKeyed(ctx, k, req, derived)
	} else {
		turnID, err = s.startTurn(ctx, req)
	}
	return turnID, req.session, err
}

// turnInput is the turn a request asks for. Pure.
func (s *Server) turnInput(req turnRequest) workflows.TurnInput {
	in := engine.TurnTemplate(s.cfg, s.workdir)
	in.SessionID, in.UserMessage, in.Tools = req.session, req.input, tools.ExpandToolsets(req.tools)
	in.Images = req.images
	in.Model = req.model
	if req.maxIterations > 0 {
		in.MaxIterations = req.maxIterations
	}
	if req.approvals != "" {
		in.Approvals.Mode = req.approvals
	}
	return in
}

// waitResult waits for a turn's result. A turn whose workflow failed,
// was terminated or timed out is a 502 turn_error.
func (s *Server) waitResult(ctx context.Context, turnID string) (workflows.ConversationResult, error) {
	res, err := s.rt.WaitTurn(ctx, turnID)
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil:
		return res, errorf(499, typeInvalidRequest, "client_closed", "the client went away; the turn goes on")
	}
	code := "failed"
	if t, terr := s.turnOf(context.WithoutCancel(ctx), turnID, ""); terr == nil && t.EndedAt != nil {
		code = t.ExitReason
	}
	return res, errorf(http.StatusBadGateway, typeTurn, code, "the turn ended without a result (%s): %s", code, oneLine(err.Error()))
}

// checkTurnRequest validates what a request asks of a turn, before
// anything is stored. Pure but for the configuration it reads.
func (s *Server) checkTurnRequest(req turnRequest) error {
	if err := checkInput(req.input); err != nil {
		return err
	}
	return s.checkAsks(req.tools, req.maxIterations)
}

// checkAsks checks the tool names and the iterations a request asks for.
func (s *Server) checkAsks(tools []string, maxIterations int) error {
	if err := checkTools(tools); err != nil {
		return err
	}
	if limit := s.maxIterations(); maxIterations < 0 || maxIterations > limit {
		return badRequest("invalid_max_iterations", "max_iterations must be between 1 and %d (the server's max_iterations)", limit)
	}
	return nil
}

// maxIterations is the most iterations a request may ask for: the
// server's max_iterations (a sender narrows the budget, never widens it).
func (s *Server) maxIterations() int {
	if s.cfg.MaxIterations > 0 {
		return min(s.cfg.MaxIterations, maxIterationsCap)
	}
	return maxIterationsCap
}

// ownTurnMode is the busy-input mode of a request that wants a turn of
// its own (a chat completion, a response): the configured one, but never
// steer, which would answer with another request's turn.
func (s *Server) ownTurnMode() workflows.BusyMode {
	if m, err := workflows.ParseBusyMode(s.cfg.BusyInputMode); err == nil && m != workflows.BusySteer {
		return m
	}
	return workflows.BusyQueue
}

// sessionHeader is the session a request names by header, or "" for none;
// an invalid one is an error.
func sessionHeader(r *http.Request) (string, error) {
	id := cmp.Or(r.Header.Get("X-Talaria-Session-Id"), r.Header.Get("X-Hermes-Session-Id"))
	if id != "" && !validSession(id) {
		return "", badRequest("invalid_session_id", "session id %q: use 1-128 letters, digits, '.', '_', '~' or '-'", oneLine(id))
	}
	return id, nil
}
