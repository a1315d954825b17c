package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// runTool runs a tool with raw JSON arguments.
func runTool(t *testing.T, tool Tool, env Env, args string) (string, error) {
	t.Helper()
	return tool.Run(context.Background(), env, json.RawMessage(args))
}

// decode parses a tool's JSON result into v, failing the test otherwise.
func decode[T any](t *testing.T, s string) T {
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

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
