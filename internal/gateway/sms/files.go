package sms

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/talaria-agent/talaria/internal/attach"
	"github.com/talaria-agent/talaria/internal/gateway"
)

// Files of an MMS. Twilio's webhook names each (NumMedia, MediaUrl{N},
// MediaContentType{N}); a media URL is a Media resource of the message on
// Twilio's REST API, which serves the bytes to the account's credentials
// (HTTP basic auth), or redirects to its media CDN for them.

// maxMMS is Twilio's largest MMS: at most 5 MB of media in one message.
const maxMMS = 5_000_000

// maxMedia bounds the files taken from one message (Twilio carries up to
// 10).
const maxMedia = 10

// mediaHosts are where Twilio's REST API redirects a media's bytes to: its
// media CDN (media protected by basic auth), or the S3 bucket behind it.
var mediaHosts = map[string]string{"mms.twiliocdn.com": "/", "s3-external-1.amazonaws.com": "/media.twiliocdn.com/"}

// filesOf are the media an incoming message names, each fetched with
// fetch. Pure.
func filesOf(params map[string]string, fetch func(rawURL string) func(context.Context, int64) ([]byte, error)) []gateway.File {
	n, _ := strconv.Atoi(params["NumMedia"])
	var out []gateway.File
	for i := range min(n, maxMedia) {
		raw := params["MediaUrl"+strconv.Itoa(i)]
		if raw == "" {
			continue
		}
		typ := params["MediaContentType"+strconv.Itoa(i)]
		// A sound sent by text is a voice message: phones record them so.
		out = append(out, gateway.File{MIME: typ, Voice: strings.HasPrefix(typ, "audio/"), Fetch: fetch(raw)})
	}
	return out
}

// filesClient fetches media: a longer timeout than an API call's,
// Twilio's public API sent to the configured one (as the API client's
// requests are), and no redirect but to Twilio's media hosts.
func (s *SMS) filesClient() *http.Client {
	return &http.Client{Timeout: 2 * time.Minute, Transport: gateway.Rebase(DefaultAPIURL, s.apiURL, nil),
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 || !s.redirectHost(req.URL) {
				return errors.New("sms: a redirect off Twilio's media hosts refused")
			}
			return nil
		}}
}

// mediaURL reports whether raw is a Media resource of one of the
// account's messages on Twilio's API (the configured one, or its public
// address, which the client sends to the configured one).
func (s *SMS) mediaURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	for _, base := range []string{s.apiURL, DefaultAPIURL} {
		b, err := url.Parse(base)
		if err != nil || u.Scheme != b.Scheme || !strings.EqualFold(u.Host, b.Host) {
			continue
		}
		rest, ok := strings.CutPrefix(u.EscapedPath(), strings.TrimRight(b.EscapedPath(), "/")+"/2010-04-01/Accounts/"+s.o.AccountSID+"/Messages/")
		msg, media, ok2 := strings.Cut(rest, "/Media/")
		if ok && ok2 && msg != "" && media != "" && !strings.ContainsAny(msg+media, "/.%") {
			return true
		}
	}
	return false
}

// redirectHost reports whether a redirect from a media URL may go to u:
// the API itself, or Twilio's media hosts over https.
func (s *SMS) redirectHost(u *url.URL) bool {
	if u.User != nil {
		return false
	}
	for _, base := range []string{s.apiURL, DefaultAPIURL} {
		if b, err := url.Parse(base); err == nil && u.Scheme == b.Scheme && strings.EqualFold(u.Host, b.Host) {
			return true
		}
	}
	prefix, ok := mediaHosts[strings.ToLower(u.Hostname())]
	return ok && u.Scheme == "https" && (u.Port() == "" || u.Port() == "443") && strings.HasPrefix(u.Path, prefix)
}

// fetcher downloads a media with the account's credentials, at most max
// bytes and at most an MMS's 5 MB: a larger one, by its Content-Length or
// by what arrives, is attach.ErrTooLarge. A URL that is not one of the
// account's media on Twilio's API is never fetched.
func (s *SMS) fetcher(raw string) func(context.Context, int64) ([]byte, error) {
	return func(ctx context.Context, max int64) ([]byte, error) {
		if !s.mediaURL(raw) {
			host := ""
			if u, err := url.Parse(raw); err == nil {
				host = u.Host
			}
			return nil, fmt.Errorf("sms: a media URL on %q is not one of the account's media on Twilio's API: not fetched", host)
		}
		data, err := gateway.Download(ctx, s.files, raw, min(max, maxMMS), func(r *http.Request) {
			r.SetBasicAuth(s.o.AccountSID, s.o.AuthToken)
		})
		switch {
		case errors.Is(err, attach.ErrTooLarge):
			return nil, err
		case err != nil:
			return nil, errors.New("sms: download a media: " + redact(err, s.o.AuthToken))
		}
		return data, nil
	}
}
