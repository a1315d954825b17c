package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/talaria-agent/talaria/internal/cronjob"
	"github.com/talaria-agent/talaria/models"
)

// jobRoutes registers /api/jobs: the scheduled jobs of `talaria cron`,
// checked by the same rules (cronjob) and answered in the shapes `cron
// show -o json` and `cron runs -o json` print. A job is named in the path
// by its id or its name.
func (s *Server) jobRoutes(handle func(string, handlerFunc)) {
	handle("GET /api/jobs", s.handleListJobs)
	handle("POST /api/jobs", s.handleCreateJob)
	handle("GET /api/jobs/{id}", s.handleGetJob)
	handle("PATCH /api/jobs/{id}", s.handleEditJob)
	handle("DELETE /api/jobs/{id}", s.handleDeleteJob)
	handle("POST /api/jobs/{id}/pause", s.handleToggleJob(false))
	handle("POST /api/jobs/{id}/resume", s.handleToggleJob(true))
	handle("POST /api/jobs/{id}/run", s.handleRunJob)
	handle("GET /api/jobs/{id}/runs", s.handleJobRuns)
}

// jobRequest is POST /api/jobs: `talaria cron add`'s flags.
type jobRequest struct {
	Name          string   `json:"name"`
	Schedule      string   `json:"schedule"`
	TimeZone      string   `json:"time_zone"`
	Prompt        string   `json:"prompt"`
	Deliver       []string `json:"deliver"`
	Model         string   `json:"model"`
	MaxIterations int      `json:"max_iterations"`
	Tools         []string `json:"tools"`
	Overlap       string   `json:"overlap"`
	CatchUp       string   `json:"catch_up"`
	// CatchUpWindow is a Go duration ("1h", "90m"; default 1h).
	CatchUpWindow string `json:"catch_up_window"`
	// PreRunScript is refused: see checkNoPreRun.
	PreRunScript *string `json:"pre_run_script"`
}

// jobEdit is PATCH /api/jobs/{id}: `talaria cron edit`'s flags; the
// fields given replace the job's, the others stay.
type jobEdit struct {
	Schedule      *string   `json:"schedule"`
	TimeZone      *string   `json:"time_zone"`
	Prompt        *string   `json:"prompt"`
	Model         *string   `json:"model"`
	Deliver       *[]string `json:"deliver"`
	Tools         *[]string `json:"tools"`
	MaxIterations *int      `json:"max_iterations"`
	Overlap       *string   `json:"overlap"`
	CatchUp       *string   `json:"catch_up"`
	PreRunScript  *string   `json:"pre_run_script"`
}

// checkNoPreRun refuses a pre-run script: it is a shell script the
// scheduler runs on this machine before each run, outside the approvals
// an agent's commands go through, so only the CLI (cron add --pre-run)
// sets it. A job that has one keeps it through PATCH.
func checkNoPreRun(script *string) error {
	if script == nil {
		return nil
	}
	return badRequest("pre_run_script_not_allowed",
		"pre_run_script cannot be set through the API (it runs shell commands without approval): set it with talaria cron add --pre-run")
}

// decodeStrict is decodeJSON refusing fields v does not have.
func decodeStrict(r *http.Request, v any) error {
	var raw json.RawMessage
	if err := decodeJSON(r, &raw); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return misfit(err)
	}
	return nil
}

// misfit says, in the request's terms, why a body that is JSON does not
// fit what the route takes: a field of the wrong type or one it does not
// know, named in param.
func misfit(err error) error {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) && typ.Field != "" {
		return badParam(typ.Field, "invalid_json", "field %s: want %s, not %s", typ.Field, jsonKind(typ.Type), article(typ.Value))
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		field, _ := strconv.Unquote(name)
		return badParam(field, "invalid_json", "field %s is not one this request takes", name)
	}
	return badRequest("invalid_json", "the request body does not fit: %s", oneLine(strings.TrimPrefix(err.Error(), "json: ")))
}

// jsonKind names the JSON a Go type is read from. Pure.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another kind of value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "another kind of value"
}

// article puts "a" or "an" before a JSON kind ("number", "array"). Pure.
func article(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

// jobError answers a job that does not pass the checks of cronjob or the
// store: 400 with the field's one-line message, 409 for a taken name.
func jobError(err error) error {
	var fe *cronjob.FieldError
	switch {
	case errors.As(err, &fe):
		return badRequest("invalid_"+fe.Field, "%s", oneLine(fe.Error()))
	case errors.Is(err, cronjob.ErrIncomplete):
		return badRequest("missing_field", "a job needs name, schedule and prompt")
	case errors.Is(err, models.ErrCronJobExists):
		return errorf(http.StatusConflict, typeConflict, "job_exists", "a job of that name already exists")
	case errors.Is(err, models.ErrInvalidArgument):
		msg := err.Error()
		if i := strings.LastIndex(msg, models.ErrInvalidArgument.Error()+": "); i >= 0 {
			msg = msg[i+len(models.ErrInvalidArgument.Error())+2:]
		}
		return badRequest("invalid_job", "%s", oneLine(msg))
	}
	return err
}

// checkModel allows a job the models a turn may name here (GET
// /v1/models; empty or talaria: the worker's).
func (s *Server) checkModel(m *string) error {
	if m == nil || *m == "" || *m == DefaultModelID {
		if m != nil {
			*m = ""
		}
		return nil
	}
	if _, err := s.modelFor(*m); err != nil {
		return badRequest("invalid_model", "model %q is not offered here: use %q or one GET /v1/models lists", oneLine(*m), DefaultModelID)
	}
	return nil
}

// handleListJobs answers GET /api/jobs: every job, by name.
func (s *Server) handleListJobs(w http.ResponseWriter, r *http.Request) error {
	jobs, err := s.rt.Store.CronJobs(r.Context())
	if err != nil {
		return err
	}
	now := time.Now()
	views := make([]cronjob.View, len(jobs))
	for i, j := range jobs {
		views[i] = cronjob.NewView(j, now)
	}
	return writeJSON(w, http.StatusOK, newList(views, false))
}

// handleCreateJob answers POST /api/jobs with 201 and the job, enabled.
func (s *Server) handleCreateJob(w http.ResponseWriter, r *http.Request) error {
	var req jobRequest
	if err := decodeStrict(r, &req); err != nil {
		return err
	}
	if err := checkNoPreRun(req.PreRunScript); err != nil {
		return err
	}
	if err := s.checkModel(&req.Model); err != nil {
		return err
	}
	window := models.DefaultCatchUpWindow
	if req.CatchUpWindow != "" {
		d, err := time.ParseDuration(req.CatchUpWindow)
		if err != nil || d <= 0 {
			return badRequest("invalid_catch_up_window", "catch_up_window %q: give a positive duration such as \"1h\" or \"90m\"", oneLine(req.CatchUpWindow))
		}
		window = d
	}
	if req.MaxIterations < 0 || req.MaxIterations > s.maxIterations() {
		return badRequest("invalid_max_iterations", "max_iterations must be between 0 (the default) and %d (the server's max_iterations)", s.maxIterations())
	}
	job, _, err := cronjob.New(cronjob.Spec{Name: req.Name, Schedule: req.Schedule, TimeZone: req.TimeZone, Prompt: req.Prompt,
		Deliver: req.Deliver, Model: req.Model, MaxIterations: req.MaxIterations, Tools: req.Tools,
		Overlap: req.Overlap, CatchUp: req.CatchUp, CatchUpWindow: window}, time.Now())
	if err != nil {
		return jobError(err)
	}
	created, err := s.rt.Store.CreateCronJob(r.Context(), job)
	if err != nil {
		return jobError(err)
	}
	w.Header().Set("Location", "/api/jobs/"+created.ID)
	return writeJSON(w, http.StatusCreated, cronjob.NewView(*created, time.Now()))
}

// loadJob is the job of the path (by id or name), or a 404.
func (s *Server) loadJob(r *http.Request) (*models.CronJob, error) {
	id := r.PathValue("id")
	j, err := s.rt.Store.CronJob(r.Context(), id)
	if errors.Is(err, models.ErrNotFound) {
		return nil, notFound("no job %q (GET /api/jobs lists them)", oneLine(id))
	}
	return j, err
}

// handleGetJob answers GET /api/jobs/{id}.
func (s *Server) handleGetJob(w http.ResponseWriter, r *http.Request) error {
	j, err := s.loadJob(r)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, cronjob.NewView(*j, time.Now()))
}

// handleEditJob answers PATCH /api/jobs/{id}: the fields given change,
// checked as `talaria cron edit` checks them; the job as it is now.
func (s *Server) handleEditJob(w http.ResponseWriter, r *http.Request) error {
	var req jobEdit
	if err := decodeStrict(r, &req); err != nil {
		return err
	}
	if err := checkNoPreRun(req.PreRunScript); err != nil {
		return err
	}
	if err := s.checkModel(req.Model); err != nil {
		return err
	}
	if req.MaxIterations != nil && (*req.MaxIterations < 0 || *req.MaxIterations > s.maxIterations()) {
		return badRequest("invalid_max_iterations", "max_iterations must be between 0 (the default) and %d (the server's max_iterations)", s.maxIterations())
	}
	e := cronjob.Edit{Schedule: req.Schedule, TimeZone: req.TimeZone, Prompt: req.Prompt, Model: req.Model,
		Deliver: req.Deliver, Tools: req.Tools, MaxIterations: req.MaxIterations, Overlap: req.Overlap, CatchUp: req.CatchUp}
	if e.Empty() {
		return badRequest("nothing_to_change", "the body changes nothing: give one of schedule, time_zone, prompt, model, deliver, tools, max_iterations, overlap, catch_up")
	}
	j, err := s.loadJob(r)
	if err != nil {
		return err
	}
	if err := e.Apply(j); err != nil {
		return jobError(err)
	}
	if err := s.rt.Store.UpdateCronJob(r.Context(), *j); err != nil {
		if errors.Is(err, models.ErrNotFound) {
			return notFound("no job %q", r.PathValue("id"))
		}
		return jobError(err)
	}
	return s.answerJob(w, r, j.ID, http.StatusOK)
}

// answerJob answers the job with id as stored.
func (s *Server) answerJob(w http.ResponseWriter, r *http.Request, id string, status int) error {
	j, err := s.rt.Store.CronJob(r.Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(w, status, cronjob.NewView(*j, time.Now()))
}

// handleDeleteJob answers DELETE /api/jobs/{id}: the job and its runs go.
func (s *Server) handleDeleteJob(w http.ResponseWriter, r *http.Request) error {
	j, err := s.loadJob(r)
	if err != nil {
		return err
	}
	if err := s.rt.Store.DeleteCronJob(r.Context(), j.ID); err != nil {
		if errors.Is(err, models.ErrNotFound) {
			return notFound("no job %q", r.PathValue("id"))
		}
		return err
	}
	return writeJSON(w, http.StatusOK, deleted{ID: j.ID, Object: "job.deleted", Deleted: true})
}

// handleToggleJob answers POST /api/jobs/{id}/pause and /resume: the job
// as it is now (pausing a paused job, or resuming a running one, is no
// error).
func (s *Server) handleToggleJob(enabled bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		j, err := s.loadJob(r)
		if err != nil {
			return err
		}
		if err := s.rt.Store.SetCronJobEnabled(r.Context(), j.ID, enabled); err != nil {
			if errors.Is(err, models.ErrNotFound) {
				return notFound("no job %q", r.PathValue("id"))
			}
			return err
		}
		return s.answerJob(w, r, j.ID, http.StatusOK)
	}
}

// jobRun answers POST /api/jobs/{id}/run.
type jobRun struct {
	JobID string `json:"job_id"`
	cronjob.RunView
}

// handleRunJob answers POST /api/jobs/{id}/run with 202 once a run of the
// job has started at once, outside its schedule (`talaria cron run-now`):
// each request is a run of its own, a paused job's too.
func (s *Server) handleRunJob(w http.ResponseWriter, r *http.Request) error {
	j, err := s.loadJob(r)
	if err != nil {
		return err
	}
	run, err := s.rt.Cron().RunNow(r.Context(), *j)
	if err != nil {
		return err
	}
	if rec, err := s.rt.Store.CronRun(r.Context(), run.JobID, run.ScheduledAt); err == nil {
		run = *rec
	}
	w.Header().Set("Location", "/api/jobs/"+j.ID+"/runs")
	return writeJSON(w, http.StatusAccepted, jobRun{JobID: j.ID, RunView: cronjob.NewRunViews([]models.CronRun{run})[0]})
}

// handleJobRuns answers GET /api/jobs/{id}/runs?limit=N: the job's runs,
// newest first, limit of them (20 by default, at most 200).
func (s *Server) handleJobRuns(w http.ResponseWriter, r *http.Request) error {
	limit, err := intParam(r, "limit", defaultPageLimit, 1, maxPageLimit)
	if err != nil {
		return err
	}
	j, err := s.loadJob(r)
	if err != nil {
		return err
	}
	runs, err := s.rt.Store.CronRuns(r.Context(), j.ID, limit+1)
	if err != nil {
		return err
	}
	more := len(runs) > limit
	if more {
		runs = runs[:limit]
	}
	return writeJSON(w, http.StatusOK, newList(cronjob.NewRunViews(runs), more))
}
