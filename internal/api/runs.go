package api

import (
	"cmp"
	"context"
	"errors"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// runRequest is POST /v1/runs.
type runRequest struct {
	SessionID     string   `json:"session_id"`
	Input         string   `json:"input"`
	Model         string   `json:"model"`
	MaxIterations int      `json:"max_iterations"`
	Tools         []string `json:"tools"`
	// Mode is what the message does when a turn of the session runs:
	// interrupt, queue or steer (default: busy_input_mode).
	Mode string `json:"mode"`
	// Background runs the input in a new session of its own and delivers
	// the outcome to Deliver (default local) when it ends.
	Background bool     `json:"background"`
	Deliver    []string `json:"deliver"`
	// Images are pictures sent with the input: data: URLs or https://
	// addresses, as a chat completion's image_url parts.
	Images []string `json:"images"`
}

// runStarted answers POST /v1/runs.
type runStarted struct {
	RunID     string `json:"run_id"`
	SessionID string `json:"session_id"`
	Status    string `json:"status"`
	EventsURL string `json:"events_url"`
}

// handleStartRun answers POST /v1/runs with 202 once the run's turn has
// started; approvals wait for POST /v1/runs/{id}/approval. A field the
// API does not know is a 400, not ignored. With an Idempotency-Key, a
// retry answers with the same run, as it stands now.
func (s *Server) handleStartRun(w http.ResponseWriter, r *http.Request) error {
	var req runRequest
	if err := decodeStrict(r, &req); err != nil {
		return err
	}
	session := req.SessionID
	if session != "" && !validSession(session) {
		return badParam("session_id", "invalid_session_id", "session_id %q: use 1-128 letters, digits, '.', '_', '~' or '-'", oneLine(session))
	}
	model, err := s.modelFor(req.Model)
	if err != nil {
		return err
	}
	var mode workflows.BusyMode
	if req.Mode != "" {
		if mode, err = workflows.ParseBusyMode(req.Mode); err != nil {
			return badParam("mode", "invalid_mode", "mode %q is not one of interrupt, queue, steer", oneLine(req.Mode))
		}
	}
	k, err := s.keyedOf(r, keyedRuns, session)
	if err != nil {
		return err
	}
	if k != nil && mode == workflows.BusySteer {
		return badParam("mode", "invalid_mode", "mode steer joins whatever turn runs, which is no run of the request's own: an %s does not apply to it", IdempotencyHeader)
	}
	background := req.Background || len(req.Deliver) > 0
	if background && req.Mode != "" {
		return badParam("mode", "invalid_mode", "a background run has a session of its own: mode does not apply")
	}
	if len(req.Images) > 0 {
		// A steer reaches the running turn as text: pictures go with a
		// message of their own (the configured steer becomes queue).
		switch {
		case mode == workflows.BusySteer:
			return badParam("mode", "invalid_mode", "a steer carries text only: send pictures with mode queue or interrupt")
		case req.Mode == "" && !background:
			mode = s.ownTurnMode()
		}
	}
	// What the run asks for is checked before its pictures are kept: one
	// refused for its tools or iterations leaves no picture behind. (Its
	// input is checked with the pictures' notes: pictures alone make one.)
	if err := s.checkAsks(req.Tools, req.MaxIterations); err != nil {
		return err
	}
	images, input, err := s.runPictures(r.Context(), req.Images, req.Input)
	if err != nil {
		return err
	}
	derived := false
	switch {
	case session != "":
	case k != nil:
		session, derived = k.session, true
	default:
		session = newSessionID()
	}
	treq := turnRequest{session: session, input: input, images: images, model: model, maxIterations: req.MaxIterations, tools: req.Tools, mode: mode}
	var turnID string
	switch {
	case background:
		turnID, err = s.startBackground(r.Context(), treq, req.Deliver, k, derived)
	case k != nil:
		turnID, err = s.startKeyed(r.Context(), k, treq, derived)
	default:
		turnID, err = s.startTurn(r.Context(), treq)
	}
	if err != nil {
		return err
	}
	status := "running"
	if k != nil {
		// A retry may find its run ended: the answer says so.
		if t, err := s.turnOf(r.Context(), turnID, session); err == nil && t.EndedAt != nil {
			status = t.Status
		}
	}
	id := runID(runPrefix, turnID)
	w.Header().Set("Location", "/v1/runs/"+id)
	return writeJSON(w, http.StatusAccepted, runStarted{RunID: id, SessionID: session, Status: status, EventsURL: "/v1/runs/" + id + "/events"})
}

// runPictures reads, then keeps, the pictures of a run (images[i]): the
// pictures as the turn carries them and the input followed by the lines
// that name them. A field that is not a picture refuses the run.
func (s *Server) runPictures(ctx context.Context, urls []string, input string) ([]turnapi.Image, string, error) {
	if len(urls) == 0 {
		return nil, input, nil
	}
	refs := make([]pictureRef, 0, len(urls))
	for i, u := range urls {
		refs = append(refs, pictureRef{param: "images[" + strconv.Itoa(i) + "]", url: u})
	}
	pics, err := readPictures(refs)
	if err != nil {
		return nil, "", err
	}
	images, notes, err := s.keepPictures(ctx, pics)
	if err != nil {
		return nil, "", err
	}
	return images, withNotes(input, notes), nil
}

// run is GET /v1/runs/{id}.
type run struct {
	RunID           string                     `json:"run_id"`
	SessionID       string                     `json:"session_id"`
	Status          string                     `json:"status"`
	StopReason      string                     `json:"stop_reason,omitempty"`
	Model           string                     `json:"model,omitempty"`
	Usage           usage                      `json:"usage"`
	APICalls        int                        `json:"api_calls"`
	FinalText       *string                    `json:"final_text"`
	Error           string                     `json:"error,omitempty"`
	StartedAt       time.Time                  `json:"started_at"`
	EndedAt         *time.Time                 `json:"ended_at,omitempty"`
	Iteration       int                        `json:"iteration,omitempty"`
	CurrentTool     string                     `json:"current_tool,omitempty"`
	PendingApproval *workflows.PendingApproval `json:"pending_approval,omitempty"`
	PendingQuestion *workflows.PendingQuestion `json:"pending_question,omitempty"`
}

// runPath reads the run id of the path.
func runPath(r *http.Request) (turnID, session string, err error) {
	id := r.PathValue("id")
	turnID, session, ok := parseRunID(runPrefix, id)
	if !ok {
		return "", "", notFound("no run %q: run ids look like run_<n>_<session>", oneLine(id))
	}
	return turnID, session, nil
}

// loadRun is the turn of a run (turnOf), or a 404.
func (s *Server) loadRun(r *http.Request) (*models.Turn, error) {
	turnID, session, err := runPath(r)
	if err != nil {
		return nil, err
	}
	t, err := s.turnOf(r.Context(), turnID, session)
	if errors.Is(err, models.ErrNotFound) {
		return nil, notFound("no run %s", r.PathValue("id"))
	}
	return t, err
}

// turnOf is a turn as the store and Temporal know it: the stored row,
// marked ended with its workflow's status ("terminated") when the workflow
// closed without recording its end; a turn whose first step has not
// recorded it yet is made from its workflow. models.ErrNotFound when
// neither knows it; a Temporal that does not answer is a 503 unless the
// store already said the turn ended.
func (s *Server) turnOf(ctx context.Context, turnID, session string) (*models.Turn, error) {
	t, err := s.rt.Store.Turn(ctx, turnID)
	switch {
	case err == nil && t.EndedAt != nil:
		return t, nil
	case err != nil && !errors.Is(err, models.ErrNotFound):
		return nil, err
	}
	d, derr := s.rt.Client.DescribeWorkflowExecution(ctx, turnID, "")
	var missing *serviceerror.NotFound
	switch {
	case t != nil && derr != nil:
		return t, nil // recorded running; Temporal cannot say otherwise now
	case errors.As(derr, &missing) || (derr == nil && d.GetWorkflowExecutionInfo() == nil):
		return nil, models.ErrNotFound
	case derr != nil:
		return nil, unavailable(derr)
	}
	info := d.GetWorkflowExecutionInfo()
	t = cmp.Or(t, &models.Turn{ID: turnID, SessionID: session, Status: "running", StartedAt: info.GetStartTime().AsTime()})
	if status, closed := closedStatus(info.GetStatus()); closed {
		ended := info.GetCloseTime().AsTime()
		t.Status, t.ExitReason, t.EndedAt = status, status, &ended
	}
	return t, nil
}

// closedStatus is a closed workflow's status in lower case ("terminated");
// false while it runs or continued as new. Pure.
func closedStatus(st enumspb.WorkflowExecutionStatus) (string, bool) {
	switch st {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW, enumspb.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED:
		return "", false
	}
	return strings.ToLower(strings.TrimPrefix(st.String(), "WORKFLOW_EXECUTION_STATUS_")), true
}

// unavailable is a 503 for Temporal or the store not answering.
func unavailable(err error) *apiError {
	return errorf(http.StatusServiceUnavailable, typeServer, "unavailable", "the engine does not answer right now; try again (%s)", oneLine(err.Error()))
}

// signalRun is the outcome of a control signal sent to a run's turn: a
// turn that ended meanwhile is a 409.
func (s *Server) signalRun(r *http.Request, err error) error {
	var missing *serviceerror.NotFound
	if errors.As(err, &missing) {
		return errorf(http.StatusConflict, typeConflict, "run_ended", "run %s has ended", r.PathValue("id"))
	}
	return err
}

// runningProgress is the run's running turn and what it waits for; a
// run that has ended, or ends meanwhile, is a 409.
func (s *Server) runningProgress(r *http.Request) (*models.Turn, workflows.Progress, error) {
	var p workflows.Progress
	t, err := s.runningTurn(r)
	if err != nil {
		return nil, p, err
	}
	p, err = s.rt.Progress(r.Context(), t.ID)
	var missing *serviceerror.NotFound
	if errors.As(err, &missing) {
		return nil, p, errorf(http.StatusConflict, typeConflict, "run_ended", "run %s has ended", r.PathValue("id"))
	}
	return t, p, err
}

// handleGetRun answers GET /v1/runs/{id}: the stored turn, and while it
// runs what it does and waits for.
func (s *Server) handleGetRun(w http.ResponseWriter, r *http.Request) error {
	t, err := s.loadRun(r)
	if err != nil {
		return err
	}
	out := run{RunID: r.PathValue("id"), SessionID: t.SessionID, Status: t.Status, StopReason: t.ExitReason, Model: t.Model,
		Usage:    usage{PromptTokens: t.PromptTokens, CompletionTokens: t.CompletionTokens, TotalTokens: t.TotalTokens},
		APICalls: t.APICalls, Error: oneLine(t.Error), StartedAt: t.StartedAt, EndedAt: t.EndedAt}
	if t.EndedAt != nil {
		text := t.FinalResponse
		out.FinalText = &text
	} else if p, err := s.rt.Progress(r.Context(), t.ID); err == nil {
		out.Iteration, out.CurrentTool, out.APICalls = p.Iteration, p.CurrentTool, p.APICalls
		out.PendingApproval, out.PendingQuestion = p.PendingApproval, p.PendingQuestion
	}
	return writeJSON(w, http.StatusOK, out)
}

// handleRunEvents answers GET /v1/runs/{id}/events: the run's live events
// as SSE, each with its id; a client resumes after the id it saw last
// (Last-Event-ID, or ?after=N) and misses none, gets none twice. The
// stream ends after the run's done event.
func (s *Server) handleRunEvents(w http.ResponseWriter, r *http.Request) error {
	t, err := s.loadRun(r)
	if err != nil {
		return err
	}
	after, err := lastEventID(r)
	if err != nil {
		return err
	}
	sse, err := newSSE(w)
	if err != nil {
		return nil
	}
	_ = s.followEvents(r.Context(), t.ID, after, sse, func(ev eventOut) error {
		id := ""
		if ev.ID > 0 {
			id = strconv.FormatInt(ev.ID, 10)
		}
		return sse.event(ev.Kind, id, ev.payload())
	})
	return nil
}

// runningTurn is the run's turn when it is running; a 409 otherwise.
func (s *Server) runningTurn(r *http.Request) (*models.Turn, error) {
	t, err := s.loadRun(r)
	if err != nil {
		return nil, err
	}
	if t.EndedAt != nil {
		return nil, errorf(http.StatusConflict, typeConflict, "run_ended", "run %s has ended (%s)", r.PathValue("id"), t.Status)
	}
	return t, nil
}

// handleStopRun answers POST /v1/runs/{id}/stop: the model call or tool
// in flight is cancelled and the turn ends interrupted.
func (s *Server) handleStopRun(w http.ResponseWriter, r *http.Request) error {
	t, err := s.runningTurn(r)
	if err != nil {
		return err
	}
	if err := s.signalRun(r, s.rt.Signal(r.Context(), t.ID, workflows.SignalInterrupt, "stopped through the API")); err != nil {
		return err
	}
	return writeJSON(w, http.StatusAccepted, map[string]string{"run_id": r.PathValue("id"), "status": "stopping"})
}

// textBody is {text}.
type textBody struct {
	Text string `json:"text"`
}

// handleSteerRun answers POST /v1/runs/{id}/steer {text}: the text reaches
// the running turn at its next safe point (or, if the turn ends first,
// becomes the session's next message).
func (s *Server) handleSteerRun(w http.ResponseWriter, r *http.Request) error {
	var body textBody
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	if err := checkInput(body.Text); err != nil {
		return err
	}
	t, err := s.runningTurn(r)
	if err != nil {
		return err
	}
	reached, err := s.startTurn(r.Context(), turnRequest{session: t.SessionID, input: body.Text, mode: workflows.BusySteer})
	if err != nil {
		return err
	}
	// The turn may have ended meanwhile: the text is then the session's
	// next message, a run of its own, which the answer names.
	out := map[string]string{"run_id": r.PathValue("id"), "status": "steered"}
	if reached != t.ID {
		out["status"], out["next_run_id"] = "ended_first", runID(runPrefix, reached)
	}
	return writeJSON(w, http.StatusAccepted, out)
}

// approvalBody is POST /v1/runs/{id}/approval.
type approvalBody struct {
	Choice string `json:"choice"`
	CallID string `json:"call_id"`
}

// handleApproveRun answers POST /v1/runs/{id}/approval {choice}: once,
// session, always or deny, for the command the run waits on.
func (s *Server) handleApproveRun(w http.ResponseWriter, r *http.Request) error {
	var body approvalBody
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	choice := turnapi.ApprovalChoice(strings.ToLower(strings.TrimSpace(body.Choice)))
	if !choice.Known() {
		return badRequest("invalid_choice", "choice %q is not one of once, session, always, deny", oneLine(body.Choice))
	}
	// A grant outlives the run: it must name the command the client saw.
	if (choice == turnapi.ChoiceSession || choice == turnapi.ChoiceAlways) && body.CallID == "" {
		return badRequest("call_id_required", "choice %s remembers the command: send the call_id of the pending approval (GET /v1/runs/{id})", choice)
	}
	t, p, err := s.runningProgress(r)
	if err != nil {
		return err
	}
	if p.PendingApproval == nil || (body.CallID != "" && body.CallID != p.PendingApproval.CallID) {
		return errorf(http.StatusConflict, typeConflict, "no_pending_approval", "run %s waits on no command approval%s", r.PathValue("id"), callNote(body.CallID))
	}
	callID := p.PendingApproval.CallID
	if err := s.signalRun(r, s.rt.Decide(r.Context(), t.ID, callID, choice)); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"run_id": r.PathValue("id"), "call_id": callID, "choice": string(choice),
		"command": p.PendingApproval.Command})
	return nil
}

// handleAnswerRun answers POST /v1/runs/{id}/answer {text}: the answer to
// the question the run asked (the clarify tool).
func (s *Server) handleAnswerRun(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Text   string `json:"text"`
		CallID string `json:"call_id"`
	}
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	if err := checkInput(body.Text); err != nil {
		return err
	}
	t, p, err := s.runningProgress(r)
	if err != nil {
		return err
	}
	if p.PendingQuestion == nil || (body.CallID != "" && body.CallID != p.PendingQuestion.CallID) {
		return errorf(http.StatusConflict, typeConflict, "no_pending_question", "run %s waits on no answer%s", r.PathValue("id"), callNote(body.CallID))
	}
	if err := s.signalRun(r, s.rt.Answer(r.Context(), t.ID, p.PendingQuestion.CallID, body.Text)); err != nil {
		return err
	}
	return writeJSON(w, http.StatusAccepted, map[string]string{"run_id": r.PathValue("id"), "call_id": p.PendingQuestion.CallID})
}

func callNote(id string) string {
	if id == "" {
		return ""
	}
	return " with call id " + oneLine(id)
}
