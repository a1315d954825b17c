package tools

import (
	"strings"
	"testing"
)

// TestDelegateTasks: a call's tasks are read strictly and bounded.
func TestDelegateTasks(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, tt := range []struct {
		args   string
		n      int
		errHas string
	}{
		{`{"tasks":[{"goal":"a"},{"goal":"b","context":"c","toolsets":["file"],"max_iterations":5}]}`, 2, ""},
		{`{"tasks":[]}`, 0, "at least one task"},
		{`{}`, 0, "at least one task"},
		{`{"tasks":[{"goal":"a"},{"goal":"b"},{"goal":"c"},{"goal":"d"}]}`, 0, "at most 3"},
		{`{"tasks":[{"goal":" "}]}`, 0, "task 1 has no goal"},
		{`{"tasks":[{"goal":"a","context":"` + long + `"}]}`, 0, "at most 64"},
		{`{"tasks":[{"goal":"a","max_iterations":-1}]}`, 0, "must be positive"},
		{`{"tasks":[{"goal":"a","tools":["x"]}]}`, 0, "unknown field"},
		{`not json`, 0, "invalid arguments"},
	} {
		got, err := DelegateTasks(tt.args, 3, 64)
		if tt.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("%s: %v, want %q", tt.args, err, tt.errHas)
			}
			continue
		}
		if err != nil || len(got) != tt.n {
			t.Errorf("%s: %d tasks, %v", tt.args, len(got), err)
		}
	}
}
