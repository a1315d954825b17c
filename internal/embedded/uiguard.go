package embedded

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

const (
	// MinUITokenLen is the shortest token StartUI accepts.
	MinUITokenLen = 32
	// tokenParam is the query parameter carrying the token once.
	tokenParam = "token"
	// UICookie is the cookie the guard hands a browser that presented the
	// token; it carries the token and is HttpOnly and SameSite=Strict.
	UICookie = "talaria_ui"
	// uiCookieMaxAge is how long a browser stays admitted (seconds).
	uiCookieMaxAge = 30 * 24 * 60 * 60
)

// uiRefusal is the one-line body of a refused request.
const uiRefusal = "talaria: this Web UI needs its key: open the URL with ?token=... that 'talaria serve' (or 'talaria temporal') printed when ready; 'talaria status' shows it too\n"

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
// URL is. The comparison takes constant time.
type guard struct {
	token []byte
	next  http.Handler
}

func newGuard(token string, next http.Handler) *guard {
	return &guard{token: []byte(token), next: next}
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch g.check(r) {
	case guardPass:
		g.next.ServeHTTP(w, r)
	case guardLogin:
		http.SetCookie(w, &http.Cookie{
			Name: UICookie, Value: string(g.token), Path: "/", MaxAge: uiCookieMaxAge,
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
	c, err := r.Cookie(UICookie)
	if err != nil {
		return guardMissing
	}
	if g.equal(c.Value) {
		return guardPass
	}
	return guardWrong
}

func (g *guard) equal(s string) bool {
	return subtle.ConstantTimeCompare([]byte(s), g.token) == 1
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

func refuse(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(uiRefusal))
}
