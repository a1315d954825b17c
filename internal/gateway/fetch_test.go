package gateway_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/attach"
	"github.com/talaria-agent/talaria/internal/gateway"
)

// TestDownload: a bounded GET; a file over the bound is refused by its
// Content-Length or by what arrives; no error names the URL (which may
// hold a credential).
func TestDownload(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/small":
			_, _ = w.Write([]byte("hello"))
		case "/chunked":
			w.(http.Flusher).Flush() // no Content-Length
			_, _ = w.Write([]byte(strings.Repeat("x", 100)))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	if data, err := gateway.Download(ctx, nil, srv.URL+"/small", 5, nil); err != nil || string(data) != "hello" {
		t.Fatalf("small: %q, %v", data, err)
	}
	for _, p := range []string{"/small", "/chunked"} {
		if _, err := gateway.Download(ctx, nil, srv.URL+p, 4, nil); !errors.Is(err, attach.ErrTooLarge) {
			t.Errorf("%s over the bound: %v", p, err)
		}
	}
	if _, err := gateway.Download(ctx, nil, srv.URL+"/missing/secret-token", 10, nil); err == nil || strings.Contains(err.Error(), "secret-token") {
		t.Errorf("a 404: %v", err)
	}
	if _, err := gateway.Download(ctx, nil, "http://127.0.0.1:1/file/botSECRET/x", 10, nil); err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("a refused connection: %v", err)
	}
}
