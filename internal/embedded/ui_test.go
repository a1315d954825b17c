package embedded

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

const testToken = "0123456789abcdef0123456789abcdef0123456789abcdef"

func TestGuardVerdicts(t *testing.T) {
	g := newGuard(testToken, 8233, nil)
	cookie := func(v string) *http.Cookie { return &http.Cookie{Name: "talaria_ui_8233", Value: v} }
	derived := cookieValue(testToken)
	tests := []struct {
		name   string
		target string
		cookie *http.Cookie
		want   guardVerdict
	}{
		{"nothing", "/", nil, guardMissing},
		{"api without cookie", "/api/v1/namespaces", nil, guardMissing},
		{"right token", "/?token=" + testToken, nil, guardLogin},
		{"right token deep link", "/namespaces/default/workflows?token=" + testToken + "&x=1", nil, guardLogin},
		{"wrong token", "/?token=nope", nil, guardWrong},
		{"empty token", "/?token=", nil, guardWrong},
		{"token twice", "/?token=" + testToken + "&token=" + testToken, nil, guardWrong},
		{"prefix of the token", "/?token=" + testToken[:40], nil, guardWrong},
		{"right cookie", "/api/v1/namespaces", cookie(derived), guardPass},
		{"the raw token as cookie", "/api/v1/namespaces", cookie(testToken), guardWrong},
		{"right value under another port's name", "/", &http.Cookie{Name: "talaria_ui_8234", Value: derived}, guardMissing},
		{"right value under the old name", "/", &http.Cookie{Name: "talaria_ui", Value: derived}, guardMissing},
		{"wrong cookie", "/", cookie("x"), guardWrong},
		{"wrong token beats right cookie", "/?token=x", cookie(derived), guardWrong},
		{"another cookie only", "/", &http.Cookie{Name: "_csrf", Value: testToken}, guardMissing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, tt.target, nil)
			if tt.cookie != nil {
				r.AddCookie(tt.cookie)
			}
			if got := g.check(r); got != tt.want {
				t.Errorf("check(%s) = %v, want %v", tt.target, got, tt.want)
			}
		})
	}
}

func TestCookieValue(t *testing.T) {
	v := cookieValue(testToken)
	if len(v) != 64 || strings.Contains(v, testToken) || v == cookieValue(testToken+"x") || v != cookieValue(testToken) {
		t.Fatalf("cookieValue = %q: want 64 hex digits, stable, token-specific, not the token", v)
	}
	if UICookieName(8233) != "talaria_ui_8233" {
		t.Fatalf("UICookieName(8233) = %q", UICookieName(8233))
	}
}

func TestReadOnly(t *testing.T) {
	const ns = "/api/v1/namespaces/default/workflows/"
	tests := []struct {
		method, path string
		want         bool
	}{
		{http.MethodGet, ns + "x%2Fquery%2Fy/terminate", true}, // a GET reads whatever its path
		{http.MethodHead, "/", true},
		{http.MethodGet, "/api/v1/namespaces", true},
		{http.MethodPost, ns + "reader/query/__stack_trace", true},
		{http.MethodPost, ns + "some-id/terminate", false},
		{http.MethodPost, ns + "x%2Fquery%2Fy/terminate", false},
		{http.MethodPost, ns + "x%2fquery%2fy/terminate", false},
		{http.MethodPost, ns + "query/terminate", false},
		{http.MethodPost, ns + "x%2Fquery%2Fy", false},
		{http.MethodPost, ns + "session%2Fui/query/__stack_trace", true}, // the UI encodes ids so
		{http.MethodPost, ns + "x%2Fquery%2Fy/query/__stack_trace", true},
		{http.MethodPost, ns + "../query/x", false},
		{http.MethodPost, ns + "%2e%2E/query/x", false},
		{http.MethodPost, ns + "./query/x", false},
		{http.MethodPost, ns + "a%zz/query/x", false},
		{http.MethodPost, ns + "a/query/b/terminate", false},
		{http.MethodPost, ns + "a/query/b%2Fterminate", true}, // a query of type "b/terminate"
		{http.MethodPost, ns + "a/query/", false},
		{http.MethodPost, "/api/v1/namespaces/default/batch-operations/x", false},
		{http.MethodPut, ns + "a/query/b", false},
		{http.MethodDelete, ns + "a", false},
		{http.MethodPatch, ns + "a/query/b", false},
	}
	for _, tt := range tests {
		if got := readOnly(tt.method, tt.path); got != tt.want {
			t.Errorf("readOnly(%s %s) = %v, want %v", tt.method, tt.path, got, tt.want)
		}
	}
}

func TestWithoutToken(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/?token=abc", "/"},
		{"/namespaces/default/workflows?token=abc&query=x", "/namespaces/default/workflows?query=x"},
		{"//evil.example/?token=abc", "/"},
		{"/a%2Fb?token=abc", "/a%2Fb"},
	}
	for _, tt := range tests {
		u, err := url.ParseRequestURI(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := withoutToken(u); got != tt.want {
			t.Errorf("withoutToken(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestUIBehindGuard: the Web UI of a TLS-only server answers its index and
// its API (through the server's credential) to a browser that opened the
// token URL, refuses everything else, and refuses write actions, also
// those that an encoded slash in a workflow id would slip past the UI
// server's own read-only check; a workflow query still works.
func TestUIBehindGuard(t *testing.T) {
	cred, err := NewTLS()
	if err != nil {
		t.Fatal(err)
	}
	s := startEphemeral(t, Options{TLS: cred})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := dial(t, s)
	startWorker(t, c)
	// Running workflows the bypass attempts aim at: a terminate that got
	// through would end one of them.
	for _, id := range []string{"reader", "x/query/y", "query", "some-id"} {
		if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: testTaskQueue}, signalWorkflow); err != nil {
			t.Fatal(err)
		}
	}
	ui, err := s.StartUI(ctx, UIOptions{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ui.Close(); err != nil {
			t.Error(err)
		}
	})
	if !strings.HasPrefix(ui.URL(), "http://127.0.0.1:") || ui.LoginURL() != ui.URL()+"?token="+testToken {
		t.Fatalf("URL %q, login URL %q", ui.URL(), ui.LoginURL())
	}

	plain := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"", "api/v1/namespaces", "api/v1/settings", "_app/immutable/x.js", "?token=wrong"} {
		resp := get(t, plain, ui.URL()+path)
		body := readAll(t, resp)
		want := http.StatusUnauthorized
		if strings.Contains(path, "token=") {
			want = http.StatusForbidden
		}
		if resp.StatusCode != want || strings.Count(body, "\n") != 1 || !strings.Contains(body, "talaria status") {
			t.Errorf("GET /%s without the cookie: %d %q, want %d and one line of help", path, resp.StatusCode, body, want)
		}
	}

	login := get(t, plain, ui.LoginURL())
	readAll(t, login)
	if login.StatusCode != http.StatusSeeOther || login.Header.Get("Location") != "/" {
		t.Fatalf("login: %d to %q, want 303 to /", login.StatusCode, login.Header.Get("Location"))
	}
	var got *http.Cookie
	u, _ := url.Parse(ui.URL())
	for _, c := range login.Cookies() {
		if c.Name == "talaria_ui_"+u.Port() {
			got = c
		}
	}
	if got == nil || !got.HttpOnly || got.SameSite != http.SameSiteStrictMode || got.Value != cookieValue(testToken) || strings.Contains(got.Value, testToken) {
		t.Fatalf("login cookie %+v, want talaria_ui_%s, HttpOnly SameSite=Strict, with the derived value", got, u.Port())
	}

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	index := get(t, browser, ui.LoginURL())
	if body := readAll(t, index); index.StatusCode != http.StatusOK || !strings.Contains(strings.ToLower(body), "<html") {
		t.Fatalf("index after login: %d %.200q", index.StatusCode, body)
	}
	ns := get(t, browser, ui.URL()+"api/v1/namespaces")
	if body := readAll(t, ns); ns.StatusCode != http.StatusOK || !strings.Contains(body, `"default"`) {
		t.Fatalf("namespaces: %d %.300q", ns.StatusCode, body)
	}
	settings := get(t, browser, ui.URL()+"api/v1/settings")
	if body := readAll(t, settings); !strings.Contains(body, `"DisableWriteActions":true`) {
		t.Errorf("settings do not disable write actions: %.500s", body)
	}

	// Writes with the UI's own CSRF token are still refused, by the guard
	// (its one line), before the UI server: plain ones and those whose
	// encoded slashes put "/query/" in the decoded path.
	csrf := ""
	for _, c := range jar.Cookies(u) {
		if c.Name == "_csrf" {
			csrf = c.Value
		}
	}
	post := func(method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, method, ui.URL()+path, strings.NewReader(body))
		req.Header.Set("X-CSRF-Token", csrf)
		req.Header.Set("Content-Type", "application/json")
		resp, err := browser.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, readAll(t, resp)
	}
	const wf = "api/v1/namespaces/default/workflows/"
	start := `{"workflowId":"x/query/new","workflowType":{"name":"signalWorkflow"},"taskQueue":{"name":"` + testTaskQueue + `"}}`
	for _, w := range []struct{ method, path, body string }{
		{http.MethodPost, wf + "some-id/terminate", `{}`},
		{http.MethodPost, wf + "x%2Fquery%2Fy/terminate", `{}`},
		{http.MethodPost, wf + "x%2fquery%2fy/terminate", `{}`},
		{http.MethodPost, wf + "query/terminate", `{}`},
		{http.MethodPost, wf + "x%2Fquery%2Fy/cancel", `{}`},
		{http.MethodPost, wf + "x%2Fquery%2Fnew", start},
		{http.MethodDelete, wf + "reader", ``},
	} {
		status, body := post(w.method, w.path, w.body)
		if status != http.StatusMethodNotAllowed || body != uiReadOnly {
			t.Errorf("%s /%s: %d %.200q, want 405 and the guard's line", w.method, w.path, status, body)
		}
	}
	for _, id := range []string{"reader", "x/query/y", "query", "some-id"} {
		d, err := c.DescribeWorkflowExecution(ctx, id, "")
		if err != nil || d.WorkflowExecutionInfo.Status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			t.Errorf("workflow %s after the refused writes: %v, %v; want running", id, d.GetWorkflowExecutionInfo().GetStatus(), err)
		}
	}
	if _, err := c.DescribeWorkflowExecution(ctx, "x/query/new", ""); err == nil {
		t.Errorf("a refused start made workflow x/query/new")
	}

	// A query, as the UI's stack-trace tab sends it (the workflow id
	// encoded, slashes and all), reaches the workflow.
	for _, id := range []string{"reader", "x%2Fquery%2Fy"} {
		status, body := post(http.MethodPost, wf+id+"/query/__stack_trace", `{"query":{"queryType":"__stack_trace"}}`)
		if stack := queryResult(t, body); status != http.StatusOK || !strings.Contains(stack, "signalWorkflow") {
			t.Errorf("stack-trace query on %s through the UI: %d %.300q, want 200 with the workflow's stack", id, status, body)
		}
	}
}

// queryResult is the first payload of a query response's JSON, decoded.
func queryResult(t *testing.T, body string) string {
	t.Helper()
	var r struct {
		QueryResult struct{ Payloads []struct{ Data []byte } }
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || len(r.QueryResult.Payloads) == 0 {
		return ""
	}
	return string(r.QueryResult.Payloads[0].Data)
}

func TestUIPortTaken(t *testing.T) {
	s := startEphemeral(t, Options{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = s.StartUI(context.Background(), UIOptions{Port: l.Addr().(*net.TCPAddr).Port, Token: testToken})
	if !errors.Is(err, ErrUIPortUnavailable) {
		t.Fatalf("StartUI on a taken port: %v, want ErrUIPortUnavailable", err)
	}
	if _, err := s.StartUI(context.Background(), UIOptions{Token: "short"}); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("StartUI with a short token: %v, want ErrInvalidOptions", err)
	}
}

// TestUIWarning: a UI on loopback has nothing to warn about; one on all
// interfaces says its token travels over plain HTTP.
func TestUIWarning(t *testing.T) {
	s := startEphemeral(t, Options{})
	for ip, open := range map[string]bool{"": false, "127.0.0.1": false, "0.0.0.0": true} {
		ui, err := s.StartUI(context.Background(), UIOptions{IP: ip, Token: testToken})
		if err != nil {
			t.Fatal(err)
		}
		w := ui.Warning()
		if err := ui.Close(); err != nil {
			t.Error(err)
		}
		if open != (w != "") || strings.Contains(w, "\n") || (open && !strings.Contains(w, "plain HTTP")) {
			t.Errorf("UI on %q: warning %q, want one only beyond loopback", ip, w)
		}
	}
}

func TestSearchAttributes(t *testing.T) {
	want := map[string]enumspb.IndexedValueType{"TestKeyword": enumspb.INDEXED_VALUE_TYPE_KEYWORD}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	made := startEphemeral(t, Options{SearchAttributes: want})
	added, err := AddSearchAttributes(ctx, dial(t, made), made.Namespace(), want)
	if err != nil || added {
		t.Fatalf("namespace made with the attribute: added %v, %v; want nothing to add", added, err)
	}

	s := startEphemeral(t, Options{})
	c := dial(t, s)
	if added, err = AddSearchAttributes(ctx, c, s.Namespace(), want); err != nil || !added {
		t.Fatalf("first add: added %v, %v", added, err)
	}
	if added, err = AddSearchAttributes(ctx, c, s.Namespace(), want); err != nil || added {
		t.Fatalf("second add: added %v, %v; want nothing to add", added, err)
	}
	other := map[string]enumspb.IndexedValueType{"TestKeyword": enumspb.INDEXED_VALUE_TYPE_INT}
	if _, err := AddSearchAttributes(ctx, c, s.Namespace(), other); !errors.Is(err, ErrSearchAttributeType) {
		t.Fatalf("another type: %v, want ErrSearchAttributeType", err)
	}
}

func get(t *testing.T, c *http.Client, u string) *http.Response {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	return resp
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
