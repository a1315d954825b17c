package slack

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/talaria-agent/talaria/internal/attach"
	"github.com/talaria-agent/talaria/internal/gateway"
)

// maxSlackFile is the largest file Slack keeps (1 GB): a file told to be
// larger is not fetched, and none larger is uploaded.
const maxSlackFile = 1 << 30

// maxFilesPerEvent bounds the files read from one event (Slack puts at
// most 10 on a message).
const maxFilesPerEvent = 20

// downloadTimeout bounds one file's download.
const downloadTimeout = 5 * time.Minute

// slackFile is a file of a message event, as Slack describes it: the
// fields the adapter reads (slack-go's File has no subtype, which tells
// an audio clip recorded in Slack).
type slackFile struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	Title            string `json:"title"`
	Mimetype         string `json:"mimetype"`
	Subtype          string `json:"subtype"`
	MediaDisplayType string `json:"media_display_type"`
	Size             int64  `json:"size"`
	// Mode is "hosted" (kept by Slack), "external" (a link to Google
	// Drive and the like), "snippet", "post", "tombstone" (deleted) or
	// "hidden_by_limit" (past the workspace plan's history).
	Mode       string `json:"mode"`
	IsExternal bool   `json:"is_external"`
	// FileAccess "check_file_info": the event carries only the id (a
	// file of a Slack Connect conversation); files.info tells the rest.
	FileAccess         string `json:"file_access"`
	URLPrivate         string `json:"url_private"`
	URLPrivateDownload string `json:"url_private_download"`
}

// filesOf reads the files of the event an Events API payload carries
// (a message's, or a mention's), at most maxFilesPerEvent. Pure.
func filesOf(payload json.RawMessage) []slackFile {
	var cb struct {
		Event struct {
			Files []slackFile `json:"files"`
		} `json:"event"`
	}
	if len(payload) == 0 || json.Unmarshal(payload, &cb) != nil {
		return nil
	}
	files := cb.Event.Files
	if len(files) > maxFilesPerEvent {
		files = files[:maxFilesPerEvent]
	}
	return files
}

// isVoice reports whether f is an audio clip: one recorded in Slack
// (subtype slack_audio, whatever its container), or a file Slack calls
// audio (a video clip, slack_video, is not). Pure.
func isVoice(f slackFile) bool {
	if f.Subtype == "slack_video" {
		return false
	}
	return f.Subtype == "slack_audio" || f.MediaDisplayType == "audio" || strings.HasPrefix(f.Mimetype, "audio/")
}

// gatewayFiles are the files of an Events API payload as the gateway
// takes them, each fetched with the bot token when the gateway asks.
func (s *Slack) gatewayFiles(payload json.RawMessage) []gateway.File {
	var out []gateway.File
	for _, f := range filesOf(payload) {
		out = append(out, gateway.File{Name: cmp.Or(f.Name, f.Title), MIME: f.Mimetype, Size: max(f.Size, 0), Voice: isVoice(f),
			Fetch: func(ctx context.Context, limit int64) ([]byte, error) { return s.fetch(ctx, f, limit) }})
	}
	return out
}

// fetch downloads a file from its private URL with the bot token (the
// files:read scope), at most limit bytes: a file Slack tells to be larger
// is refused without a request, and a download that turns out larger is
// cut off. Only Slack's own file URLs (https, on slack.com) and the Web
// API's host are sent the token; a file kept elsewhere is not fetched.
func (s *Slack) fetch(ctx context.Context, f slackFile, limit int64) ([]byte, error) {
	if err := unfetchable(f); err != nil {
		return nil, err
	}
	if f.FileAccess == "check_file_info" || (f.URLPrivateDownload == "" && f.URLPrivate == "") {
		info, err := s.fileInfo(ctx, f.ID)
		if err != nil {
			return nil, err
		}
		if err := unfetchable(info); err != nil {
			return nil, err
		}
		f = info
	}
	limit = min(limit, maxSlackFile)
	if f.Size > limit {
		return nil, fmt.Errorf("%w: %s, at most %s", attach.ErrTooLarge, attach.HumanSize(f.Size), attach.HumanSize(limit))
	}
	u := cmp.Or(f.URLPrivateDownload, f.URLPrivate)
	if err := s.tokenMayGo(u); err != nil {
		return nil, fmt.Errorf("slack: file %s: %w", f.ID, err)
	}
	data, err := gateway.Download(ctx, s.files, u, limit, func(r *http.Request) {
		r.Header.Set("Authorization", "Bearer "+s.botToken)
	})
	switch {
	case errors.Is(err, attach.ErrTooLarge):
		return nil, err // said to the sender as it is
	case err != nil:
		return nil, fmt.Errorf("slack: fetch file %s: %w", f.ID, err)
	}
	return data, nil
}

// unfetchable says why f cannot be fetched: a link to a file kept
// outside Slack (its URL is the sender's), a deleted file, or one hidden
// by the workspace's plan. Pure.
func unfetchable(f slackFile) error {
	switch {
	case f.IsExternal || f.Mode == "external":
		return fmt.Errorf("slack: file %s is a link to a file kept outside Slack: not fetched", f.ID)
	case f.Mode == "tombstone":
		return fmt.Errorf("slack: file %s was deleted", f.ID)
	case f.Mode == "hidden_by_limit":
		return fmt.Errorf("slack: file %s is hidden by the workspace's plan", f.ID)
	}
	return nil
}

// fileInfo asks files.info for a file the event told only the id of.
func (s *Slack) fileInfo(ctx context.Context, id string) (slackFile, error) {
	if id == "" {
		return slackFile{}, errors.New("slack: a file without an id or a URL")
	}
	info, _, _, err := s.api.GetFileInfoContext(ctx, id, 1, 1)
	if err != nil {
		return slackFile{}, fmt.Errorf("slack: files.info %s: %s", id, redact(err, s.tokens))
	}
	return slackFile{ID: info.ID, Name: info.Name, Title: info.Title, Mimetype: info.Mimetype, MediaDisplayType: info.MediaDisplayType,
		Size: int64(info.Size), Mode: info.Mode, IsExternal: info.IsExternal,
		URLPrivate: info.URLPrivate, URLPrivateDownload: info.URLPrivateDownload}, nil
}

// tokenMayGo checks that a file URL is one the bot token may be sent to:
// an https URL on slack.com or slack-gov.com (or their subdomains), or
// one on the Web API's own scheme and host. Anything else an event names
// is the sender's, and never sent the token.
func (s *Slack) tokenMayGo(raw string) error {
	if raw == "" {
		return errors.New("Slack gave no download URL")
	}
	u, err := url.Parse(raw)
	if err != nil || u.User != nil || u.Host == "" {
		return errors.New("the download URL is not a plain http(s) URL")
	}
	host := strings.ToLower(u.Hostname())
	if u.Scheme == "https" {
		for _, d := range []string{"slack.com", "slack-gov.com"} {
			if host == d || strings.HasSuffix(host, "."+d) {
				return nil
			}
		}
	}
	if u.Scheme == s.apiURL.Scheme && strings.EqualFold(u.Host, s.apiURL.Host) {
		return nil
	}
	return fmt.Errorf("the download URL's host %s is not Slack's: not fetched", host)
}

// fileClient is the client of downloads: it follows no redirect (Slack
// serves a file the token can read at once, and sends a token it refuses
// to its sign-in page).
func fileClient() *http.Client {
	return &http.Client{Timeout: downloadTimeout, CheckRedirect: func(*http.Request, []*http.Request) error {
		return errors.New("Slack redirected the download: the bot token cannot read this file (check the files:read scope)")
	}}
}

// SendFile uploads a document into m's chat, in its thread when it has
// one, through files.getUploadURLExternal, the upload URL and
// files.completeUploadExternal (the files:write scope), with m's text as
// its comment (sent before it when it takes more than one message). It
// returns the file's id: completeUploadExternal shares the file without
// telling the message's ts.
func (s *Slack) SendFile(ctx context.Context, m gateway.Outgoing, f gateway.OutFile) (string, error) {
	name := cmp.Or(f.Name, "file")
	switch {
	case len(f.Data) == 0:
		return "", fmt.Errorf("%w: slack: %s is empty, and Slack takes no empty file", gateway.ErrUndeliverable, name)
	case len(f.Data) > maxSlackFile:
		return "", fmt.Errorf("%w: slack: %s is %s, over Slack's %s", gateway.ErrUndeliverable, name,
			attach.HumanSize(int64(len(f.Data))), attach.HumanSize(maxSlackFile))
	}
	comment := ""
	if strings.TrimSpace(m.Text) != "" {
		parts := s.Parts(m.Text)
		if len(parts) == 1 {
			comment = parts[0]
		} else {
			for _, p := range parts {
				if _, err := s.SendPart(ctx, gateway.Outgoing{ChatID: m.ChatID}, p); err != nil {
					return "", err
				}
			}
		}
	}
	channel, thread := splitChat(m.ChatID)
	sum, err := s.api.UploadFileContext(ctx, slack.UploadFileParameters{Reader: bytes.NewReader(f.Data), FileSize: len(f.Data),
		Filename: name, Title: name, Channel: channel, ThreadTimestamp: thread, InitialComment: comment})
	if err != nil {
		return "", fmt.Errorf("slack: upload %s: %s", name, redact(err, s.tokens))
	}
	return sum.ID, nil
}

var _ gateway.FileSender = (*Slack)(nil)
