package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestLoadBytes: a document checked in memory loads exactly as the same
// file would (values, errors naming home/config.yaml and the line), and
// the file on disk, if any, is not read.
func TestLoadBytes(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name, yaml string
		model      string // the model name it gives, when it loads
		err        string // a substring of the error, when it does not
	}{
		{"no document", "", DefaultModel, ""},
		{"a model", "model:\n  base_url: http://a/v1\n  name: one\n", "one", ""},
		{"unknown key, with line", "model:\n  base_url: http://a/v1\n  nmae: one\n", "", `config.yaml:3: unknown key "nmae" in model`},
		{"syntax error, with line", "model:\n  name: [\n", "", "config.yaml:2:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			home := t.TempDir()
			// A different file on disk: LoadBytes must not read it.
			if err := os.WriteFile(filepath.Join(home, FileName), []byte("model:\n  name: on-disk\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := LoadBytes(home, []byte(tt.yaml), env(nil))
			if tt.err != "" {
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), filepath.Join(home, tt.err)) {
					t.Fatalf("err = %v, want ErrInvalid with %q", err, filepath.Join(home, tt.err))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Model.Name != tt.model {
				t.Fatalf("model %q, want %q", got.Model.Name, tt.model)
			}
			// The same document as a file loads the same.
			if err := os.WriteFile(filepath.Join(home, FileName), []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			fromFile, err := Load(home, env(nil))
			if err != nil || !reflect.DeepEqual(fromFile.Model, got.Model) {
				t.Fatalf("Load = %+v, %v; LoadBytes = %+v", fromFile.Model, err, got.Model)
			}
		})
	}
}
