package telegram

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/talaria-agent/talaria/internal/attach"
	"github.com/talaria-agent/talaria/internal/gateway"
)

// maxDownload is the largest file the Bot API lets a bot download
// (getFile: 20 MB).
const maxDownload = 20 << 20

// filesOf are the files of a message: its photo (the largest size), voice
// memo, audio, video note, video and document, each fetched with fetch.
// Pure.
func filesOf(msg *tgbotapi.Message, fetch func(fileID string, size int) func(context.Context, int64) ([]byte, error)) []gateway.File {
	var out []gateway.File
	add := func(id, name, mime string, size int, voice bool) {
		if id != "" {
			out = append(out, gateway.File{Name: name, MIME: mime, Size: int64(size), Voice: voice, Fetch: fetch(id, size)})
		}
	}
	if n := len(msg.Photo); n > 0 {
		best := msg.Photo[0]
		for _, p := range msg.Photo[1:] {
			if p.Width*p.Height > best.Width*best.Height {
				best = p
			}
		}
		add(best.FileID, "photo.jpg", "image/jpeg", best.FileSize, false)
	}
	if v := msg.Voice; v != nil {
		add(v.FileID, "voice.ogg", v.MimeType, v.FileSize, true)
	}
	if a := msg.Audio; a != nil {
		add(a.FileID, a.FileName, a.MimeType, a.FileSize, false)
	}
	if v := msg.VideoNote; v != nil {
		add(v.FileID, "video-note.mp4", "video/mp4", v.FileSize, false)
	}
	if v := msg.Video; v != nil {
		add(v.FileID, v.FileName, v.MimeType, v.FileSize, false)
	}
	if d := msg.Document; d != nil {
		add(d.FileID, d.FileName, d.MimeType, d.FileSize, false)
	}
	return out
}

// fetcher downloads a file by id: getFile tells its path, then the file
// endpoint serves it, at most max bytes (and at most the Bot API's 20 MB).
func (t *Telegram) fetcher(fileID string, size int) func(context.Context, int64) ([]byte, error) {
	return func(ctx context.Context, max int64) ([]byte, error) {
		max = min(max, maxDownload)
		if int64(size) > max {
			return nil, fmt.Errorf("%w: %s, at most %s", attach.ErrTooLarge, attach.HumanSize(int64(size)), attach.HumanSize(max))
		}
		f, err := t.bot.GetFile(tgbotapi.FileConfig{FileID: fileID})
		var apiErr *tgbotapi.Error
		if errors.As(err, &apiErr) && strings.Contains(apiErr.Message, "file is too big") {
			return nil, fmt.Errorf("%w: over the Bot API's %s", attach.ErrTooLarge, attach.HumanSize(maxDownload))
		}
		if err != nil {
			return nil, errors.New("telegram: getFile: " + redact(err, t.token))
		}
		p := path.Clean("/" + f.FilePath)
		if f.FilePath == "" || p == "/" {
			return nil, errors.New("telegram: getFile gave no file path")
		}
		data, err := gateway.Download(ctx, t.client, t.apiURL+"/file/bot"+t.token+p, max, nil)
		if err != nil {
			if errors.Is(err, attach.ErrTooLarge) {
				return nil, err
			}
			return nil, errors.New("telegram: download a file: " + redact(err, t.token))
		}
		return data, nil
	}
}

// SendFile sends a document (sendDocument), threaded to the message it
// answers.
func (t *Telegram) SendFile(_ context.Context, m gateway.Outgoing, f gateway.OutFile) (string, error) {
	chat, err := strconv.ParseInt(m.ChatID, 10, 64)
	if err != nil {
		return "", fmt.Errorf("telegram: chat id %q", m.ChatID)
	}
	doc := tgbotapi.NewDocument(chat, tgbotapi.FileBytes{Name: f.Name, Bytes: f.Data})
	if m.ReplyTo != "" {
		doc.ReplyToMessageID, _ = strconv.Atoi(m.ReplyTo)
		doc.AllowSendingWithoutReply = true
	}
	sent, err := t.bot.Send(doc)
	if err != nil {
		return "", errors.New("telegram: sendDocument: " + redact(err, t.token))
	}
	return strconv.Itoa(sent.MessageID), nil
}
