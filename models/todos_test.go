package models

import (
	"encoding/json"
	"testing"
)

func TestTodosJSON(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		steps := []struct {
			name string
			save []byte // nil: only load
			want string // "" means none stored
		}{
			{name: "nothing saved", want: ""},
			{name: "save", save: []byte(`[{"id":"1","content":"write tests","status":"pending"}]`), want: `[{"id":"1","content":"write tests","status":"pending"}]`},
			{name: "replace", save: []byte(`[{"id":"1","content":"write tests","status":"completed"}]`), want: `[{"id":"1","content":"write tests","status":"completed"}]`},
			{name: "empty list", save: []byte(`[]`), want: `[]`},
			{name: "delete", save: []byte{}, want: ""},
		}
		for _, step := range steps {
			if step.save != nil {
				if err := s.SaveTodosJSON(t.Context(), "s", step.save); err != nil {
					t.Fatalf("%s: SaveTodosJSON: %v", step.name, err)
				}
			}
			got, err := s.LoadTodosJSON(t.Context(), "s")
			if err != nil {
				t.Fatalf("%s: LoadTodosJSON: %v", step.name, err)
			}
			if step.want == "" {
				if got != nil {
					t.Errorf("%s: LoadTodosJSON = %q, want nil", step.name, got)
				}
				continue
			}
			if string(got) != step.want || !json.Valid(got) {
				t.Errorf("%s: LoadTodosJSON = %q, want %q", step.name, got, step.want)
			}
		}
		if other, err := s.LoadTodosJSON(t.Context(), "other"); err != nil || other != nil {
			t.Errorf("another session's todos = %q, %v; want nil", other, err)
		}
	})
}
