package gateway

import (
	"context"
	"errors"
)

// Update is one inbound event of a platform: a message, or a press on a
// button the bot sent.
type Update struct {
	// ID identifies the update on its platform (Telegram's update_id):
	// the gateway takes an update once, whatever it is told twice.
	ID   string
	Chat Chat
	// User is the sender's platform id.
	User string
	// MessageID is the platform's id of the message (for replies).
	MessageID string
	Text      string
	// Button is the data of the pressed button ("" for a message), and
	// CallbackID what acknowledges the press.
	Button, CallbackID string
	// Files are the files sent with the message (pictures, voice memos,
	// documents); Text is their caption, if any.
	Files []File
}

// File is a file that came with a message. The platform says what it
// believes it is; the gateway decides by its content.
type File struct {
	// Name is the sender's name for it ("" when none), MIME the
	// platform's type and Size its size (0: not told).
	Name, MIME string
	Size       int64
	// Voice: a voice memo recorded in the app, to be transcribed.
	Voice bool
	// Fetch downloads it, at most max bytes: a larger file is
	// attach.ErrTooLarge, without reading it all.
	Fetch func(ctx context.Context, max int64) ([]byte, error)
}

// OutFile is a file the bot sends: a document the agent made. ID is its
// stored bytes' id ("" when it is not stored).
type OutFile struct {
	ID, Name, MIME string
	Data           []byte
}

// AttachmentReader reads stored bytes by id, with their type.
type AttachmentReader func(ctx context.Context, id string) (data []byte, mime string, err error)

// FileLinker is a platform that sends files by link, serving them itself
// (an MMS's MediaUrl): the gateway gives it the reader of stored files, so
// that any process of the installation serves a link another one made,
// also after a restart.
type FileLinker interface {
	Platform
	ReadAttachmentsWith(read AttachmentReader)
}

// FileSender is a platform that sends files: each as a document in m's
// chat (with m's text as its caption when the platform has captions, else
// sent before it), returning the platform's id of the message.
type FileSender interface {
	Platform
	SendFile(ctx context.Context, m Outgoing, f OutFile) (string, error)
}

// Button is an inline button under a message.
type Button struct {
	Text, Data string
}

// Outgoing is a message the bot sends.
type Outgoing struct {
	ChatID string
	// ReplyTo threads the message to the one it answers ("" for none).
	ReplyTo string
	// Text is Markdown; the platform renders it in its own flavour.
	Text    string
	Buttons [][]Button
}

// Platform is a messaging platform's adapter: a small implementation over
// the platform's client library.
type Platform interface {
	// Name is the platform ("telegram"), Account the bot's id on it and
	// BotName its user name (commands in groups are addressed to it).
	Name() string
	Account() string
	BotName() string
	// Poll waits for the next updates (up to about half a minute).
	Poll(ctx context.Context) ([]Update, error)
	// Ack tells the platform the updates up to u are taken: it will not
	// deliver them again. Called only once each is durably handed over.
	Ack(ctx context.Context, u Update) error
	// Parts renders Markdown text in the platform's flavour and splits it
	// into messages within the platform's limit.
	Parts(text string) []string
	// SendPart sends one part as Parts made it, with m's chat, thread and
	// buttons, and returns the platform's id of the message.
	SendPart(ctx context.Context, m Outgoing, part string) (string, error)
	// Edit replaces the text (one part as Parts made it) and buttons of a
	// message the bot sent. An edit to the text the message already has
	// succeeds. A platform that limits its rate waits as it is told, briefly,
	// or fails; a message that can no longer be edited is ErrNotEditable.
	Edit(ctx context.Context, chatID, messageID, part string, buttons [][]Button) error
	// Typing shows the bot as typing in a chat for a few seconds.
	Typing(ctx context.Context, chatID string) error
	// AnswerButton answers a button press (an Update with a Button) with
	// a short notice to its presser. With done, the message's buttons have
	// had their say (the press decided, or they are stale) and are taken
	// off it; without, they stay (a press that was not the presser's to
	// make, or one to make again).
	AnswerButton(ctx context.Context, press Update, notice string, done bool) error
}

// AcksOneByOne is a platform whose Ack acknowledges the update it is
// given alone, not those before it (Slack's envelopes, Discord's events,
// an email): each update is acknowledged as soon as it is taken, whatever
// came before it.
type AcksOneByOne interface {
	Platform
	AcksOneByOne()
}

// Editless is a platform whose messages cannot be edited (SMS): a turn's
// reply is sent once it is whole, with no draft before it.
type Editless interface {
	Platform
	Editless()
}

// CodedApprovals is a platform whose senders can be forged (email): a
// command that decides an approval (/approve, /deny) is refused there; the
// code the approval's message carries, which only its reader has, decides
// it (sent back, it is a press).
type CodedApprovals interface {
	Platform
	CodedApprovals()
}

// ErrUndeliverable means the platform will not take the message however
// often it is sent (WhatsApp outside its 24-hour window): a delivery
// fails at once, saying why, instead of retrying.
var ErrUndeliverable = errors.New("gateway: the platform will not deliver this message")

// ErrNotEditable means the message cannot be edited any more (deleted, or
// too old): send a new one instead.
var ErrNotEditable = errors.New("gateway: the message can no longer be edited")
