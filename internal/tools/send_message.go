package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/talaria-agent/talaria/internal/attach"
)

// SendMessageName is the name of the send_message tool.
const SendMessageName = "send_message"

// MaxSendMessageBytes bounds the text of one send_message call.
const MaxSendMessageBytes = 16 << 10

// ErrTargetRefused: send_message was asked for a target it may not send to.
var ErrTargetRefused = errors.New("target refused")

// ChatDirectory finds the chats send_message may send to: the home chat
// ("" when none is set) and the chat whose current session is sessionID
// (its delivery target, "telegram:42", "email:<address>:<thread>").
type ChatDirectory interface {
	Home(ctx context.Context) (string, error)
	ChatTargetOfSession(ctx context.Context, sessionID string) (target string, found bool, err error)
}

// ChatSendFunc sends text, then files as documents, to target
// ("telegram:<chat>", "slack:<channel>") as the delivery key names (the
// same key is the same delivery, sent once) and says where it went.
type ChatSendFunc func(ctx context.Context, target, key, text string, files []ChatFile) (string, error)

// ChatFile is a file send_message sends: its name, its type (told by its
// content) and its bytes.
type ChatFile struct {
	Name, MIME string
	Data       []byte
}

// send_message's file limits: at most this many files of at most this
// many bytes each.
const (
	MaxSendFiles     = 10
	MaxSendFileBytes = 50 << 20
)

// sendMessageArgs are send_message's arguments.
type sendMessageArgs struct {
	Target string   `json:"target" jsonschema:"\"home\", \"this_chat\", or \"telegram:<chat id>\" / \"slack:<channel id>\" of the home chat or this chat."`
	Text   string   `json:"text,omitempty" jsonschema:"The message, Markdown, at most 16 KiB (may be empty when files are sent)."`
	Files  []string `json:"files,omitempty" jsonschema:"Files to send as documents after the text: paths of files you wrote, absolute or relative to the working directory (at most 10, 50 MiB each)."`
}

// SendMessage is the send_message tool over the gateway's chats and send
// (nil: every call says no gateway is configured). Idempotent: its delivery
// is keyed by the turn, the model call and the tool call, and the gateway
// sends each part of a delivery once, so running a call again sends
// nothing new.
func SendMessage(chats ChatDirectory, send ChatSendFunc) Tool {
	return Define(Spec[sendMessageArgs]{
		Name: SendMessageName,
		Description: `Send a message, and files as documents, to a chat through the messaging gateway (Telegram, Slack, Discord, SMS, WhatsApp, email). ` +
			`"target" is "home" (the chat chosen with /sethome), "this_chat" (the chat this conversation runs in), ` +
			`or "telegram:<chat id>" / "slack:<channel id>" naming one of those two; no other chat, email or webhook is allowed. ` +
			`Your normal reply already goes to this chat: use this only for a message of its own (a notice while you work, or to the home chat), or to send files ("files": paths of files you wrote).`,
		Meta: Meta{
			Toolset:  "messages",
			Approval: "home or this chat only",
		},
		Idempotent: true,
		Run: func(ctx context.Context, env Env, a sendMessageArgs) (string, error) {
			return sendMessage(ctx, env, chats, send, a)
		},
	})
}

// sendMessage sends one message to the home chat or this chat.
func sendMessage(ctx context.Context, env Env, chats ChatDirectory, send ChatSendFunc, a sendMessageArgs) (string, error) {
	target, text := a.Target, a.Text
	if len(a.Files) == 0 || text != "" {
		if err := CheckMessageText(text); err != nil {
			return "", err
		}
	}
	files, err := readSendFiles(env, a.Files)
	if err != nil {
		return "", err
	}
	if chats == nil || send == nil {
		return "", errors.New("send_message: no messaging gateway is configured in this worker")
	}
	home, err := chats.Home(ctx)
	if err != nil {
		return "", fmt.Errorf("send_message: %w", err)
	}
	current, found, err := chats.ChatTargetOfSession(ctx, env.SessionID)
	if err != nil {
		return "", fmt.Errorf("send_message: %w", err)
	}
	if !found {
		current = ""
	}
	to, err := DecideTarget(target, home, current)
	if err != nil {
		return "", err
	}
	where, err := send(ctx, to, fmt.Sprintf("send/%s/%d/%s", env.TurnID, env.ModelCall, env.CallID), text, files)
	if err != nil {
		return "", fmt.Errorf("send_message to %s: %w", to, err)
	}
	return "Sent to " + where + ".", nil
}

// readSendFiles reads the files send_message was asked to send, as
// read_file reads: within the readable roots, never a protected file, only
// regular files.
func readSendFiles(env Env, paths []string) ([]ChatFile, error) {
	if len(paths) > MaxSendFiles {
		return nil, invalidArgs(SendMessageName, `"files" names %d files, at most %d`, len(paths), MaxSendFiles)
	}
	out := make([]ChatFile, 0, len(paths))
	for _, p := range paths {
		if err := requirePath(SendMessageName, p); err != nil {
			return nil, err
		}
		source, err := env.readablePath(SendMessageName, p)
		if err != nil {
			return nil, err
		}
		f, err := env.openReadable(SendMessageName, source)
		if err != nil {
			return nil, explainOpenError(SendMessageName, source, err)
		}
		data, err := readSendFile(f, source.Abs)
		f.Close()
		if err != nil {
			return nil, err
		}
		mime, _ := attach.Sniff(data, false)
		out = append(out, ChatFile{Name: attach.SafeName(filepath.Base(source.Abs), mime), MIME: mime, Data: data})
	}
	return out, nil
}

// readSendFile reads one opened file, a regular one of at most
// MaxSendFileBytes.
func readSendFile(f *os.File, name string) ([]byte, error) {
	if err := checkOpenedRegular(SendMessageName, name, f); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSendFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", SendMessageName, name, err)
	}
	if len(data) > MaxSendFileBytes {
		return nil, invalidArgs(SendMessageName, "%s is larger than %d MiB", name, MaxSendFileBytes>>20)
	}
	return data, nil
}

// CheckMessageText refuses an empty or oversized message. Pure.
func CheckMessageText(text string) error {
	if strings.TrimSpace(text) == "" {
		return fmt.Errorf("%w for %s: \"text\" is empty", ErrInvalidArguments, SendMessageName)
	}
	if len(text) > MaxSendMessageBytes {
		return fmt.Errorf("%w for %s: \"text\" is %d bytes, at most %d", ErrInvalidArguments, SendMessageName, len(text), MaxSendMessageBytes)
	}
	return nil
}

// ChatPlatforms are the messaging platforms whose chats are delivery
// targets ("<platform>:<chat id>"), through the gateway.
var ChatPlatforms = []string{"telegram", "slack", "discord", "sms", "whatsapp", "email"}

// IsChatPlatform reports whether name is one of ChatPlatforms. Pure.
func IsChatPlatform(name string) bool { return slices.Contains(ChatPlatforms, name) }

// DecideTarget resolves send_message's target against the home chat and
// the current chat (targets, "" for none): "home", "this_chat", or an
// explicit "telegram:<chat>" / "slack:<channel>" equal to one of them.
// Anything else is refused (ErrTargetRefused) with the reason. Pure.
func DecideTarget(target, home, current string) (string, error) {
	target = strings.TrimSpace(target)
	refuse := func(why string) (string, error) {
		return "", fmt.Errorf("%w: %s", ErrTargetRefused, why)
	}
	switch target {
	case "home":
		if home == "" {
			return refuse(`no home chat is set (send /sethome in the chat that should be home)`)
		}
		return home, nil
	case "this_chat":
		if current == "" {
			return refuse(`this conversation is not running in a chat`)
		}
		return current, nil
	case "":
		return refuse(`"target" is empty: use "home" or "this_chat"`)
	}
	scheme, id, _ := strings.Cut(target, ":")
	if !IsChatPlatform(scheme) || id == "" {
		return refuse(fmt.Sprintf(`%q is not a chat: send_message sends only to "home" or "this_chat" (telegram:<chat id>, slack:<channel id> or discord:<channel id> of one of them)`, target))
	}
	if target == home || target == current {
		return target, nil
	}
	return refuse(fmt.Sprintf("%s is neither the home chat nor this chat; only those may be messaged", target))
}

// send_message is a built-in tool.
var _ = builtin(func(s Services) Tool { return SendMessage(s.Chats, s.Send) })
