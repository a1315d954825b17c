package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/models"
)

func TestJobName(t *testing.T) {
	for _, tt := range []struct{ prompt, want string }{
		{"Summarise the overnight alerts!", "summarise-the-overnight-ab12"},
		{"  check   disk", "check-disk-ab12"},
		{"Überprüfe die Logs", "berpr-fe-die-ab12"},
		{"🚀🚀", "chat-job-ab12"},
		{strings.Repeat("x", 40) + " y", strings.Repeat("x", 16) + "-y-ab12"},
		{"a/../../b; rm -rf", "a-b-rm-ab12"},
	} {
		if got := jobName(tt.prompt, "ab12"); got != tt.want {
			t.Errorf("jobName(%q) = %q, want %q", tt.prompt, got, tt.want)
		}
	}
}

func TestJobLine(t *testing.T) {
	slot := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	job := models.CronJob{Name: "digest", Schedule: "0 9 * * *", Enabled: true, Origin: "telegram:42"}
	for _, tt := range []struct {
		name string
		job  models.CronJob
		runs []models.CronRun
		here string
		want string
	}{
		{"never ran", job, nil, "telegram:7", "• digest — 0 9 * * * (active)"},
		{"made here", job, nil, "telegram:42", "• digest — 0 9 * * * (active, made here)"},
		{"paused", models.CronJob{Name: "digest", Schedule: "@daily"}, nil, "telegram:42", "• digest — @daily (paused)"},
		{"delivered", job, []models.CronRun{{ScheduledAt: slot, Status: "completed"}}, "",
			"• digest — 0 9 * * * (active); last run 2026-12-01 09:00 UTC completed"},
		{"delivery failed", job, []models.CronRun{{ScheduledAt: slot, Status: "failed", Error: "email:a@example.com: 550 no such\nmailbox"}}, "",
			"• digest — 0 9 * * * (active); last run 2026-12-01 09:00 UTC failed: email:a@example.com: 550 no such mailbox"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := jobLine(tt.job, tt.runs, tt.here); got != tt.want {
				t.Errorf("jobLine = %q, want %q", got, tt.want)
			}
		})
	}
}
