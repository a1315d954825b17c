package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/fakellm"
)

// uiURL finds the Web UI's login URL on serve's ready line.
var uiURL = regexp.MustCompile(`talaria serve: ready \(.*, web UI (http://\S+)\)`)

// TestWebUI: serve with --ui-port answers the Temporal Web UI's index page
// and its API within 5 s of its ready line, to a browser that opened the
// URL with the token the ready line prints, and to nothing else; after a
// turn, the UI's API lists it when asked for its session id, with how it
// ended.
func TestWebUI(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.TextStep("done"))
	defer model.Close()
	u := newUser(t, model.URL())
	port := freePort(t)
	s := u.daemon("talaria serve: ready", "serve", "--temporal-port", "0", "--ui-port", fmt.Sprint(port))
	ready := time.Now()

	w := s.cmd.Stderr.(*lockedWriter)
	w.mu.Lock()
	m := uiURL.FindStringSubmatch(s.stderr.String())
	w.mu.Unlock()
	if m == nil {
		t.Fatalf("no web UI URL on the ready line:\n%s", s.stderr.String())
	}
	login := m[1]
	base := fmt.Sprintf("http://127.0.0.1:%d/", port)
	if !strings.HasPrefix(login, base+"?token=") {
		t.Fatalf("web UI URL %q, want %s?token=...", login, base)
	}
	if info, err := engine.ReadServeInfo(u.home); err != nil || info.UI != login {
		t.Fatalf("serve.json ui = %q (%v), want the ready line's %q", info.UI, err, login)
	}

	// Within 5 s of ready: the index page and the API, once let in.
	ctx, cancel := context.WithDeadline(context.Background(), ready.Add(5*time.Second))
	defer cancel()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	status, body := fetch(ctx, t, browser, login)
	if status != http.StatusOK || !strings.Contains(strings.ToLower(body), "<html") {
		t.Fatalf("index page: %d %.200q", status, body)
	}
	status, body = fetch(ctx, t, browser, base+"api/v1/namespaces")
	if status != http.StatusOK || !strings.Contains(body, `"default"`) {
		t.Fatalf("namespaces: %d %.300q", status, body)
	}
	cancel()

	// The cookie is named after the port and holds no token: browsers send
	// it to every port of the host.
	baseURL, _ := url.Parse(base)
	token := strings.TrimPrefix(login, base+"?token=")
	var cookie *http.Cookie
	for _, c := range jar.Cookies(baseURL) {
		if c.Name == fmt.Sprintf("talaria_ui_%d", port) {
			cookie = c
		}
		if c.Name == "talaria_ui" || strings.Contains(c.Value, token) {
			t.Errorf("cookie %s=%s carries the token or the portless name", c.Name, c.Value)
		}
	}
	if cookie == nil || len(cookie.Value) != 64 {
		t.Fatalf("no talaria_ui_%d cookie with a derived value: %v", port, jar.Cookies(baseURL))
	}

	// Without the cookie, or with a wrong token: refused, one line of help.
	stranger := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for path, want := range map[string]int{
		"": http.StatusUnauthorized, "api/v1/namespaces": http.StatusUnauthorized,
		"api/v1/namespaces/default/workflows": http.StatusUnauthorized, "?token=guess": http.StatusForbidden,
	} {
		status, body := fetch(context.Background(), t, stranger, base+path)
		if status != want || strings.Count(body, "\n") != 1 || !strings.Contains(body, "talaria status") {
			t.Errorf("GET /%s without the cookie: %d %q, want %d and one line", path, status, body, want)
		}
	}

	if _, stderr, code := u.run(2*time.Minute, "chat", "-q", "hello from the UI test", "--session", "ui-e2e"); code != 0 {
		t.Fatalf("chat exit %d: %s", code, stderr)
	}
	// Visibility is eventually consistent: the finished turn shows up
	// within seconds, found by its session and its stop reason.
	q := url.Values{"query": {`TalariaSessionId="ui-e2e" AND TalariaStopReason="text_response"`}}
	list := base + "api/v1/namespaces/default/workflows?" + q.Encode()
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body = fetch(context.Background(), t, browser, list)
		if status == http.StatusOK && strings.Contains(body, `"turn/ui-e2e/1"`) && strings.Contains(body, "COMPLETED") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the UI does not list the turn by session id: %d %.500s", status, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// talaria status links to the session's turns in the UI, token included.
	out, stderr, code := u.run(time.Minute, "status", "ui-e2e", "-o", "json")
	var st struct{ UI string }
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || !strings.HasPrefix(st.UI, base+"namespaces/default/workflows?") {
		t.Fatalf("status -o json: exit %d, ui %q (%v)\n%s%s", code, st.UI, err, out, stderr)
	}
	if out, _, _ := u.run(time.Minute, "status", "ui-e2e"); !strings.Contains(out, "web UI: "+st.UI) {
		t.Fatalf("status does not show the web UI link:\n%s", out)
	}
	jar2, _ := cookiejar.New(nil)
	if status, body := fetch(context.Background(), t, &http.Client{Jar: jar2}, st.UI); status != http.StatusOK {
		t.Fatalf("status's web UI link: %d %.200q", status, body)
	}
	status, body = fetch(context.Background(), t, browser,
		base+"api/v1/namespaces/default/workflows?"+url.Values{"query": {`TalariaSessionId="another"`}}.Encode())
	if status != http.StatusOK || strings.Contains(body, "ui-e2e") {
		t.Fatalf("another session's query lists this one: %d %.300s", status, body)
	}

	// Read-only: a terminate of the turn, also with its id's slashes
	// encoded (which put "/query/" in the decoded path), is refused by the
	// guard with its one line, and the turn stays as it ended.
	csrf := ""
	for _, c := range jar.Cookies(baseURL) {
		if c.Name == "_csrf" {
			csrf = c.Value
		}
	}
	for _, path := range []string{
		"api/v1/namespaces/default/workflows/turn%2Fui-e2e%2F1/terminate",
		"api/v1/namespaces/default/workflows/x%2Fquery%2Fy/terminate",
		"api/v1/namespaces/default/workflows/query/terminate",
	} {
		req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(`{}`))
		req.Header.Set("X-CSRF-Token", csrf)
		req.Header.Set("Content-Type", "application/json")
		resp, err := browser.Do(req)
		if err != nil {
			t.Fatalf("POST /%s: %v", path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || strings.Count(string(b), "\n") != 1 || !strings.Contains(string(b), "read-only") {
			t.Errorf("POST /%s: %d %q, want 405 and one line", path, resp.StatusCode, b)
		}
	}
	status, body = fetch(context.Background(), t, browser, base+"api/v1/namespaces/default/workflows/turn%2Fui-e2e%2F1")
	if status != http.StatusOK || !strings.Contains(body, "COMPLETED") {
		t.Fatalf("the turn after the refused terminates: %d %.300s", status, body)
	}
}

// fetch GETs target with c and returns the status and body.
func fetch(ctx context.Context, t *testing.T, c *http.Client, target string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	return resp.StatusCode, string(body)
}
