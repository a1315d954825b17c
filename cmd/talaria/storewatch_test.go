package main

import "testing"

func TestForProcess(t *testing.T) {
	tests := []struct {
		line, name, want string
	}{
		{"the store /h/talaria.db was removed or replaced under a running serve; stopping: restart serve to continue", "serve",
			"the store /h/talaria.db was removed or replaced under a running serve; stopping: restart serve to continue"},
		{"the store /h/talaria.db was removed or replaced under a running serve; stopping: restart serve to continue", "worker",
			"the store /h/talaria.db was removed or replaced under a running talaria worker; stopping: restart talaria worker to continue"},
		{"the store does not answer: serve stops taking work until it does (dial tcp: connection refused by server)", "scheduler",
			"the store does not answer: talaria scheduler stops taking work until it does (dial tcp: connection refused by server)"},
		{"the store answers again: serve takes work again", "worker", "the store answers again: talaria worker takes work again"},
		{"/srv/served/talaria.db is another file now", "worker", "/srv/served/talaria.db is another file now"},
	}
	for _, tt := range tests {
		if got := forProcess(tt.line, tt.name); got != tt.want {
			t.Errorf("forProcess(%q, %q) = %q, want %q", tt.line, tt.name, got, tt.want)
		}
	}
}
