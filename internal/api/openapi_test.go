package api

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestOpenAPIDescribesEveryRoute: openapi.json is a valid OpenAPI 3
// document, and its operations are exactly the routes the server
// registers (method and path), each with its errors in the one shape.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(openAPI)
	if err != nil {
		t.Fatalf("openapi.json does not load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.json is not valid OpenAPI 3: %v", err)
	}
	s := &Server{}
	s.routes()
	var routes, described []string
	for _, p := range s.patterns {
		method, path, _ := strings.Cut(p, " ")
		routes = append(routes, method+" "+path)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			described = append(described, method+" "+path)
			for code, r := range op.Responses.Map() {
				if code[0] != '4' && code[0] != '5' {
					continue
				}
				if r.Value.Content.Get("application/json") == nil || r.Value.Content.Get("application/json").Schema.Ref != "#/components/schemas/Error" {
					t.Errorf("%s %s: response %s is not the Error shape", method, path, code)
				}
			}
			if path != "/health" && op.Responses.Value("401") == nil {
				t.Errorf("%s %s: no 401 described", method, path)
			}
		}
	}
	slices.Sort(routes)
	slices.Sort(described)
	for _, r := range routes {
		if !slices.Contains(described, r) {
			t.Errorf("route %s is not in openapi.json", r)
		}
	}
	for _, d := range described {
		if !slices.Contains(routes, d) {
			t.Errorf("openapi.json describes %s, which is no route", d)
		}
	}
}
