package embedded

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

const (
	// MinUITokenLen is the shortest token StartUI accepts.
	MinUITokenLen = 32
	// tokenParam is the query parameter carrying the token once.
	tokenParam = "token"
	// UICookiePrefix starts the name of the cookie the guard hands a
	// browser that presented the token; the UI's port ends it (see
	// UICookieName). It is HttpOnly and SameSite=Strict and carries a value
	// derived from the token (see cookieValue), never the token.
	UICookiePrefix = "talaria_ui_"
	// cookieLabel is the HMAC message deriving the cookie's value.
	cookieLabel = "talaria ui cookie"
	// uiCookieMaxAge is how long a browser stays admitted (seconds).
	uiCookieMaxAge = 30 * 24 * 60 * 60
)

// uiRefusal is the one-line body of a refused request.
const uiRefusal = "talaria: this Web UI needs its key: open the URL with ?token=... that 'talaria serve' (or 'talaria temporal') printed when ready; 'talaria status' shows it too\n"

// uiReadOnly is the one-line body of a refused write.
const uiReadOnly = "talaria: this Web UI is read-only: 'talaria stop' and 'talaria steer' act on turns\n"

// UICookieName is the guard's cookie name for a UI on port. Browsers send
// a host's cookies to all its ports; the port in the name keeps two UIs on
// one host from overwriting each other's cookie.
func UICookieName(port int) string { return UICookiePrefix + strconv.Itoa(port) }

// cookieValue is the cookie's value for token: HMAC-SHA256(token,
// cookieLabel) in hex, so a cookie sent to another service on the host
// does not reveal the token.
func cookieValue(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(cookieLabel))
	return hex.EncodeToString(m.Sum(nil))
}

// NewUIToken makes a random token for UIOptions.Token.
func NewUIToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make the web UI token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// guard admits a request to next only with the token: a request whose
// query carries the right token receives the cookie and is redirected to
// the same address without it (so the token leaves the address bar and
// history); a request with the cookie passes; any other is refused with
// 401 (no credential) or 403 (a wrong one) and one line saying where the
// URL is. The comparisons take constant time. An admitted request must
// also be a read (see readOnly), or it is refused
// with 405 before it reaches the UI server.
type guard struct {
	token      []byte
	cookie     []byte // the cookie's value, derived from token
	cookieName string
	next       http.Handler
}

func newGuard(token string, port int, next http.Handler) *guard {
	return &guard{
		token: []byte(token), cookie: []byte(cookieValue(token)),
		cookieName: UICookieName(port), next: next,
	}
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch g.check(r) {
	case guardPass:
		if !readOnly(r.Method, r.URL.EscapedPath()) {
			w.Header().Set("Allow", "GET, HEAD")
			reply(w, http.StatusMethodNotAllowed, uiReadOnly)
			return
		}
		g.next.ServeHTTP(w, r)
	case guardLogin:
		http.SetCookie(w, &http.Cookie{
			Name: g.cookieName, Value: string(g.cookie), Path: "/", MaxAge: uiCookieMaxAge,
			HttpOnly: true, SameSite: http.SameSiteStrictMode,
		})
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, withoutToken(r.URL), http.StatusSeeOther)
	case guardWrong:
		refuse(w, http.StatusForbidden)
	default:
		refuse(w, http.StatusUnauthorized)
	}
}

// guardVerdict is what the guard does with a request.
type guardVerdict int

const (
	guardMissing guardVerdict = iota // no credential: 401
	guardWrong                       // a wrong token or cookie: 403
	guardLogin                       // the right token in the query: set the cookie
	guardPass                        // the right cookie: serve
)

// check judges r: a token in the query decides first, then the cookie.
func (g *guard) check(r *http.Request) guardVerdict {
	if q, ok := r.URL.Query()[tokenParam]; ok {
		if len(q) == 1 && g.equal(q[0]) {
			return guardLogin
		}
		return guardWrong
	}
	c, err := r.Cookie(g.cookieName)
	if err != nil {
		return guardMissing
	}
	if subtle.ConstantTimeCompare([]byte(c.Value), g.cookie) == 1 {
		return guardPass
	}
	return guardWrong
}

func (g *guard) equal(s string) bool {
	return subtle.ConstantTimeCompare([]byte(s), g.token) == 1
}

// queryPath is the one write-method route a read-only UI needs: a workflow
// query (the stack trace and other queries), matched on the raw path.
var queryPath = regexp.MustCompile(`^/api/v1/namespaces/[^/]+/workflows/[^/]+/query/[^/]+$`)

// readOnly reports whether a request with method and raw (escaped) path
// only reads: GET and HEAD, or a POST whose raw path is queryPath with no
// dot segment. Every other request is a write.
//
// The UI server's own read-only check looks for "/workflows/" and
// "/query/" anywhere in the decoded path, which encoded slashes in a
// workflow id satisfy for any route ("x%2Fquery%2Fy/terminate"), while its
// API router matches the raw path and keeps an encoded slash inside its
// segment. So the match here is on the raw path, segment by segment: an
// encoded slash may sit inside a segment (the UI encodes workflow ids such
// as "session/<id>" that way) but cannot turn the route into another.
func readOnly(method, rawPath string) bool {
	switch method {
	case http.MethodGet, http.MethodHead:
		return true
	case http.MethodPost:
		return queryPath.MatchString(rawPath) && !hasDotSegment(rawPath)
	default:
		return false
	}
}

// hasDotSegment reports whether rawPath has a "." or ".." segment, also
// percent-encoded, which a router that cleans paths would resolve.
func hasDotSegment(rawPath string) bool {
	return slices.ContainsFunc(strings.Split(rawPath, "/"), func(seg string) bool {
		d, err := url.PathUnescape(seg)
		return err != nil || d == "." || d == ".."
	})
}

// withoutToken is u's path and query less the token parameter.
func withoutToken(u *url.URL) string {
	q := u.Query()
	q.Del(tokenParam)
	out := &url.URL{Path: u.Path, RawPath: u.RawPath, RawQuery: q.Encode()}
	if !strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") {
		out.Path, out.RawPath = "/", "" // never another host's address
	}
	return out.String()
}

func refuse(w http.ResponseWriter, status int) { reply(w, status, uiRefusal) }

// reply answers with status and a one-line body.
func reply(w http.ResponseWriter, status int, line string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(line))
}
