package activities

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

func TestCronRunModel(t *testing.T) {
	slot := time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)
	started, ended := slot.Add(time.Second), slot.Add(time.Minute)
	rec := turnapi.CronRunRecord{JobID: "j", ScheduledAt: slot, WorkflowID: "cron-j", StartedAt: &started, EndedAt: &ended,
		ExitReason: "completed", Delivery: "local → /x", Error: "webhook: 500"}
	tests := []struct {
		status turnapi.CronRunStatus
		want   string
		err    bool
	}{
		{turnapi.CronRunCompleted, models.RunCompleted, false},
		{turnapi.CronRunFailed, models.RunFailed, false},
		{"started", "", true},
		{"", "", true},
		{"skipped", "", true},
	}
	for _, tt := range tests {
		t.Run(string(tt.status), func(t *testing.T) {
			r := rec
			r.Status = tt.status
			got, err := cronRunModel(r)
			if tt.err {
				if err == nil {
					t.Fatalf("cronRunModel(%q) = %+v, want an error", tt.status, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := models.CronRun{JobID: "j", ScheduledAt: slot, WorkflowID: "cron-j", Status: tt.want, StartedAt: &started,
				EndedAt: &ended, ExitReason: "completed", Delivery: "local → /x", Error: "webhook: 500"}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("cronRunModel = %+v, want %+v", got, want)
			}
		})
	}
}

// TestFinishCronRunInputDecodesStoreRecord: inputs scheduled before the
// record had its own type carried the store's run record; they decode
// into the new input with nothing lost, and every field of the record has
// a field of the same name and type in the store's.
func TestFinishCronRunInputDecodesStoreRecord(t *testing.T) {
	slot := time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)
	started, ended := slot.Add(time.Second), slot.Add(time.Minute)
	old := struct{ Run models.CronRun }{models.CronRun{JobID: "j", ScheduledAt: slot, WorkflowID: "w", Status: models.RunFailed,
		StartedAt: &started, EndedAt: &ended, ExitReason: "error", Delivery: "d", Error: "e"}}
	payload, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	var in turnapi.FinishCronRunInput
	if err := json.Unmarshal(payload, &in); err != nil {
		t.Fatal(err)
	}
	got, err := cronRunModel(in.Run)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, old.Run) {
		t.Errorf("decoded %+v, want %+v", got, old.Run)
	}
	store := reflect.TypeFor[models.CronRun]()
	rec := reflect.TypeFor[turnapi.CronRunRecord]()
	for i := range rec.NumField() {
		f := rec.Field(i)
		sf, ok := store.FieldByName(f.Name)
		if !ok {
			t.Errorf("CronRunRecord.%s has no field in models.CronRun", f.Name)
			continue
		}
		if sf.Type != f.Type && sf.Type.Kind() != f.Type.Kind() {
			t.Errorf("CronRunRecord.%s is %s, models.CronRun's is %s", f.Name, f.Type, sf.Type)
		}
	}
}
