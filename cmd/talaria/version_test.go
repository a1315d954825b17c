package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"runtime/debug"
	"strings"
	"testing"
)

func TestResolveVersion(t *testing.T) {
	deps := []*debug.Module{
		{Path: "github.com/spf13/cobra", Version: "v1.10.2"},
		{Path: temporalServerModule, Version: "v1.32.2"},
		{Path: temporalSDKModule, Version: "v1.50.0"},
	}
	vcs := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "691f888a1b2c3d4e5f60718293a4b5c6d7e8f901"},
		{Key: "vcs.time", Value: "2026-12-01T03:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		link linkInfo
		want versionInfo
	}{
		{
			name: "no build info, nothing linked",
			want: versionInfo{Version: "devel", Commit: unknown, GoVersion: "go1.0", Platform: "os/arch",
				TemporalServer: unknown, TemporalSDK: unknown},
		},
		{
			name: "go build with -buildvcs=false",
			bi:   &debug.BuildInfo{GoVersion: "go1.27.3", Main: debug.Module{Path: "github.com/talaria-agent/talaria", Version: "(devel)"}, Deps: deps},
			want: versionInfo{Version: "devel", Commit: unknown, GoVersion: "go1.27.3", Platform: "os/arch",
				TemporalServer: "v1.32.2", TemporalSDK: "v1.50.0"},
		},
		{
			name: "vcs stamped by the go command",
			bi:   &debug.BuildInfo{GoVersion: "go1.27.3", Main: debug.Module{Version: "(devel)"}, Deps: deps, Settings: vcs},
			want: versionInfo{Version: "devel", Commit: "691f888a1b2c", Modified: true, CommitTime: "2026-12-01T03:00:00Z",
				GoVersion: "go1.27.3", Platform: "os/arch", TemporalServer: "v1.32.2", TemporalSDK: "v1.50.0"},
		},
		{
			name: "go install of a tagged module",
			bi:   &debug.BuildInfo{GoVersion: "go1.27.3", Main: debug.Module{Version: "v0.3.0"}, Deps: deps},
			want: versionInfo{Version: "v0.3.0", Commit: unknown, GoVersion: "go1.27.3", Platform: "os/arch",
				TemporalServer: "v1.32.2", TemporalSDK: "v1.50.0"},
		},
		{
			name: "the Makefile's linker values win over build info",
			bi:   &debug.BuildInfo{GoVersion: "go1.27.3", Main: debug.Module{Version: "(devel)"}, Deps: deps, Settings: vcs},
			link: linkInfo{version: "v0.4.0-2-g691f888", commit: "691f888", modified: ""},
			want: versionInfo{Version: "v0.4.0-2-g691f888", Commit: "691f888", GoVersion: "go1.27.3", Platform: "os/arch",
				TemporalServer: "v1.32.2", TemporalSDK: "v1.50.0"},
		},
		{
			name: "linked commit from a modified tree",
			link: linkInfo{commit: " abc1234\n", modified: "true"},
			want: versionInfo{Version: "devel", Commit: "abc1234", Modified: true, GoVersion: "go1.0", Platform: "os/arch",
				TemporalServer: unknown, TemporalSDK: unknown},
		},
		{
			name: "replaced and missing modules",
			bi: &debug.BuildInfo{Deps: []*debug.Module{nil,
				{Path: temporalServerModule, Version: "v1.32.2", Replace: &debug.Module{Path: "../server"}},
			}},
			want: versionInfo{Version: "devel", Commit: unknown, GoVersion: "go1.0", Platform: "os/arch",
				TemporalServer: "v1.32.2 (replaced by ../server)", TemporalSDK: unknown},
		},
		{
			name: "replaced by another version",
			bi: &debug.BuildInfo{Deps: []*debug.Module{
				{Path: temporalSDKModule, Version: "v1.50.0", Replace: &debug.Module{Path: "example.com/sdk", Version: "v1.50.1"}},
			}},
			want: versionInfo{Version: "devel", Commit: unknown, GoVersion: "go1.0", Platform: "os/arch",
				TemporalServer: unknown, TemporalSDK: "v1.50.1 (replaced by example.com/sdk)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := resolveVersion(tt.bi, tt.link, "go1.0", "os/arch")
			if got != tt.want {
				t.Fatalf("resolveVersion =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

// runTalaria runs the real root command and returns stdout and the error.
func runTalaria(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := newRootCommand()
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

// TestVersionCommand: `talaria version`, `--version` and `version -o json`
// describe this very binary (a test binary has real build info, so the
// Temporal versions are the ones go.mod resolves).
func TestVersionCommand(t *testing.T) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("no build info in the test binary")
	}
	server := moduleVersion(bi.Deps, temporalServerModule)
	sdk := moduleVersion(bi.Deps, temporalSDKModule)
	if !strings.HasPrefix(server, "v1.") || !strings.HasPrefix(sdk, "v1.") {
		t.Fatalf("build info lacks the Temporal modules: server %q sdk %q", server, sdk)
	}

	text, err := runTalaria(t, "version")
	if err != nil {
		t.Fatalf("talaria version: %v", err)
	}
	for _, want := range []string{"talaria version ", "\n  commit ", "\n  go               " + bi.GoVersion,
		"\n  temporal server  " + server + "\n", "\n  temporal sdk     " + sdk + "\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("talaria version lacks %q:\n%s", want, text)
		}
	}

	flag, err := runTalaria(t, "--version")
	if err != nil {
		t.Fatalf("talaria --version: %v", err)
	}
	if flag != text {
		t.Errorf("talaria --version =\n%s\nwant what talaria version prints:\n%s", flag, text)
	}

	js, err := runTalaria(t, "version", "-o", "json")
	if err != nil {
		t.Fatalf("talaria version -o json: %v", err)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(js), &raw); err != nil {
		t.Fatalf("version -o json is not JSON: %v\n%s", err, js)
	}
	for key, want := range map[string]any{"temporal_server": server, "temporal_sdk": sdk, "go_version": bi.GoVersion} {
		if raw[key] != want {
			t.Errorf("json %s = %v, want %v (%s)", key, raw[key], want, js)
		}
	}
	for _, key := range []string{"version", "commit", "modified", "platform"} {
		if _, ok := raw[key]; !ok {
			t.Errorf("json lacks %q: %s", key, js)
		}
	}
}

func TestVersionCommandRejectsBadUse(t *testing.T) {
	for _, args := range [][]string{{"version", "-o", "yaml"}, {"version", "extra"}} {
		_, err := runTalaria(t, args...)
		var ex *exitError
		if !errors.As(err, &ex) || ex.code != exitUsage {
			t.Errorf("talaria %v: err = %v, want a usage error (exit 2)", args, err)
		}
	}
}

// TestVersionTextKeepsBraces: a value with template braces prints literally
// through --version (the flag's output is a text/template).
func TestVersionTextKeepsBraces(t *testing.T) {
	saved := version
	t.Cleanup(func() { version = saved })
	version = `v1 {{.Name}} "q"`
	out, err := runTalaria(t, "--version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "talaria version v1 {{.Name}} \"q\"\n") {
		t.Fatalf("--version = %q", out)
	}
}
