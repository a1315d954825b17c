package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestMisfit: a body of valid JSON that does not fit is answered in the
// request's terms, the field named in param, never in Go's.
func TestMisfit(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		body, param, msg string
	}{
		{`{"input": 5}`, "input", "field input: want a string, not a number"},
		{`{"input": "hi", "images": "x"}`, "images", "field images: want an array, not a string"},
		{`{"input": "hi", "max_iterations": "many"}`, "max_iterations", "field max_iterations: want a number, not a string"},
		{`{"input": "hi", "max_iteration": 3}`, "max_iteration", `field "max_iteration" is not one this request takes`},
	} {
		dec := json.NewDecoder(bytes.NewReader([]byte(tt.body)))
		dec.DisallowUnknownFields()
		var req runRequest
		err := misfit(dec.Decode(&req))
		var e *apiError
		if !errors.As(err, &e) || e.Param != tt.param || e.Message != tt.msg || strings.Contains(e.Message, "Go") {
			t.Errorf("%s: %+v, want param %q and %q", tt.body, e, tt.param, tt.msg)
		}
	}
}
