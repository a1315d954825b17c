package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// ChatKind says what kind of chat a message came from.
type ChatKind string

// Kinds of chats.
const (
	ChatDM    ChatKind = "dm"
	ChatGroup ChatKind = "group"
)

// GroupSessions says how a group chat's messages map to sessions.
type GroupSessions string

// Group session modes.
const (
	// GroupPerUser gives each member of a group a session of their own
	// (Hermes' default).
	GroupPerUser GroupSessions = "per_user"
	// GroupShared gives the whole group (or thread) one session.
	GroupShared GroupSessions = "shared"
)

// Chat is where a message came from.
type Chat struct {
	Platform string
	Kind     ChatKind
	ID       string
	// Thread is the topic or thread inside the chat ("" for none).
	Thread string
}

// ThreadChat is the chat id of a thread in a channel ("<channel>:<thread>",
// the channel alone when there is no thread), as the platforms with
// threads build it: everything said in a thread stays in it, and a thread
// is a session of its own. Pure.
func ThreadChat(channel, thread string) string {
	if thread == "" {
		return channel
	}
	return channel + ":" + thread
}

// SplitThreadChat reads a ThreadChat. Pure.
func SplitThreadChat(id string) (channel, thread string) {
	channel, thread, _ = strings.Cut(id, ":")
	return channel, thread
}

// SessionKey is the chat's session key, as Hermes builds it: a DM
// "telegram:dm:<chat>[:<thread>]", a group "telegram:group:<chat>[:<thread>]"
// plus ":<user>" when each member has a session of their own. Pure.
func SessionKey(c Chat, user string, groups GroupSessions) string {
	parts := []string{c.Platform, string(c.Kind), c.ID}
	if c.Thread != "" {
		parts = append(parts, c.Thread)
	}
	if c.Kind == ChatGroup && groups != GroupShared {
		parts = append(parts, user)
	}
	return strings.Join(parts, ":")
}

// SessionID turns a session key into a session id (letters, digits, '.',
// '_', '~' and '-', at most 128 characters): the key's characters that
// may stand, and a digest when anything had to change or it is too long,
// so two keys never share an id. Pure.
func SessionID(key string) string {
	var b strings.Builder
	changed := false
	for _, r := range key {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '~':
			b.WriteRune(r)
		case r == ':':
			b.WriteByte('.')
		case r == '-':
			b.WriteByte('-')
		default:
			b.WriteByte('_')
			changed = true
		}
	}
	id := b.String()
	if strings.Contains(key, ".") {
		changed = true // "." stands for ":" above
	}
	if changed || len(id) > 100 {
		sum := sha256.Sum256([]byte(key))
		if len(id) > 100 {
			id = id[:100]
		}
		id += "~" + hex.EncodeToString(sum[:6])
	}
	return id
}
