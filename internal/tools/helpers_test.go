package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/sandbox"
)

// runTool runs a tool with raw JSON arguments.
func runTool(t testing.TB, tool Tool, env Env, args string) (string, error) {
	t.Helper()
	return tool.Run(context.Background(), env, json.RawMessage(args))
}

// decode parses a tool's JSON result into v, failing the test otherwise.
func decode[T any](t testing.TB, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("result is not valid JSON: %v\n%s", err, s)
	}
	return v
}

// writeTestFile creates a file under dir and returns its path.
func writeTestFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// expectError checks a failed call against a table case's expected error
// (wantErr matched with errors.Is, errHas as a substring); it reports whether
// the case expected an error, in which case the caller is done.
func expectError(t *testing.T, out string, err, wantErr error, errHas string) bool {
	t.Helper()
	if wantErr == nil && errHas == "" {
		return false
	}
	if err == nil {
		t.Fatalf("expected an error, got %s", out)
	}
	if wantErr != nil && !errors.Is(err, wantErr) {
		t.Errorf("error %q is not %v", err, wantErr)
	}
	if !strings.Contains(err.Error(), errHas) {
		t.Errorf("error %q does not mention %q", err, errHas)
	}
	return true
}

// unsandboxed runs commands unconfined (sandbox.mode: off), for the tests
// that follow a command's processes by their host pids.
var unsandboxed = Policy{Sandbox: sandbox.Settings{Mode: sandbox.ModeOff}}
