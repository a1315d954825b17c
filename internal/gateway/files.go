package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/talaria-agent/talaria/internal/attach"
	"github.com/talaria-agent/talaria/internal/textline"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// maxFilesPerMessage bounds the files taken from one message; the rest
// are named as left out.
const maxFilesPerMessage = 10

// taken is what a message's files became: the transcripts of its voice
// memos, the lines naming each file for the model, its pictures, and
// what the sender is told (a transcript shown, a file refused).
type taken struct {
	transcripts []string
	notes       []string
	images      []turnapi.Image
	tell        []string
}

// Message is the text the model reads for a message with files: the
// caption, the transcripts of its voice memos, then a line per file. Pure.
func (t taken) Message(caption string) string {
	var parts []string
	if c := strings.TrimSpace(caption); c != "" {
		parts = append(parts, c)
	}
	parts = append(parts, t.transcripts...)
	if len(t.notes) > 0 {
		parts = append(parts, strings.Join(t.notes, "\n"))
	}
	return strings.Join(parts, "\n\n")
}

// takeFiles downloads a message's files, tells each by its content, saves
// it into the chats' working directory and makes of it what the model
// reads: a picture is stored and shown to a model that sees; a voice memo
// is transcribed; a document is named by its path. A file that cannot be
// taken (too large, gone, unreadable) is named as such and the rest go on;
// only the end of ctx stops it.
func (g *Gateway) takeFiles(ctx context.Context, p Platform, u Update) (taken, error) {
	var t taken
	dir := g.workdir()
	for i, f := range u.Files {
		if i == maxFilesPerMessage {
			t.notes = append(t.notes, fmt.Sprintf("[%d more files were sent and left out: at most %d are taken from one message]", len(u.Files)-i, maxFilesPerMessage))
			break
		}
		label := describeFile(f)
		data, err := f.Fetch(ctx, g.limits.Max())
		if ctx.Err() != nil {
			return taken{}, ctx.Err()
		}
		if err != nil {
			g.logger.Warn("gateway: fetch a file", "platform", p.Name(), "file", label, "error", err)
			t.refuse(label, err)
			continue
		}
		mime, kind := attach.Sniff(data, f.Voice)
		if limit := g.limits.Of(kind); int64(len(data)) > limit {
			t.refuse(label, fmt.Errorf("%w: %s, at most %s for %s", attach.ErrTooLarge, attach.HumanSize(int64(len(data))), attach.HumanSize(limit), kind))
			continue
		}
		name := attach.SafeName(f.Name, mime)
		rel, err := attach.Save(dir, name, mime, data)
		if err != nil {
			return taken{}, err
		}
		r := attach.Received{Kind: kind, MIME: mime, Name: name, Size: int64(len(data)), Path: rel}
		switch kind {
		case attach.Image:
			id, err := g.rt.Store.PutAttachment(ctx, mime, data)
			if err != nil {
				return taken{}, err
			}
			t.images = append(t.images, r.Image(id))
			t.notes = append(t.notes, r.Note())
		case attach.Audio:
			text, err := g.transcriber.Transcribe(ctx, name, data)
			if ctx.Err() != nil {
				return taken{}, ctx.Err()
			}
			if err != nil {
				g.logger.Warn("gateway: transcribe a voice memo", "platform", p.Name(), "file", rel, "error", err)
				t.notes = append(t.notes, fmt.Sprintf("[%s attached: %s (%s, %s); it could not be transcribed]", kind, rel, mime, attach.HumanSize(r.Size)))
				t.tell = append(t.tell, "Could not transcribe the voice memo: "+textline.Of(err.Error(), 200))
				continue
			}
			if text == "" {
				text = "(nothing audible)"
			}
			t.transcripts = append(t.transcripts, text)
			t.notes = append(t.notes, fmt.Sprintf("[voice memo attached: %s (%s, %s); its transcript is above]", rel, mime, attach.HumanSize(r.Size)))
			t.tell = append(t.tell, "🎤 "+escapeMarkdown(text))
		default:
			t.notes = append(t.notes, r.Note())
		}
	}
	return t, nil
}

// refuse records a file that could not be taken.
func (t *taken) refuse(label string, err error) {
	why := "it could not be downloaded"
	if errors.Is(err, attach.ErrTooLarge) {
		why = "it is too large (" + strings.TrimPrefix(err.Error(), attach.ErrTooLarge.Error()+": ") + ")"
	}
	t.notes = append(t.notes, fmt.Sprintf("[a file was sent but not taken: %s; %s]", label, why))
	t.tell = append(t.tell, fmt.Sprintf("Could not take %s: %s.", label, why))
}

// describeFile names a file for a person and the model: its name, or its
// kind as the platform tells it. Pure.
func describeFile(f File) string {
	name := attach.SafeName(f.Name, f.MIME)
	switch {
	case f.Name != "":
		return name
	case f.Voice:
		return "the voice memo"
	case strings.HasPrefix(f.MIME, "image/"):
		return "the picture"
	}
	return "the file"
}

// tellOnce sends the sender the notices of its message's files (a
// transcript shown, a file refused), each once however often the update
// comes: the outbox keeps them under the update's key.
func (g *Gateway) tellOnce(ctx context.Context, p Platform, u Update, notices []string) {
	for i, n := range notices {
		key := fmt.Sprintf("gateway-update/%s/notice/%d", updateWorkflowID(p, u), i)
		if _, sent, err := g.rt.Store.Sent(ctx, key); err != nil || sent {
			continue
		}
		id, err := p.SendPart(ctx, Outgoing{ChatID: u.Chat.ID, ReplyTo: u.MessageID}, p.Parts(n)[0])
		if err != nil {
			g.logger.Warn("gateway: tell the sender about a file", "platform", p.Name(), "error", err)
			continue
		}
		if err := g.rt.Store.RecordSent(ctx, key, id); err != nil {
			g.logger.Warn("gateway: record a notice", "platform", p.Name(), "error", err)
		}
	}
}
