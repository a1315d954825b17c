package main

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsOnlyTheEngineAPI: the command line is flags and output over
// the engine's API: of Talaria it imports only package talaria, config and
// the output package textline, and it never speaks Temporal itself.
func TestImportsOnlyTheEngineAPI(t *testing.T) {
	t.Parallel()
	const module = "github.com/talaria-agent/talaria"
	allowed := map[string]bool{module: true, module + "/config": true, module + "/internal/textline": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			seen++
			talaria := path == module || strings.HasPrefix(path, module+"/")
			if (talaria && !allowed[path]) || strings.HasPrefix(path, "go.temporal.io/") {
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no imports read")
	}
}
