package config

import (
	"slices"
	"testing"
)

func TestOwnPorts(t *testing.T) {
	t.Parallel()
	c := Default("/h")
	c.API.Listen = "127.0.0.1:9000"
	c.Metrics.Listen = ":9464"
	c.DB = "postgres://u@db:6543/x"
	got := c.OwnPorts()
	for _, p := range []int{DefaultTemporalPort, DefaultTemporalPort + 1, DefaultUIPort, 9000, 8642, 9464, 6543} {
		if !slices.Contains(got, p) {
			t.Errorf("OwnPorts() = %v lacks %d", got, p)
		}
	}
	c.Temporal.Address = "temporal:7233"
	if got := c.OwnPorts(); !slices.Contains(got, 7243) || !slices.Contains(got, 6933) {
		t.Errorf("an external Temporal's HTTP and membership ports are missing: %v", got)
	}
}

func TestSandboxProblems(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    Sandbox
		bad  bool
		home string
	}{
		{Sandbox{}, false, "/h"},
		{Sandbox{Mode: "read-only", Network: "on"}, false, "/h"},
		{Sandbox{Mode: "danger-full-access"}, true, "/h"},
		{Sandbox{Network: "maybe"}, true, "/h"},
		{Sandbox{Workspace: "rel/ws"}, true, "/h"},
		{Sandbox{Workspace: "/h/workspace"}, true, "/h"},
		{Sandbox{Workspace: "/srv/ws"}, false, "/h"},
	} {
		if got := len(tc.s.problems(tc.home)) > 0; got != tc.bad {
			t.Errorf("%+v: problems %v, want bad %v", tc.s, tc.s.problems(tc.home), tc.bad)
		}
	}
	if got := (Config{Home: "/home/u/.talaria"}).WorkspaceDir(); got != "/home/u/talaria-workspace" {
		t.Errorf("WorkspaceDir() = %q", got)
	}
}
