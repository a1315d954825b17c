package llm

import (
	"net/url"
	"strings"
)

// redacted stands for a secret left out of a URL.
const redacted = "xxxxx"

// RedactURL is an endpoint URL as it may be shown or published: user and
// password, and the value of every query parameter, are replaced by
// "xxxxx" (an endpoint may carry a key there: http://user:key@host/v1,
// ?api-key=...). A URL that does not parse is not shown at all. Pure.
func RedactURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL that does not parse)"
	}
	if u.User != nil {
		u.User = url.User(redacted)
	}
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		for i, p := range parts {
			if k, _, ok := strings.Cut(p, "="); ok {
				parts[i] = k + "=" + redacted
			} else if p != "" {
				parts[i] = redacted
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// Host is an endpoint's host and port, without credentials, path or
// query; "" when baseURL names none. Pure.
func Host(baseURL string) string {
	if u, err := url.Parse(baseURL); err == nil {
		return u.Host
	}
	return ""
}
