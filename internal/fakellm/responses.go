package fakellm

// This file holds the OpenAI Responses API format at POST /v1/responses:
// its state (the reasoning items it issued), authentication, errors and
// JSON answers. responses_decode.go reads its requests,
// responses_stream.go streams its answers.

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// responsesFormat is the OpenAI Responses API. It remembers which
// function calls it issued together with a reasoning item, so that it can
// refuse, as the real API does, a later request that sends such a call
// back without its reasoning item; the encrypted content of its reasoning
// items is an HMAC of their id with a secret of the server.
type responsesFormat struct {
	secret []byte

	mu        sync.Mutex
	calls     map[string]issuedCall // by call id
	reasoning map[string]bool       // ids of the reasoning items issued
}

// issuedCall is a function call the fake issued: its item id and the id
// of the reasoning item it came with ("" when none).
type issuedCall struct {
	item, reasoning string
}

// newResponsesFormat is the format of one server, with a fresh secret.
func newResponsesFormat() *responsesFormat {
	secret := make([]byte, 32)
	_, _ = rand.Read(secret) // crypto/rand.Read does not fail
	return &responsesFormat{secret: secret, calls: map[string]issuedCall{}, reasoning: map[string]bool{}}
}

func (*responsesFormat) wire() Wire { return WireResponses }

// authorized checks the Bearer key, as chat completions do.
func (*responsesFormat) authorized(r *http.Request, key string) bool {
	return key == "" || r.Header.Get("Authorization") == "Bearer "+key
}

// writeError writes an error in the OpenAI shape, as chat completions do.
func (*responsesFormat) writeError(w http.ResponseWriter, e apiError) { writeAPIError(w, e) }

// seal is the encrypted content of the reasoning item id.
func (f *responsesFormat) seal(id string) string {
	mac := hmac.New(sha256.New, f.secret)
	mac.Write([]byte("reasoning:" + id))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// verify reports whether content is the encrypted content issued for id.
func (f *responsesFormat) verify(id, content string) bool {
	return hmac.Equal([]byte(f.seal(id)), []byte(content))
}

// issue records the reasoning item and the calls of an answer.
func (f *responsesFormat) issue(out rsOutput) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rs := ""
	if out.reasoning != nil {
		rs = out.reasoning.ID
		f.reasoning[rs] = true
	}
	for _, c := range out.calls {
		f.calls[c.CallID] = issuedCall{item: c.ID, reasoning: rs}
	}
}

// issuedCall returns the record of a call the fake issued.
func (f *responsesFormat) issuedCall(callID string) (issuedCall, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.calls[callID]
	return c, ok
}

// issuedReasoning reports whether the fake issued the reasoning item id.
func (f *responsesFormat) issuedReasoning(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reasoning[id]
}

// body is the response object of a JSON answer.
func (f *responsesFormat) body(p plan) (any, error) {
	out := f.output(p)
	return responseObject(p, out.items(false), out.status, true), nil
}

// rsOutput is the output of one answer: its items and status.
type rsOutput struct {
	reasoning *rsReasoningItem
	message   *rsMessageItem
	calls     []rsFunctionCallItem
	// status is completed or incomplete.
	status string
}

// items lists the output items in order; pending: as output_item.added
// announces them, before their content.
func (o rsOutput) items(pending bool) []any {
	var items []any
	if o.reasoning != nil {
		items = append(items, o.reasoning.at(pending))
	}
	if o.message != nil {
		items = append(items, o.message.at(pending))
	}
	for _, c := range o.calls {
		items = append(items, c.at(pending))
	}
	return items
}

// output builds the output of a plan's step and records what it issues:
// the reasoning item (with its encrypted content when the request asked
// for it), the message, the function calls.
func (f *responsesFormat) output(p plan) rsOutput {
	n, _ := p.native.(*rsNative)
	if n == nil {
		n = &rsNative{}
	}
	num := strings.TrimPrefix(p.id, "chatcmpl-fake-")
	out := rsOutput{status: "completed"}
	if p.step.Reasoning != "" {
		rs := &rsReasoningItem{ID: "rs_fake_" + num, Type: "reasoning",
			Summary: []rsSummaryText{{Type: "summary_text", Text: p.step.Reasoning}}}
		if n.encrypted {
			sealed := f.seal(rs.ID)
			rs.EncryptedContent = &sealed
		}
		out.reasoning = rs
	}
	if p.step.Text != "" || len(p.calls) == 0 {
		out.message = &rsMessageItem{ID: "msg_fake_" + num, Type: "message", Status: "completed", Role: "assistant",
			Content: []rsOutputText{{Type: "output_text", Text: p.step.Text, Annotations: []any{}, Logprobs: []any{}}}}
	}
	for i, c := range p.calls {
		out.calls = append(out.calls, rsFunctionCallItem{ID: "fc_fake_" + num + "_" + strconv.Itoa(i), Type: "function_call",
			Status: "completed", Arguments: c.Arguments, CallID: c.ID, Name: c.Name})
	}
	switch p.finish {
	case "length", "content_filter":
		out.status = "incomplete"
	}
	f.issue(out)
	return out
}
