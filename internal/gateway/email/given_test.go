package email

import (
	"context"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/dovecottest"
	"github.com/talaria-agent/talaria/internal/gateway"
)

// TestGivenMailNotFetchedAgain: while the gateway takes a mail, it polls
// again; the mail it was given comes again as it was, not fetched anew
// (here a mailbox that now reads only headers would give it without its
// text), and once acknowledged it comes no more.
func TestGivenMailNotFetchedAgain(t *testing.T) {
	t.Parallel()
	e, dc, _ := mailbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dc.Deliver(t, dovecottest.WithFiles(headers("g1@example.com", "Hello"), "first words"))
	first := pollOne(t, e)
	if first.Text != "first words" {
		t.Fatalf("update %+v", first)
	}

	e.maxMail = 1 // a fetch now would read the header alone
	dc.Deliver(t, dovecottest.WithFiles(headers("g2@example.com", "Hello again"), "second words"))
	var ups []gateway.Update
	for len(ups) < 2 { // until the mailbox shows the new mail
		var err error
		if ups, err = e.Poll(ctx); err != nil {
			t.Fatal(err)
		}
		if len(ups) == 0 || ups[0].ID != first.ID || ups[0].Text != "first words" {
			t.Fatalf("polled again: %+v; want the given mail first, as it was", ups)
		}
	}
	if len(ups) != 2 || ups[1].Text != "" {
		t.Fatalf("polled again: %+v; want the given mail, then the new one's header alone", ups)
	}

	e.maxMail = maxMailBytes
	for _, u := range ups {
		if err := e.Ack(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	if ups, err := e.fetch(e.c); err != nil || len(ups) != 0 {
		t.Fatalf("after the acknowledgments: %+v, %v", ups, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.given) != 0 {
		t.Fatalf("%d mails still remembered as given", len(e.given))
	}
}
