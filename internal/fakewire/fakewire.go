// Package fakewire holds what the tests' platform fakes (faketelegram,
// fakeslack, fakesmtp) share: reading an API call's parameters as the
// platforms take them, and waiting for what a fake received.
package fakewire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"time"
)

// ReadParams reads a method call's parameters, form-encoded or a JSON
// object (non-string values as their JSON); an empty JSON body is none.
func ReadParams(r *http.Request) (map[string]string, error) {
	out := map[string]string{}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		for k, v := range body {
			if str, ok := v.(string); ok {
				out[k] = str
				continue
			}
			b, _ := json.Marshal(v)
			out[k] = string(b)
		}
		return out, nil
	}
	if err := r.ParseForm(); err != nil {
		return nil, err
	}
	for k := range r.Form {
		out[k] = r.Form.Get(k)
	}
	return out, nil
}

// Wait polls get until ok holds for what it returns, or ctx ends (then it
// returns the last value and ctx's error).
func Wait[T any](ctx context.Context, get func() T, ok func(T) bool) (T, error) {
	for {
		if v := get(); ok(v) {
			return v, nil
		}
		select {
		case <-ctx.Done():
			return get(), ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Post is a platform's webhook request: body POSTed to url with
// contentType and the extra headers (a signature); it returns the
// answer's status.
func Post(url, contentType string, body []byte, headers map[string]string) (int, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", contentType)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 15 * time.Second}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}
