package main

import (
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/engine"
)

// TestServeModelWarning: a client warns, in one line, when its shell names
// another endpoint or model than serve's, and only then.
func TestServeModelWarning(t *testing.T) {
	serving := engine.ServeInfo{}.WithModel(engine.ModelSettings{Configured: true, BaseURL: "http://serve:1/v1", Model: "big"}, testTime)
	unset := engine.ServeInfo{}.WithModel(engine.ModelSettings{Model: "gpt-4o-mini"}, testTime)
	old := engine.ServeInfo{ModelConfigured: true, ModelEndpoint: "http://serve:1/v1", Model: "big"} // a serve from before model_settings
	for _, tt := range []struct {
		name string
		info engine.ServeInfo
		env  map[string]string
		want []string // substrings; none: no warning
	}{
		{"nothing set here", serving, nil, nil},
		{"same endpoint, trailing slash", serving, map[string]string{"OPENAI_BASE_URL": "http://serve:1/v1/", "TALARIA_MODEL": "big"}, nil},
		{"other endpoint", serving, map[string]string{"OPENAI_BASE_URL": "http://mine:2/v1"},
			[]string{"using talaria serve's model endpoint http://serve:1/v1 (model big)", "OPENAI_BASE_URL=http://mine:2/v1 in this shell is not used", "talaria model set"}},
		{"other model", serving, map[string]string{"TALARIA_MODEL": "small"}, []string{"TALARIA_MODEL=small in this shell is not used"}},
		{"both", serving, map[string]string{"OPENAI_BASE_URL": "http://mine:2/v1", "TALARIA_MODEL": "small"}, []string{"OPENAI_BASE_URL=http://mine:2/v1 and TALARIA_MODEL=small in this shell are not used"}},
		{"serve has none", unset, map[string]string{"OPENAI_BASE_URL": "http://mine:2/v1"}, []string{"using talaria serve's no model endpoint"}},
		{"older serve info", old, map[string]string{"OPENAI_BASE_URL": "http://mine:2/v1"}, []string{"http://serve:1/v1 (model big)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := serveModelWarning(tt.info, func(k string) string { return tt.env[k] })
			if len(tt.want) == 0 {
				if got != "" {
					t.Fatalf("unexpected warning %q", got)
				}
				return
			}
			if strings.Contains(got, "\n") {
				t.Fatalf("more than one line: %q", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("warning %q lacks %q", got, w)
				}
			}
		})
	}
}

var testTime = mustTime("2026-01-02T03:04:05Z")

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}
