package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"

	"github.com/talaria-agent/talaria/internal/attach"
)

// Download GETs a file with client (nil: http.DefaultClient), at most max
// bytes: a larger one, by its Content-Length or by what arrives, is
// attach.ErrTooLarge. authorize, when set, adds the platform's
// credentials to the request. A status other than 200 is an error naming
// it (never the body, which may echo the credentials); no error names the
// URL.
func Download(ctx context.Context, client *http.Client, url string, max int64, authorize func(*http.Request)) ([]byte, error) {
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("download: %w", err)
	}
	if authorize != nil {
		authorize(req)
	}
	res, err := client.Do(req)
	if err != nil {
		// The URL stays out of the error: it may hold a credential (the
		// Bot API's file URLs hold the bot's token).
		var ue *neturl.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("download: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
		return nil, fmt.Errorf("download: HTTP %d", res.StatusCode)
	}
	if res.ContentLength > max {
		return nil, fmt.Errorf("%w: %s, at most %s", attach.ErrTooLarge, attach.HumanSize(res.ContentLength), attach.HumanSize(max))
	}
	data, err := io.ReadAll(io.LimitReader(res.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("download: %w", err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w: over %s", attach.ErrTooLarge, attach.HumanSize(max))
	}
	return data, nil
}
