package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/engine"
)

// TestCheckedConfig: model set checks the document it would write in
// memory: a key in it is written nowhere else (no temporary directory is
// needed: TMPDIR names none here), and a problem names
// $TALARIA_HOME/config.yaml and the line.
func TestCheckedConfig(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	home := t.TempDir()
	for _, tt := range []struct {
		name, doc string
		err       string
	}{
		{"a key", "model:\n  base_url: http://a/v1\n  name: m\n  api_key: sk-secret\n", ""},
		{"unknown key", "model:\n  base_url: http://a/v1\n  nmae: m\n", filepath.Join(home, "config.yaml") + ":3:"},
		{"invalid value", "model:\n  base_url: http://a/v1\n  name: m\nmax_iterations: 0\n", "max_iterations"},
	} {
		cfg, err := checkedConfig(home, []byte(tt.doc))
		if tt.err == "" {
			if err != nil || cfg.Model.APIKey != "sk-secret" {
				t.Errorf("%s: %+v, %v", tt.name, cfg.Model, err)
			}
		} else if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: err %v, want %q", tt.name, err, tt.err)
		}
	}
	if left, _ := os.ReadDir(home); len(left) > 0 {
		t.Fatalf("checking wrote %s to the home", left[0].Name())
	}
}

// TestPickupLine: model set reports serve's pickup only once serve has
// read config.yaml after it was written: a serve showing the same model
// and endpoint from before (a change of the key alone) has not.
func TestPickupLine(t *testing.T) {
	written := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	want := engine.ModelSettings{Configured: true, BaseURL: "http://a/v1", Model: "m", APIKeySet: true}
	served := func(s engine.ModelSettings, at time.Time) engine.ServeInfo {
		return engine.ServeInfo{PID: 7}.WithModel(s, at)
	}
	other := engine.ModelSettings{Configured: true, BaseURL: "http://env/v1", Model: "m"}
	for _, tt := range []struct {
		name string
		info engine.ServeInfo
		done bool
		want string
	}{
		{"same settings, read before the write", served(want, written.Add(-time.Second)), false, ""},
		{"read at the write", served(want, written), false, ""},
		{"read after", served(want, written.Add(200*time.Millisecond)), true, "talaria serve (pid 7) uses it for new model calls"},
		{"read after, environment wins", served(other, written.Add(time.Second)), true, "uses model m at http://env/v1 (its environment overrides"},
		{"an old serve without settings", engine.ServeInfo{PID: 7, Model: "m"}, false, ""},
	} {
		line, done := pickupLine(tt.info, want, written)
		if done != tt.done || !strings.Contains(line, tt.want) {
			t.Errorf("%s: %q, %t", tt.name, line, done)
		}
	}
}
