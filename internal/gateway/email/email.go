// Package email is the gateway's email adapter: mail to the agent's
// address is read by IMAP (github.com/emersion/go-imap, IDLE where the
// server offers it, polling otherwise), and answers go out through the
// SMTP server that cron delivery uses, threaded under the mail they
// answer. A thread (its first Message-ID, from References or
// In-Reply-To) is a session. A mail is marked handled (the $TalariaTaken
// keyword, and \Seen) only once it is durably handed over; until then it
// is fetched again, and its Message-ID makes it one turn however often.
// Anyone can write a From line, so an approval is decided only by a reply
// carrying the approval mail's code, never by /approve. The files a mail
// carries (attachments, inline pictures) come with its update, read from
// the mail already fetched; a file the agent sends is a mail of its own in
// the thread, the file attached.
package email

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-imap"
	"github.com/emersion/go-imap/client"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/gateway"
	"github.com/talaria-agent/talaria/internal/mailer"
)

// handled is the keyword of a mail the gateway took.
const handled = "$TalariaTaken"

// Timing of the mailbox's watch.
const (
	pollWait   = 25 * time.Second // how long one Poll waits for mail
	noIdlePoll = 10 * time.Second // how often a server without IDLE is asked
	maxBatch   = 20               // mails read per Poll
	partLimit  = 100000           // a reply longer than this is sent in parts
	// maxMailBytes bounds a mail read: one with a 30 MB file, base64 as
	// mail carries it, fits. Of a larger mail only the header is read; its
	// sender is told it was too large.
	maxMailBytes = 40 << 20
	// maxBatchBytes bounds the mails of one Poll together (one larger mail
	// comes alone); the rest wait for the next.
	maxBatchBytes = 48 << 20
)

// ErrRefused means the IMAP server refused the login: retrying will not
// help.
var ErrRefused = errors.New("email: the IMAP server refused the login")

// Options configure the agent's mailbox.
type Options struct {
	// IMAP is the mailbox; its password is IMAPPassword.
	IMAP         config.EmailIMAP
	IMAPPassword string
	// SMTP sends the answers; its password is SMTPPassword.
	SMTP         config.SMTP
	SMTPPassword string
	// Address is the agent's address (mail from it is never answered).
	Address string
	// AuthservID is the receiving mail server's id in the
	// Authentication-Results it writes: only mail it says passed DMARC,
	// or carries a DKIM signature of the From domain, is read.
	AuthservID string
	Logger     *slog.Logger
}

// Email is the agent's mailbox.
type Email struct {
	o       Options
	logger  *slog.Logger
	maxMail int64 // maxMailBytes; smaller in tests

	mu      sync.Mutex
	c       *client.Client
	updates chan client.Update // the connection's unilateral updates
	keyword bool               // the mailbox keeps keywords (PERMANENTFLAGS \*)
	wake    chan struct{}
	uids    map[string][]uint32 // the mails of the last Poll, by update id
	// given are the mails Poll gave and the gateway has not
	// acknowledged, by uid: Poll gives them again without fetching them
	// again (the gateway asks while it takes them), and their bytes count
	// against a poll's maxBatchBytes.
	given    map[uint32]givenMail
	subjects map[string]string // a thread's subject, by its root's Message-ID
	last     map[string]string // a chat's latest mail's Message-ID
}

// New checks the login (it connects once) and returns the mailbox.
func New(ctx context.Context, o Options) (*Email, error) {
	if !mailer.CheckAddress(o.Address) {
		return nil, fmt.Errorf("%w: gateway.email.address %q is not one address", ErrRefused, o.Address)
	}
	if o.AuthservID == "" {
		return nil, fmt.Errorf("%w: set gateway.email.authserv_id, the id your mail server writes in Authentication-Results (anyone can write a From line: only mail it authenticated is read)", ErrRefused)
	}
	if o.SMTP.Host == "" {
		return nil, fmt.Errorf("%w: answers go through delivery.smtp, which is not configured", ErrRefused)
	}
	e := &Email{o: o, logger: cmp.Or(o.Logger, slog.Default()), maxMail: maxMailBytes, wake: make(chan struct{}, 1), uids: map[string][]uint32{},
		given: map[uint32]givenMail{}, subjects: map[string]string{}, last: map[string]string{}}
	if _, err := e.conn(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *Email) Name() string    { return "email" }
func (e *Email) Account() string { return e.o.Address }
func (e *Email) BotName() string { return e.o.Address }

// Editless: a sent mail cannot be edited.
func (e *Email) Editless() {}

// CodedApprovals: a From line can be forged.
func (e *Email) CodedApprovals() {}

// conn is the IMAP connection, logged in with the mailbox selected; made
// when there is none.
func (e *Email) conn(ctx context.Context) (*client.Client, error) {
	e.mu.Lock()
	c := e.c
	e.mu.Unlock()
	if c != nil {
		return c, nil
	}
	im := e.o.IMAP
	addr := net.JoinHostPort(im.Host, strconv.Itoa(im.PortOrDefault()))
	dialer := &net.Dialer{Timeout: 30 * time.Second}
	var err error
	switch im.Security {
	case "none":
		c, err = client.DialWithDialer(dialer, addr)
	case "starttls":
		if c, err = client.DialWithDialer(dialer, addr); err == nil {
			err = c.StartTLS(&tls.Config{ServerName: im.Host})
		}
	default:
		c, err = client.DialWithDialerTLS(dialer, addr, &tls.Config{ServerName: im.Host})
	}
	if err != nil {
		if c != nil {
			_ = c.Logout()
		}
		return nil, fmt.Errorf("email: connect to %s: %w", addr, err)
	}
	c.Timeout = time.Minute // a server that stops answering fails the command
	updates := make(chan client.Update, 64)
	c.Updates = updates
	go func() { // the client blocks unless its updates are read
		for u := range updates {
			if _, ok := u.(*client.MailboxUpdate); ok {
				select {
				case e.wake <- struct{}{}:
				default:
				}
			}
		}
	}()
	fail := func(err error) (*client.Client, error) {
		_ = c.Terminate()
		close(updates)
		return nil, err
	}
	if err := c.Login(im.Username, e.o.IMAPPassword); err != nil {
		return fail(fmt.Errorf("%w: %s as %s: %v (check gateway.email.username and the variable password_env names)", ErrRefused, addr, im.Username, err))
	}
	mb, err := c.Select(cmp.Or(im.Mailbox, "INBOX"), false)
	if err != nil {
		return fail(fmt.Errorf("email: select %s: %w", cmp.Or(im.Mailbox, "INBOX"), err))
	}
	if ctx.Err() != nil {
		return fail(ctx.Err())
	}
	e.mu.Lock()
	e.c, e.updates, e.keyword = c, updates, slices.Contains(mb.PermanentFlags, `\*`)
	e.mu.Unlock()
	return c, nil
}

// drop forgets a connection that failed; the next Poll makes another.
func (e *Email) drop() {
	e.mu.Lock()
	c, updates := e.c, e.updates
	e.c, e.updates = nil, nil
	e.mu.Unlock()
	if c != nil {
		_ = c.Terminate()
		close(updates)
	}
}

// Poll reads the mails not handled yet; with none, it waits (IDLE, or a
// poll where the server has no IDLE) for one, about half a minute.
func (e *Email) Poll(ctx context.Context) ([]gateway.Update, error) {
	c, err := e.conn(ctx)
	if err != nil {
		return nil, err
	}
	ups, err := e.fetch(c)
	if err != nil || len(ups) > 0 {
		return ups, err
	}
	stop, done := make(chan struct{}), make(chan error, 1)
	go func() { done <- c.Idle(stop, &client.IdleOptions{PollInterval: noIdlePoll}) }()
	select {
	case <-e.wake:
	case <-time.After(pollWait):
	case <-ctx.Done():
	}
	close(stop)
	var err2 error
	select {
	case err2 = <-done:
	case <-time.After(time.Minute): // the server does not end the IDLE
		e.drop()
		return nil, errors.New("email: the IMAP server did not end IDLE")
	}
	if err := err2; err != nil {
		e.drop()
		return nil, fmt.Errorf("email: idle: %w", err)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return e.fetch(c)
}

// fetch reads up to maxBatch unread mails without the handled keyword,
// oldest first (a mail read before, as the mailbox's history is, is not
// for the agent): their sizes first, then the bodies of those not too
// large (at most maxBatchBytes together, each fetched no further than
// the bound), and of the others only the header.
func (e *Email) fetch(c *client.Client) ([]gateway.Update, error) {
	uids, err := c.UidSearch(&imap.SearchCriteria{WithoutFlags: []string{handled, imap.SeenFlag}})
	if err != nil {
		e.drop()
		return nil, fmt.Errorf("email: search: %w", err)
	}
	uids = uids[:min(len(uids), maxBatch)]
	out, held, uids := e.givenOf(uids)
	if len(uids) == 0 {
		return inOrder(out), nil
	}
	sizes, err := e.fetchItems(c, uids, []imap.FetchItem{imap.FetchUid, imap.FetchRFC822Size})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(sizes, func(a, b *imap.Message) int { return cmp.Compare(a.Uid, b.Uid) })
	var small, large []uint32
	total := held // the mails given and not acknowledged are still in memory
	for _, m := range sizes {
		size := int64(m.Size)
		if size > e.maxMail {
			large = append(large, m.Uid)
			continue
		}
		if (len(small) > 0 || held > 0) && total+size > maxBatchBytes {
			break // the rest come with a later Poll
		}
		small, total = append(small, m.Uid), total+size
	}
	if len(large) > 0 {
		section := &imap.BodySectionName{BodyPartName: imap.BodyPartName{Specifier: imap.HeaderSpecifier}, Peek: true}
		heads, err := e.fetchItems(c, large, []imap.FetchItem{imap.FetchUid, imap.FetchRFC822Size, section.FetchItem()})
		if err != nil {
			return nil, err
		}
		for _, m := range heads {
			e.logger.Info("email: a mail too large to read, only its header read", "uid", m.Uid, "size", m.Size)
			out = append(out, e.remember(e.updateOf(m, section, true), m.Uid, 0))
		}
	}
	if len(small) == 0 {
		return inOrder(out), nil
	}
	section := &imap.BodySectionName{Peek: true, Partial: []int{0, int(e.maxMail)}}
	bodies, err := e.fetchItems(c, small, []imap.FetchItem{imap.FetchUid, imap.FetchRFC822Size, section.FetchItem()})
	if err != nil {
		return nil, err
	}
	for _, m := range bodies {
		out = append(out, e.remember(e.updateOf(m, section, false), m.Uid, int64(m.Size)))
	}
	return inOrder(out), nil
}

// givenMail is a mail Poll gave: its update, its uid, and the bytes read
// of it.
type givenMail struct {
	u    gateway.Update
	uid  uint32
	size int64
}

// inOrder is the updates of mails, oldest (lowest uid) first: a
// conversation's mails are taken in the order they came. Pure.
func inOrder(mails []givenMail) []gateway.Update {
	slices.SortStableFunc(mails, func(a, b givenMail) int { return cmp.Compare(a.uid, b.uid) })
	out := make([]gateway.Update, 0, len(mails))
	for _, m := range mails {
		out = append(out, m.u)
	}
	return out
}

func (e *Email) fetchItems(c *client.Client, uids []uint32, items []imap.FetchItem) ([]*imap.Message, error) {
	seq := new(imap.SeqSet)
	seq.AddNum(uids...)
	ch := make(chan *imap.Message, len(uids))
	if err := c.UidFetch(seq, items, ch); err != nil {
		e.drop()
		return nil, fmt.Errorf("email: fetch: %w", err)
	}
	var out []*imap.Message
	for m := range ch {
		out = append(out, m)
	}
	return out, nil
}

// remember notes the mail behind an update, for its Ack (two copies of
// one mail are one update, and both are marked), and the update with the
// bytes read of it, to be given again until it is acknowledged.
func (e *Email) remember(u gateway.Update, uid uint32, size int64) givenMail {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !slices.Contains(e.uids[u.ID], uid) {
		e.uids[u.ID] = append(e.uids[u.ID], uid)
	}
	m := givenMail{u: u, uid: uid, size: size}
	e.given[uid] = m
	return m
}

// givenOf splits the unread mails uids (in order) into those given before
// and not acknowledged, with their bytes together, and the mails to
// fetch. A mail given and no longer unread (marked by someone else, or by
// another process's gateway) is forgotten.
func (e *Email) givenOf(uids []uint32) (given []givenMail, held int64, fetch []uint32) {
	e.mu.Lock()
	defer e.mu.Unlock()
	still := make(map[uint32]givenMail, len(e.given))
	for _, uid := range uids {
		if m, ok := e.given[uid]; ok {
			given, still[uid], held = append(given, m), m, held+m.size
			continue
		}
		fetch = append(fetch, uid)
	}
	e.given = still
	return given, held, fetch
}

// updateOf reads one fetched mail as an update, with its files. A mail
// that is not for the agent is an update without a chat: the gateway
// takes nothing from it, and it is marked handled. Of a mail too large
// (header: only its header was fetched) the update's one file is the
// mail, which cannot be taken.
func (e *Email) updateOf(m *imap.Message, section *imap.BodySectionName, header bool) gateway.Update {
	fallback := gateway.Update{ID: "uid" + strconv.FormatUint(uint64(m.Uid), 10)}
	body := m.GetBody(section)
	if body == nil {
		return fallback
	}
	raw, err := io.ReadAll(io.LimitReader(body, e.maxMail))
	if err != nil {
		return fallback
	}
	in, err := parse(raw, e.o.Address, e.o.AuthservID)
	if err != nil || in.messageID == "" {
		e.logger.Info("email: a mail that cannot be read", "uid", m.Uid, "error", err)
		return fallback
	}
	u := gateway.Update{ID: updateID(in.messageID)}
	if in.why != "" {
		e.logger.Info("email: a mail not for the agent", "from", in.from, "why", in.why)
		return u
	}
	root := in.messageID
	switch {
	case len(in.references) > 0:
		root = in.references[0]
	case in.inReplyTo != "":
		root = in.inReplyTo
	}
	chat := ChatID(in.from, root)
	e.mu.Lock()
	if len(e.subjects) > 10000 {
		clear(e.subjects)
		clear(e.last)
	}
	if _, ok := e.subjects[root]; !ok || root == in.messageID {
		e.subjects[root] = in.subject
	}
	e.last[chat] = in.messageID
	e.mu.Unlock()
	u.User, u.MessageID, u.Text = in.from, in.messageID, in.text
	u.Chat = gateway.Chat{Platform: "email", Kind: gateway.ChatDM, ID: chat}
	switch {
	case header:
		u.Text, u.Files = "", []gateway.File{tooLarge(in.subject, int64(m.Size), e.maxMail)}
		return u
	case len(in.files) > 0:
		u.Files = filesOf(raw, in.files)
	}
	if first, _, _ := strings.Cut(in.text, "\n"); gateway.IsButtonData(strings.TrimSpace(first)) {
		u.Button, u.CallbackID, u.Text = strings.TrimSpace(first), u.ID, ""
	}
	return u
}

// AcksOneByOne: each mail is marked alone (gateway.AcksOneByOne).
func (e *Email) AcksOneByOne() {}

var _ gateway.AcksOneByOne = (*Email)(nil)

// Ack marks a mail handled: it is not read again. The mail is forgotten
// once the mailbox has marked it, so an Ack that failed can be made again.
func (e *Email) Ack(ctx context.Context, u gateway.Update) error {
	e.mu.Lock()
	uids, keyword := slices.Clone(e.uids[u.ID]), e.keyword
	e.mu.Unlock()
	if len(uids) == 0 {
		return nil
	}
	c, err := e.conn(ctx)
	if err != nil {
		return err
	}
	seq := new(imap.SeqSet)
	seq.AddNum(uids...)
	flags := []any{imap.SeenFlag}
	if keyword {
		flags = append(flags, handled)
	}
	if err := c.UidStore(seq, imap.FormatFlagsOp(imap.AddFlags, true), flags, nil); err != nil {
		e.drop()
		return fmt.Errorf("email: mark handled: %w", err)
	}
	e.mu.Lock()
	delete(e.uids, u.ID)
	for _, uid := range uids {
		delete(e.given, uid)
	}
	e.mu.Unlock()
	return nil
}

// ChatID is the gateway's id of an email conversation: the sender's
// address and the thread's first Message-ID ("<address>:<message id>").
// Pure.
func ChatID(address, root string) string {
	root = strings.Map(func(r rune) rune {
		if r == ':' || r <= ' ' {
			return '_'
		}
		return r
	}, root)
	return address + ":" + root
}

// splitChat reads a ChatID. Pure.
func splitChat(id string) (address, root string) {
	address, root, _ = strings.Cut(id, ":")
	return address, root
}

// Parts is the Markdown itself (the answer is sent as text and HTML), in
// parts only when it is very long.
func (e *Email) Parts(text string) []string {
	var out []string
	for len(text) > partLimit {
		cut := strings.LastIndex(text[:partLimit], "\n\n")
		if cut <= 0 {
			cut = partLimit
		}
		out, text = append(out, text[:cut]), strings.TrimLeft(text[cut:], "\n")
	}
	if strings.TrimSpace(text) == "" && len(out) == 0 {
		return []string{"(no answer)"}
	}
	return append(out, text)
}

// threading is where a mail of a chat goes: the chat's address, the
// thread's root and subject ("Re: ..."), the mail it answers and its
// References.
type threading struct {
	to, root, subject, inReplyTo string
	refs                         []string
}

// threadOf is m's threading: under m's ReplyTo, else the chat's latest
// mail, else the thread's root.
func (e *Email) threadOf(m gateway.Outgoing) (threading, error) {
	to, root := splitChat(m.ChatID)
	if !mailer.CheckAddress(to) {
		return threading{}, fmt.Errorf("email: %q is not an address", to)
	}
	e.mu.Lock()
	subject, latest := e.subjects[root], e.last[m.ChatID]
	e.mu.Unlock()
	t := threading{to: to, root: root, subject: reSubject(subject), inReplyTo: cmp.Or(m.ReplyTo, latest, root)}
	if root != "" {
		t.refs = append(t.refs, root)
	}
	if t.inReplyTo != "" && t.inReplyTo != root {
		t.refs = append(t.refs, t.inReplyTo)
	}
	return t, nil
}

// SendPart mails one part to the chat's address, threaded under its
// latest mail; an approval's choices are code lines to answer with.
func (e *Email) SendPart(ctx context.Context, m gateway.Outgoing, part string) (string, error) {
	t, err := e.threadOf(m)
	if err != nil {
		return "", err
	}
	if choices := gateway.CodeChoices(m.Buttons); choices != "" {
		part = strings.TrimRight(part, "\n") + "\n\n" + choices
	}
	id := newMessageID(e.o.Address)
	if t.root == "" { // not an answer: a delivery, under its first line
		t.subject = firstLine(part)
	}
	err = mailer.Send(ctx, e.o.SMTP, e.o.SMTPPassword, mailer.Message{To: t.to, Subject: t.subject, Markdown: part,
		MessageID: id, InReplyTo: t.inReplyTo, References: t.refs, Auto: true})
	if err != nil {
		return "", err
	}
	return id, nil
}

// newMessageID is a fresh Message-ID at the address's domain.
func newMessageID(address string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	_, domain, _ := strings.Cut(address, "@")
	return hex.EncodeToString(b) + "@" + cmp.Or(domain, "talaria.invalid")
}

// Edit cannot be done: a sent mail stays as it is.
func (e *Email) Edit(context.Context, string, string, string, [][]gateway.Button) error {
	return fmt.Errorf("%w: a sent mail cannot be edited", gateway.ErrNotEditable)
}

// Typing does nothing.
func (e *Email) Typing(context.Context, string) error { return nil }

// AnswerButton mails the notice of a code that decided nothing (a stale
// one); one that decided is answered by the turn going on.
func (e *Email) AnswerButton(ctx context.Context, u gateway.Update, notice string, done bool) error {
	if done || notice == "" {
		return nil
	}
	_, err := e.SendPart(ctx, gateway.Outgoing{ChatID: u.Chat.ID, ReplyTo: u.MessageID}, notice)
	return err
}
