package engine

import (
	"net/url"
	"testing"
)

func TestSessionUIURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, login, namespace, session string
		wantPath, wantQuery             string
	}{
		{"plain", "http://127.0.0.1:8233/?token=abc", "default", "s1",
			"/namespaces/default/workflows", `TalariaSessionId="s1"`},
		{"odd session id is quoted", "http://127.0.0.1:9000/?token=abc", "team", `a"b c`,
			"/namespaces/team/workflows", `TalariaSessionId="a\"b c"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := url.Parse(sessionUIURL(tt.login, tt.namespace, tt.session))
			if err != nil {
				t.Fatal(err)
			}
			login, _ := url.Parse(tt.login)
			if got.Host != login.Host || got.Path != tt.wantPath {
				t.Errorf("URL %s, want host %s path %s", got, login.Host, tt.wantPath)
			}
			if q := got.Query(); q.Get("query") != tt.wantQuery || q.Get("token") != "abc" {
				t.Errorf("query %v, want query=%s and the token", q, tt.wantQuery)
			}
		})
	}
	if got := sessionUIURL("::not a url", "default", "s"); got != "" {
		t.Errorf("bad login URL gives %q, want empty", got)
	}
}
