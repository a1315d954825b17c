package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// testAPIKey is the API key the API tests configure.
const testAPIKey = "e2e-api-key-0123456789abcdef"

// apiServe starts serve with its API on a free loopback port and the test
// key, and returns it with the API's base URL.
func (u *user) apiServe(extra ...string) (*server, string) {
	u.t.Helper()
	return u.apiServeOn(freePort(u.t), extra...)
}

// apiServeOn is apiServe on a given port (a restarted serve keeps its URL).
func (u *user) apiServeOn(port int, extra ...string) (*server, string) {
	u.t.Helper()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	u.env["TALARIA_API_KEY"] = testAPIKey
	args := append([]string{"serve", "--temporal-port", "0", "--ui-port", "0", "--api-listen", fmt.Sprintf("127.0.0.1:%d", port)}, extra...)
	s := u.daemon("talaria serve: ready", args...)
	return s, base
}

// apiCall sends one request to the API with the test key and decodes a
// JSON answer into out (when not nil); it returns the status.
func apiCall(t testing.TB, method, url string, body any, out any) int {
	t.Helper()
	status, data := apiRaw(t, method, url, testAPIKey, body)
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %d, answer is not JSON: %v\n%s", method, url, status, err, data)
		}
	}
	return status
}

// apiCallWith is apiCall with more request headers.
func apiCallWith(t testing.TB, method, url string, body, out any, h http.Header) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	status, data, err := apiSend(ctx, method, url, testAPIKey, body, h)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %d, answer is not JSON: %v\n%s", method, url, status, err, data)
		}
	}
	return status
}

// postRaw posts body with the test key and headers under ctx and returns
// the status, or the error of a request that got no answer.
func postRaw(ctx context.Context, url string, body any, h http.Header) (int, error) {
	status, _, err := apiSend(ctx, http.MethodPost, url, testAPIKey, body, h)
	return status, err
}

// apiRaw sends one request with key (empty: none) and returns the status
// and the body.
func apiRaw(t testing.TB, method, url, key string, body any) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	status, data, err := apiSend(ctx, method, url, key, body, nil)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return status, data
}

// apiSend sends one request with key (empty: none), body as JSON (nil:
// none) and headers h, and returns the status and the body.
func apiSend(ctx context.Context, method, url, key string, body any, h http.Header) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// errorField is a field of an answer in the JSON error shape ("" when
// it is not one).
func errorField(out map[string]any, name string) string {
	e, _ := out["error"].(map[string]any)
	v, _ := e[name].(string)
	return v
}

// errorCode is the code of an answer in the JSON error shape.
func errorCode(out map[string]any) string { return errorField(out, "code") }

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	ID, Event, Data string
}

// sseStream reads the events of an SSE answer.
type sseStream struct {
	resp   *http.Response
	sc     *bufio.Scanner
	cancel context.CancelFunc
}

// openEvents opens a run's event stream, after lastID when not empty.
func openEvents(t *testing.T, url, lastID string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+testAPIKey)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("GET %s: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		data, _ := io.ReadAll(resp.Body)
		cancel()
		t.Fatalf("GET %s: %d %s\n%s", url, resp.StatusCode, resp.Header.Get("Content-Type"), data)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return &sseStream{resp: resp, sc: sc, cancel: cancel}
}

// next is the next event (comments skipped); ok false at the end.
func (s *sseStream) next() (sseEvent, bool) {
	var ev sseEvent
	seen := false
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case line == "":
			if seen {
				return ev, true
			}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id: "):
			ev.ID, seen = line[4:], true
		case strings.HasPrefix(line, "event: "):
			ev.Event, seen = line[7:], true
		case strings.HasPrefix(line, "data: "):
			ev.Data, seen = ev.Data+line[6:], true
		}
	}
	return ev, false
}

func (s *sseStream) close() {
	s.cancel()
	s.resp.Body.Close()
}
