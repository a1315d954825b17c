package api

import "testing"

func TestRunIDs(t *testing.T) {
	for _, tt := range []struct {
		turn, run string
	}{
		{"turn/s1/1", "run_1_s1"},
		{"turn/api-0a1b/12", "run_12_api-0a1b"},
		{"turn/a_b.c~1/3", "run_3_a_b.c~1"},
		{"turn/x/0", ""},
		{"turn//1", ""},
		{"turn/s/x", ""},
		{"cron/s/1", ""},
		{"turn/s", ""},
	} {
		if got := runID(runPrefix, tt.turn); got != tt.run {
			t.Errorf("runID(%q) = %q, want %q", tt.turn, got, tt.run)
		}
		if tt.run == "" {
			continue
		}
		turn, _, ok := parseRunID(runPrefix, tt.run)
		if !ok || turn != tt.turn {
			t.Errorf("parseRunID(%q) = %q %v, want %q", tt.run, turn, ok, tt.turn)
		}
	}
	for _, bad := range []string{"", "run_", "run_1", "run_1_", "run_0_s", "run_01_s", "run_x_s", "run_-1_s",
		"run_1_/etc", "run_1_a/b", "run_99999999999_s", "resp_1_s", "run_1_" + string(make([]byte, 200))} {
		if _, _, ok := parseRunID(runPrefix, bad); ok {
			t.Errorf("parseRunID(%q) accepted", bad)
		}
	}
	if turn, session, ok := parseRunID(responsePrefix, "resp_4_s.2"); !ok || turn != "turn/s.2/4" || session != "s.2" {
		t.Errorf("parseRunID(resp) = %q %q %v", turn, session, ok)
	}
}
