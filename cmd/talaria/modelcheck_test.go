package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
