package llm

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
)

// withExtraBody wraps a transport so that every JSON request body it sends
// gains the fields of extra (a field the body already has is replaced).
// No extra: the transport as it is.
func withExtraBody(base http.RoundTripper, extra map[string]any) http.RoundTripper {
	if len(extra) == 0 {
		return base
	}
	base = cmp.Or(base, http.DefaultTransport)
	return extraBody{base: base, extra: extra}
}

type extraBody struct {
	base  http.RoundTripper
	extra map[string]any
}

func (t extraBody) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Method != http.MethodPost {
		return t.base.RoundTrip(req)
	}
	data, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	if merged, ok := mergeBody(data, t.extra); ok {
		data = merged
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(data))
	out.ContentLength = int64(len(data))
	out.Header.Set("Content-Length", strconv.Itoa(len(data)))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	return t.base.RoundTrip(out)
}

// mergeBody adds extra's fields to a JSON object; false when data is not
// one. Pure.
func mergeBody(data []byte, extra map[string]any) ([]byte, bool) {
	var body map[string]json.RawMessage
	if err := json.Unmarshal(data, &body); err != nil || body == nil {
		return nil, false
	}
	for k, v := range extra {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, false
		}
		body[k] = b
	}
	out, err := json.Marshal(body)
	return out, err == nil
}
