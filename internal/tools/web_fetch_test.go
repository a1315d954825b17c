package tools

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const articlePage = `<!doctype html><html><head><title>Release notes</title></head><body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article><h1>Release notes</h1>
<p>Version 2 adds <strong>durable</strong> turns that survive a restart of the worker, and
much else besides: this paragraph is long enough for the extractor to take it as the article.</p>
<p>Read the <a href="/docs/start">getting started guide</a> next; it explains the set-up step by step,
with every command, and what each one prints when it works.</p>
<ul><li>first change</li><li>second change</li></ul>
</article>
<footer>Copyright nobody</footer></body></html>`

func fetchServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/article", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, articlePage)
	})
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/article", http.StatusFound) })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/ftp", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://example.com/file", http.StatusFound)
	})
	mux.HandleFunc("/api", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"ok":true}`)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		line := strings.Repeat("x", 99) + "\n"
		for range 60_000 { // 6 MB
			fmt.Fprint(w, line)
		}
	})
	mux.HandleFunc("/image", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n"))
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func TestWebFetch(t *testing.T) {
	s := fetchServer(t)
	open := Env{Policy: Policy{AllowPrivateNetwork: true}}
	for _, tt := range []struct {
		name, path string
		env        Env
		has        []string
		hasNot     []string
		finalPath  string
		truncated  bool
		wantErr    error
		errHas     string
	}{
		{name: "article as markdown", path: "/article", env: open,
			has:    []string{"**durable**", "[getting started guide](" + s.URL + "/docs/start)", "- first change"},
			hasNot: []string{"Copyright", "About"}, finalPath: "/article"},
		{name: "redirect followed", path: "/old", env: open, has: []string{"**durable**"}, finalPath: "/article"},
		{name: "redirect loop", path: "/loop", env: open, errHas: "more than 5 redirects"},
		{name: "redirect to ftp", path: "/ftp", env: open, errHas: "only http:// and https:// URLs are fetched"},
		{name: "json as is", path: "/api", env: open, has: []string{`{"ok":true}`}, finalPath: "/api"},
		{name: "size limit", path: "/big", env: Env{Policy: Policy{AllowPrivateNetwork: true}, MaxOutputChars: 20_000}, truncated: true, finalPath: "/big"},
		{name: "not text", path: "/image", env: open, errHas: "image/png, not text"},
		{name: "not found", path: "/nothing", env: open, errHas: "HTTP 404"},
		{name: "private refused", path: "/article", env: Env{}, wantErr: ErrBlockedAddress, errHas: "127.0.0.1 is not a public address"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runTool(t, WebFetch, tt.env, mustJSON(t, map[string]string{"url": s.URL + tt.path}))
			if tt.wantErr != nil || tt.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Fatalf("%s %v, want an error with %q", out, err, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r := decode[webFetchResult](t, out)
			for _, h := range tt.has {
				if !strings.Contains(r.Content, h) {
					t.Errorf("content lacks %q:\n%s", h, r.Content)
				}
			}
			for _, h := range tt.hasNot {
				if strings.Contains(r.Content, h) {
					t.Errorf("content holds %q:\n%s", h, r.Content)
				}
			}
			if r.URL != s.URL+tt.finalPath || r.Truncated != tt.truncated || len(out) > max(tt.env.maxOutput(), 0)+1000 {
				t.Errorf("url %s truncated %v (%d chars)", r.URL, r.Truncated, len(out))
			}
		})
	}
	for _, bad := range []string{"file:///etc/passwd", "gopher://x", "http://", "https://user:pw@example.com/", "not a url"} {
		if _, err := runTool(t, WebFetch, open, mustJSON(t, map[string]string{"url": bad})); !errors.Is(err, ErrInvalidArguments) {
			t.Errorf("%q: %v, want invalid arguments", bad, err)
		}
	}
	// A name resolving to loopback is refused at the dial, as its address.
	u := strings.Replace(s.URL, "127.0.0.1", "localhost", 1) + "/article"
	if _, err := runTool(t, WebFetch, Env{}, mustJSON(t, map[string]string{"url": u})); !errors.Is(err, ErrBlockedAddress) {
		t.Errorf("localhost: %v, want a refusal", err)
	}
}

func TestPublicIP(t *testing.T) {
	for _, tt := range []struct {
		ip     string
		public bool
	}{
		{"8.8.8.8", true}, {"1.1.1.1", true}, {"2606:4700:4700::1111", true},
		{"127.0.0.1", false}, {"127.1.2.3", false}, {"10.0.0.1", false}, {"172.16.5.4", false}, {"192.168.1.1", false},
		{"169.254.169.254", false}, {"100.64.0.1", false}, {"0.0.0.0", false}, {"0.1.2.3", false}, {"224.0.0.1", false},
		{"255.255.255.255", false}, {"::1", false}, {"::", false}, {"fe80::1", false}, {"fc00::1", false}, {"fd12::1", false},
		{"::ffff:127.0.0.1", false}, {"::ffff:10.0.0.1", false}, {"64:ff9b::a00:1", false}, {"ff02::1", false},
	} {
		if got := publicIP(net.ParseIP(tt.ip)); got != tt.public {
			t.Errorf("publicIP(%s) = %v, want %v", tt.ip, got, tt.public)
		}
	}
}
