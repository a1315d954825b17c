package workflows

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// forbiddenDeps are the packages deterministic workflow code must not
// depend on, by import path or path prefix (ending in "/"): the store, the
// activities, the ORM and SQL drivers, the model client and anything that
// launches processes or speaks HTTP.
var forbiddenDeps = []string{
	"github.com/talaria-agent/talaria/models",
	"github.com/talaria-agent/talaria/activities",
	"github.com/talaria-agent/talaria/internal/llm",
	"github.com/talaria-agent/talaria/internal/tools",
	"github.com/talaria-agent/talaria/internal/transcript",
	"github.com/talaria-agent/talaria/internal/approval",
	"gorm.io/",
	"database/sql",
	"github.com/jackc/pgx/",
	"github.com/lib/pq",
	"modernc.org/sqlite",
	"github.com/libtnb/sqlite",
	"github.com/glebarez/",
	"github.com/mattn/go-sqlite3",
	"github.com/sashabaranov/go-openai",
	"os/exec",
	"net/http",
}

// sdkPrefix marks the Temporal SDK and API: the workflow runtime itself.
// Its gRPC transport imports net/http; that dependency belongs to the
// runtime, not to workflow code, so a path through it does not count.
const sdkPrefix = "go.temporal.io/"

// listedPackage is the part of `go list -json` output the check reads.
type listedPackage struct {
	ImportPath string
	Imports    []string
}

// harmlessDeps are subpackages of forbiddenDeps that cannot do I/O:
// database/sql/driver only declares interfaces (a UUID type implements its
// Valuer), and its internal helper.
var harmlessDeps = []string{"database/sql/driver", "database/sql/internal"}

// forbidden reports whether path is one of forbiddenDeps or under one of
// them (a path ending in "/" is a prefix), and not one of harmlessDeps.
func forbidden(path string) bool {
	if slices.Contains(harmlessDeps, path) {
		return false
	}
	for _, f := range forbiddenDeps {
		if path == f || (strings.HasSuffix(f, "/") && strings.HasPrefix(path, f)) ||
			(!strings.HasSuffix(f, "/") && strings.HasPrefix(path, f+"/")) {
			return true
		}
	}
	return false
}

// forbiddenChains walks the import graph from root without entering the
// Temporal SDK and returns, sorted, one import chain ("a -> b -> c") for
// every forbidden package it reaches. Pure.
func forbiddenChains(graph map[string][]string, root string) []string {
	parent := map[string]string{root: ""}
	queue := []string{root}
	var chains []string
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p != root && forbidden(p) {
			chain := []string{p}
			for q := parent[p]; q != ""; q = parent[q] {
				chain = append(chain, q)
			}
			slices.Reverse(chain)
			chains = append(chains, strings.Join(chain, " -> "))
			continue
		}
		if p != root && strings.HasPrefix(p, sdkPrefix) {
			continue
		}
		for _, imp := range graph[p] {
			if _, seen := parent[imp]; !seen {
				parent[imp] = p
				queue = append(queue, imp)
			}
		}
	}
	slices.Sort(chains)
	return chains
}

// sdkForbidden lists, sorted, the forbidden packages the Temporal SDK's
// packages in graph depend on. Pure.
func sdkForbidden(graph map[string][]string) []string {
	seen := map[string]bool{}
	var queue []string
	for p := range graph {
		if strings.HasPrefix(p, sdkPrefix) {
			seen[p] = true
			queue = append(queue, p)
		}
	}
	var out []string
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if forbidden(p) {
			out = append(out, p)
		}
		for _, imp := range graph[p] {
			if !seen[imp] {
				seen[imp] = true
				queue = append(queue, imp)
			}
		}
	}
	slices.Sort(out)
	return out
}

func TestSDKForbidden(t *testing.T) {
	graph := map[string][]string{
		"w":                           {"go.temporal.io/sdk/workflow", "x/ours"},
		"x/ours":                      {"os/exec"},
		"go.temporal.io/sdk/workflow": {"google.golang.org/grpc", "x/uuid"},
		"google.golang.org/grpc":      {"net/http"},
		"x/uuid":                      {"database/sql/driver"},
	}
	if got, want := sdkForbidden(graph), []string{"net/http"}; !slices.Equal(got, want) {
		t.Errorf("sdkForbidden = %q, want %q", got, want)
	}
}

func TestForbiddenChains(t *testing.T) {
	const root = "github.com/talaria-agent/talaria/workflows"
	tests := []struct {
		name  string
		graph map[string][]string
		want  []string
	}{
		{"clean", map[string][]string{root: {"fmt", "internal/turnapi"}, "internal/turnapi": {"time"}}, nil},
		{"direct import", map[string][]string{root: {"github.com/talaria-agent/talaria/models"}},
			[]string{root + " -> github.com/talaria-agent/talaria/models"}},
		{"through a package of ours", map[string][]string{root: {"x/helper"}, "x/helper": {"os/exec"}},
			[]string{root + " -> x/helper -> os/exec"}},
		{"prefix", map[string][]string{root: {"gorm.io/gorm"}}, []string{root + " -> gorm.io/gorm"}},
		{"subpackage", map[string][]string{root: {"net/http/httptrace"}}, []string{root + " -> net/http/httptrace"}},
		{"not a prefix match", map[string][]string{root: {"net/httpx", "os/execute"}}, nil},
		{"harmless subpackage", map[string][]string{root: {"x/uuid"}, "x/uuid": {"database/sql/driver"}}, nil},
		{"database/sql itself", map[string][]string{root: {"x/uuid"}, "x/uuid": {"database/sql"}},
			[]string{root + " -> x/uuid -> database/sql"}},
		{"only through the SDK", map[string][]string{root: {"go.temporal.io/sdk/workflow"},
			"go.temporal.io/sdk/workflow": {"google.golang.org/grpc"}, "google.golang.org/grpc": {"net/http"}}, nil},
		{"SDK and ours", map[string][]string{root: {"go.temporal.io/sdk/workflow", "x/web"},
			"go.temporal.io/sdk/workflow": {"net/http"}, "x/web": {"net/http"}},
			[]string{root + " -> x/web -> net/http"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := forbiddenChains(tt.graph, root); !slices.Equal(got, tt.want) {
				t.Errorf("forbiddenChains = %q, want %q", got, tt.want)
			}
		})
	}
}

// goCommand finds the go command: on PATH, else in GOROOT.
func goCommand() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	//lint:ignore SA1019 a fallback only, when go is not on PATH
	for _, root := range []string{os.Getenv("GOROOT"), runtime.GOROOT()} {
		if root == "" {
			continue
		}
		p := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no go command on PATH or in GOROOT")
}

// listDeps runs `go list -deps -json` on the package in the current
// directory and returns its import graph and its import path.
func listDeps(t *testing.T) (map[string][]string, string) {
	t.Helper()
	goCmd, err := goCommand()
	if err != nil {
		t.Skipf("cannot check the dependencies of workflows: %v", err)
	}
	var out, stderr bytes.Buffer
	cmd := exec.Command(goCmd, "list", "-deps", "-json=ImportPath,Imports", ".")
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list -deps: %v: %s", err, stderr.String())
	}
	graph := map[string][]string{}
	var last string
	dec := json.NewDecoder(&out)
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list -deps: decode: %v", err)
		}
		graph[p.ImportPath] = p.Imports
		last = p.ImportPath // -deps lists the named package last
	}
	return graph, last
}

// TestWorkflowsImportNoIO asserts from `go list -deps` that the workflows
// package depends on none of forbiddenDeps: not directly, not through a
// package of its own module, and not through the Temporal SDK either,
// except for net/http, which the SDK's gRPC transport brings.
func TestWorkflowsImportNoIO(t *testing.T) {
	graph, root := listDeps(t)
	if !strings.HasSuffix(root, "/workflows") {
		t.Fatalf("go list -deps listed %q last, want the workflows package", root)
	}
	var bad []string
	for _, chain := range forbiddenChains(graph, root) {
		bad = append(bad, "imports "+chain)
	}
	for _, p := range sdkForbidden(graph) {
		if !strings.HasPrefix(p, "net/http") {
			bad = append(bad, fmt.Sprintf("depends on %s through the Temporal SDK", p))
		}
	}
	for _, b := range bad {
		t.Errorf("workflows %s", b)
	}
}
