package embedded

import (
	"context"
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
)

const testToken = "0123456789abcdef0123456789abcdef0123456789abcdef"

func TestGuardVerdicts(t *testing.T) {
	g := newGuard(testToken, nil)
	cookie := func(v string) *http.Cookie { return &http.Cookie{Name: UICookie, Value: v} }
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
		{"right cookie", "/api/v1/namespaces", cookie(testToken), guardPass},
		{"wrong cookie", "/", cookie("x"), guardWrong},
		{"wrong token beats right cookie", "/?token=x", cookie(testToken), guardWrong},
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
// token URL, refuses everything else, and refuses write actions.
func TestUIBehindGuard(t *testing.T) {
	cred, err := NewTLS()
	if err != nil {
		t.Fatal(err)
	}
	s := startEphemeral(t, Options{TLS: cred})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
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
	for _, c := range login.Cookies() {
		if c.Name == UICookie {
			got = c
		}
	}
	if got == nil || !got.HttpOnly || got.SameSite != http.SameSiteStrictMode || got.Value != testToken {
		t.Fatalf("login cookie %+v, want HttpOnly SameSite=Strict with the token", got)
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

	// A write (terminate) with the UI's own CSRF token is still refused.
	u, _ := url.Parse(ui.URL())
	csrf := ""
	for _, c := range jar.Cookies(u) {
		if c.Name == "_csrf" {
			csrf = c.Value
		}
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost,
		ui.URL()+"api/v1/namespaces/default/workflows/some-id/terminate", strings.NewReader(`{}`))
	req.Header.Set("X-CSRF-Token", csrf)
	req.Header.Set("Content-Type", "application/json")
	resp, err := browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, resp); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("terminate through the UI: %d %.200q, want 405", resp.StatusCode, body)
	}
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
