package gateway

import (
	"net/http"
	"strings"
)

// Rebase is a transport that sends the requests a platform's client
// library makes to the platform's public API (a URL prefix, such as
// "https://api.twilio.com") to another base URL instead (a configured
// proxy, or a test's fake), path and query kept; next carries them (nil:
// http.DefaultTransport). A request elsewhere goes unchanged.
func Rebase(public, to string, next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	public, to = strings.TrimRight(public, "/"), strings.TrimRight(to, "/")
	if to == "" || to == public {
		return next
	}
	return rebase{public: public, to: to, next: next}
}

type rebase struct {
	public, to string
	next       http.RoundTripper
}

func (r rebase) RoundTrip(req *http.Request) (*http.Response, error) {
	raw := req.URL.String()
	rest, ok := strings.CutPrefix(raw, r.public)
	if !ok || rest != "" && rest[0] != '/' && rest[0] != '?' {
		return r.next.RoundTrip(req)
	}
	u, err := req.URL.Parse(r.to + rest)
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.URL, req.Host = u, u.Host
	return r.next.RoundTrip(req)
}
