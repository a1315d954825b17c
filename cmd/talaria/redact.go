package main

import "net/url"

// redactPassword replaces the password of a URL-shaped DSN with "xxxxx".
func redactPassword(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparseable DSN)"
	}
	return u.Redacted()
}
