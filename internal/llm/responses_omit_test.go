package llm

import (
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

func TestOmitRefused(t *testing.T) {
	t.Parallel()
	bad := func(param, msg string) error {
		return &Error{Class: "bad_request", Status: 400, Param: param, Message: msg}
	}
	for _, tt := range []struct {
		name  string
		omit  responsesOmit
		reply Reply
		err   error
		want  responsesOmit
		again bool
	}{
		{"success", responsesOmit{}, Reply{}, nil, responsesOmit{}, false},
		{"include by param", responsesOmit{}, Reply{}, bad("include", "Encrypted content is not supported with this model."), responsesOmit{include: true}, true},
		{"include by message", responsesOmit{}, Reply{}, bad("", "upstream: Encrypted content is not supported"), responsesOmit{include: true}, true},
		{"include already left out", responsesOmit{include: true}, Reply{}, bad("include", "Encrypted content is not supported"), responsesOmit{include: true}, false},
		{"summary", responsesOmit{include: true}, Reply{}, bad("reasoning.summary", "Your organization must be verified to generate reasoning summaries."),
			responsesOmit{include: true, summary: true}, true},
		{"another 400", responsesOmit{}, Reply{}, bad("input", "Invalid value"), responsesOmit{}, false},
		{"a 429 is no refusal", responsesOmit{}, Reply{}, &Error{Status: 429, Param: "include"}, responsesOmit{}, false},
		{"text already shown", responsesOmit{}, Reply{Streamed: "Hel"}, bad("include", "x"), responsesOmit{}, false},
	} {
		got, again := omitRefused(tt.omit, tt.reply, tt.err)
		if got != tt.want || again != tt.again {
			t.Errorf("%s: %+v %v, want %+v %v", tt.name, got, again, tt.want, tt.again)
		}
	}
}

// TestResponsesLeavesOutRefusedReasoning: a model without reasoning
// refuses the encrypted reasoning; the call is made again at once without
// it, and later calls to that endpoint and model leave it out from the
// start.
func TestResponsesLeavesOutRefusedReasoning(t *testing.T) {
	t.Parallel()
	for _, m := range responsesModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			srv := fakellm.New(fakellm.TextStep("first"), fakellm.TextStep("second"))
			defer srv.Close()
			e := responsesEndpoint(srv)
			e.Model = "gpt-4o-" + m.name
			for _, want := range []string{"first", "second"} {
				r, _, err := callResponses(t, e, request(), m.stream)
				if err != nil || r.Content != want {
					t.Fatalf("call = %q, %v; want %q", r.Content, err, want)
				}
			}
			reqs := srv.Requests()
			if len(reqs) != 3 || reqs[0].Status != 400 || !strings.Contains(string(reqs[0].Raw), "reasoning.encrypted_content") {
				t.Fatalf("requests: %d, first status %d", len(reqs), reqs[0].Status)
			}
			for _, r := range reqs[1:] {
				if strings.Contains(string(r.Raw), "encrypted_content") || r.Status != 200 {
					t.Fatalf("a later request still asks for the encrypted reasoning (status %d): %s", r.Status, r.Raw)
				}
			}
		})
	}
}
