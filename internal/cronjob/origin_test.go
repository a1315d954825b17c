package cronjob

import (
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/models"
)

// TestOriginDelivery: a job made in a chat delivers to its origin by
// default; "origin" is refused for a job made elsewhere, when made and
// when edited.
func TestOriginDelivery(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name    string
		spec    Spec
		deliver []string
		refused bool
	}{
		{"chat job, default", Spec{Origin: "telegram:42"}, []string{"origin"}, false},
		{"chat job, origin and email", Spec{Origin: "slack:D0123", Deliver: []string{"origin", "email:a@example.com"}}, []string{"origin", "email:a@example.com"}, false},
		{"chat job, elsewhere", Spec{Origin: "telegram:42", Deliver: []string{"home"}}, []string{"home"}, false},
		{"cli job, default", Spec{}, []string{"local"}, false},
		{"cli job, origin", Spec{Deliver: []string{"origin"}}, nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.Name, tt.spec.Schedule, tt.spec.Prompt = "j", "@daily", "p"
			job, _, err := New(tt.spec, now)
			if tt.refused {
				if err == nil || !strings.Contains(err.Error(), "origin is the chat that made the job") {
					t.Fatalf("New = %v, want the origin refusal", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(job.Deliver, ",") != strings.Join(tt.deliver, ",") || job.Origin != tt.spec.Origin {
				t.Errorf("deliver %v origin %q, want %v %q", job.Deliver, job.Origin, tt.deliver, tt.spec.Origin)
			}
		})
	}
	origin := []string{"origin"}
	cli := models.CronJob{Schedule: "@daily", Deliver: []string{"local"}}
	if err := (Edit{Deliver: &origin}).Apply(&cli); err == nil {
		t.Error("an edit gave a CLI job the origin target")
	}
	chat := models.CronJob{Schedule: "@daily", Deliver: []string{"local"}, Origin: "telegram:42"}
	if err := (Edit{Deliver: &origin}).Apply(&chat); err != nil {
		t.Errorf("an edit of a chat job to origin: %v", err)
	}
}
