package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestAPISecurity: every route the API describes but /health refuses a
// request without the key, or with a wrong one, with 401 in the error
// shape; the page's files need none and carry a strict CSP; an oversized
// body is 413; a non-loopback address without a configured key refuses
// to start, for serve and for talaria api.
func TestAPISecurity(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.TextStep("hello"))
	defer model.Close()
	u := newUser(t, model.URL())
	_, base := u.apiServe()

	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if status := apiCall(t, http.MethodGet, base+"/openapi.json", nil, &doc); status != http.StatusOK || len(doc.Paths) < 10 {
		t.Fatalf("openapi.json: %d, %d paths", status, len(doc.Paths))
	}
	param := regexp.MustCompile(`\{[a-z]+\}`)
	checked := 0
	for path, item := range doc.Paths {
		for method := range item {
			url := base + param.ReplaceAllString(path, "run_1_x")
			for _, key := range []string{"", "wrong-key-0123456789abcdef"} {
				status, body := apiRaw(t, strings.ToUpper(method), url, key, map[string]string{})
				want := http.StatusUnauthorized
				if path == "/health" {
					want = http.StatusOK
				}
				if status != want {
					t.Errorf("%s %s with key %q: %d, want %d: %s", method, path, key, status, want, body)
					continue
				}
				if want == http.StatusUnauthorized {
					var e struct {
						Error struct{ Message, Type, Code string }
					}
					if json.Unmarshal(body, &e) != nil || e.Error.Code != "invalid_api_key" || strings.Contains(string(body), testAPIKey) {
						t.Errorf("%s %s: 401 body %s", method, path, body)
					}
				}
				checked++
			}
		}
	}
	t.Logf("%d requests without the key checked", checked)

	// The page: no key needed, a strict Content-Security-Policy, no
	// inline script or handler.
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	_, _ = page.ReadFrom(resp.Body)
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if resp.StatusCode != http.StatusOK || !strings.Contains(csp, want) {
			t.Errorf("GET /: %d, CSP %q lacks %q", resp.StatusCode, csp, want)
		}
	}
	if strings.Contains(csp, "unsafe") {
		t.Errorf("CSP allows unsafe sources: %q", csp)
	}
	if regexp.MustCompile(`(?i)<script>|<script[^>]*>[^<]+</script>|\son[a-z]+=`).MatchString(page.String()) {
		t.Errorf("the page has an inline script or event handler:\n%s", page.String())
	}

	// Oversized bodies: 413 in the error shape. The routes that take
	// pictures (a chat completion, a response, a run) take bodies of up
	// to 32 MiB.
	big := map[string]string{"input": strings.Repeat("x", 5<<20)}
	huge := map[string]string{"input": strings.Repeat("x", 33<<20)}
	for path, body := range map[string]map[string]string{"/v1/runs": huge, "/v1/chat/completions": huge, "/v1/responses": huge, "/v1/runs/run_1_x/steer": big} {
		status, answer := apiRaw(t, http.MethodPost, base+path, testAPIKey, body)
		if status != http.StatusRequestEntityTooLarge || !strings.Contains(string(answer), `"request_too_large"`) {
			t.Errorf("POST %s with %d MB: %d %.200s", path, len(body["input"])>>20, status, answer)
		}
	}

	// Beyond loopback without a configured key: refused at once, in one line.
	stranger := newUser(t, model.URL())
	for _, args := range [][]string{
		{"serve", "--temporal-port", "0", "--ui-port", "0", "--api-listen", fmt.Sprintf("0.0.0.0:%d", freePort(t))},
		{"api", "--api-listen", fmt.Sprintf(":%d", freePort(t))},
	} {
		began := time.Now()
		_, stderr, code := stranger.run(time.Minute, args...)
		if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "api.key") {
			t.Errorf("talaria %s without a key: exit %d after %s:\n%s", args[0], code, time.Since(began), stderr)
		}
	}
	// A key too short is refused as configuration.
	stranger.env["TALARIA_API_KEY"] = "short"
	if _, stderr, code := stranger.run(time.Minute, "serve", "--api-listen", "127.0.0.1:0"); code != 2 || !strings.Contains(stderr, "api.key is too short") {
		t.Errorf("a short key: exit %d: %s", code, stderr)
	}
}

// TestAPIAloneWithItsOwnKey: `talaria api` beside a running serve of the
// same home, with no key configured, makes one, keeps it private in
// tls/api-key and takes only it; its ready line (not a terminal here)
// names the file, never the key; a completion through it is a turn of
// serve's worker.
func TestAPIAloneWithItsOwnKey(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.TextStep("answered through talaria api"))
	defer model.Close()
	u := newUser(t, model.URL())
	u.serve(0)
	port := freePort(t)
	a := u.daemon("talaria api: ready", "api", "--api-listen", fmt.Sprintf("127.0.0.1:%d", port))
	ready := serveOutput(a)
	keyFile := filepath.Join(u.home, "tls", "api-key")
	data, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(string(data))
	if fi, _ := os.Stat(keyFile); len(key) < 32 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("api-key: %d characters, mode %v", len(key), fi.Mode().Perm())
	}
	if strings.Contains(ready, key) || !strings.Contains(ready, keyFile) {
		t.Fatalf("ready line shows the key or not its file:\n%s", ready)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	body := map[string]any{"messages": []map[string]string{{"role": "user", "content": "hi"}}}
	if status, _ := apiRaw(t, http.MethodPost, base+"/v1/chat/completions", testAPIKey, body); status != http.StatusUnauthorized {
		t.Fatalf("another key: %d", status)
	}
	status, out := apiRaw(t, http.MethodPost, base+"/v1/chat/completions", key, body)
	if status != http.StatusOK || !strings.Contains(string(out), "answered through talaria api") {
		t.Fatalf("completion through talaria api: %d %s", status, out)
	}
}
