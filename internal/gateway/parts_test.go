package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakeslack"
	"github.com/talaria-agent/talaria/internal/faketelegram"
	"github.com/talaria-agent/talaria/internal/gateway"
	"github.com/talaria-agent/talaria/internal/gateway/slack"
	"github.com/talaria-agent/talaria/internal/gateway/telegram"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// longAnswer is a Markdown answer of exactly n characters: numbered
// paragraphs ("Step 001.") with some markup, so that every part of it can
// be found in the chat, in order.
func longAnswer(n int) string {
	const end = "That is all"
	var b strings.Builder
	for i := 1; ; i++ {
		p := fmt.Sprintf("**Step %03d.** Read `part_%03d.go`, check the *ports* & the logs, then write down what changed and why it matters.\n\n", i, i)
		if b.Len()+len(p)+len(end)+1 > n {
			break
		}
		b.WriteString(p)
	}
	b.WriteString(end)
	b.WriteString(strings.Repeat(".", n-b.Len()))
	return b.String()
}

// stepsInOrder reports the first problem with the steps of a long answer
// as the chat shows them (texts concatenated): each step once, in order,
// up to the last.
func stepsInOrder(shown string, last int) error {
	at := 0
	for i := 1; i <= last; i++ {
		step := fmt.Sprintf("Step %03d.", i)
		if n := strings.Count(shown, step); n != 1 {
			return fmt.Errorf("%s is shown %d times", step, n)
		}
		j := strings.Index(shown, step)
		if j < at {
			return fmt.Errorf("%s is shown before the step above it", step)
		}
		at = j
	}
	if n := strings.Count(shown, fmt.Sprintf("Step %03d.", last+1)); n != 0 {
		return fmt.Errorf("a step after the last is shown")
	}
	return nil
}

// lastStep is the number of the last step of a long answer.
func lastStep(answer string) int {
	return strings.Count(answer, "**Step ")
}

// bench is one platform's fake and how a gateway process connects to it.
type bench struct {
	name, account, chat string
	// connect is a process's connection to the platform, for as long as
	// ctx lasts.
	connect func(t *testing.T, ctx context.Context) gateway.Platform
	// holdSendsAfter holds the sends after the next n; held counts them;
	// release ends the hold.
	holdSendsAfter func(n int)
	waitHeld       func(ctx context.Context, n int) error
	release        func()
	// shown is the chat's messages, in order (without deleted ones).
	shown func() []string
	// remove deletes a message ("" when the platform cannot).
	remove func(t *testing.T, id string)
}

func telegramBench(t *testing.T) bench {
	tg := faketelegram.Start("9:token", "parts_bot")
	t.Cleanup(tg.Close)
	return bench{name: "telegram", account: "7000", chat: "42",
		connect: func(t *testing.T, ctx context.Context) gateway.Platform {
			bot, err := telegram.New(ctx, tg.URL(), tg.Token)
			if err != nil {
				t.Fatal(err)
			}
			return bot
		},
		holdSendsAfter: func(n int) { tg.HoldAfter("sendMessage", n) },
		waitHeld: func(ctx context.Context, n int) error {
			_, err := tg.WaitHeld(ctx, func(h int) bool { return h == n })
			return err
		},
		release: tg.Release,
		shown: func() []string {
			var out []string
			for _, m := range tg.Sent() {
				if m.ChatID == 42 && !m.Deleted {
					out = append(out, m.Text)
				}
			}
			return out
		},
		remove: func(t *testing.T, id string) {
			resp, err := http.PostForm(tg.URL()+"/bot"+tg.Token+"/deleteMessage", url.Values{"chat_id": {"42"}, "message_id": {id}})
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		},
	}
}

func slackBench(t *testing.T) bench {
	fs := fakeslack.Start("xoxb-1-bot", "xapp-1-app", "talaria")
	t.Cleanup(fs.Close)
	return bench{name: "slack", account: fakeslack.TeamID + "." + fakeslack.BotUserID, chat: "D42",
		connect: func(t *testing.T, ctx context.Context) gateway.Platform {
			s, err := slack.New(ctx, slack.Options{APIURL: fs.URL(), BotToken: fs.BotToken, AppToken: fs.AppToken})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		holdSendsAfter: func(n int) { fs.HoldAfter("chat.postMessage", n) },
		waitHeld: func(ctx context.Context, n int) error {
			_, err := fs.WaitHeld(ctx, func(h int) bool { return h == n })
			return err
		},
		release: fs.Release,
		shown: func() []string {
			var out []string
			for _, m := range fs.Sent() {
				if m.Channel == "D42" {
					out = append(out, m.Text)
				}
			}
			return out
		},
	}
}

// TestReplyPartsAcrossACrash: a 10,000-character reply reaches the chat
// in full, in order, each part once, with its draft as part 0 of N, also
// when the process sending it dies after part k and before part k+1 (the
// request of part k+1 never arrives); the retry, by a process of its own
// over the same store, sends the parts not sent yet, and a retry after
// that sends nothing.
func TestReplyPartsAcrossACrash(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		bench    func(*testing.T) bench
		drafted  bool
		gone     bool // the draft is deleted before the reply
		killedAt int  // the part after which the first process dies (-1: it does not)
	}{
		{"telegram draft, killed after part 1", telegramBench, true, false, 1},
		{"telegram draft, killed after the draft's edit", telegramBench, true, false, 0},
		{"telegram draft, not killed", telegramBench, true, false, -1},
		{"telegram without a draft, killed after part 0", telegramBench, false, false, 0},
		{"telegram draft deleted, killed after part 1", telegramBench, true, true, 1},
		{"slack draft, killed after part 2", slackBench, true, false, 2},
		{"slack draft, killed after part 0", slackBench, true, false, 0},
		{"slack without a draft, killed after part 1", slackBench, false, false, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			b := tt.bench(t)
			st, err := models.Open(ctx, filepath.Join(t.TempDir(), "talaria.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			answer := longAnswer(10000)
			turn := "turn/parts/1"
			msgs, err := st.AppendMessages(ctx, []models.Message{{SessionID: "parts", TurnID: turn, IdemKey: "answer", Role: "assistant", Content: answer}})
			if err != nil {
				t.Fatal(err)
			}
			in := workflows.ChatReplyInput{Platform: b.name, Account: b.account, ChatID: b.chat, TurnID: turn,
				Result: workflows.ChatTurnResult{FinalMessageID: msgs[0].ID, StopReason: workflows.StopTextResponse, Completed: true}}

			first, die := context.WithCancel(ctx)
			defer die()
			p := b.connect(t, first)
			parts := p.Parts(answer)
			if len(parts) < 3 {
				t.Fatalf("the answer is %d parts on %s, want 3 or more", len(parts), b.name)
			}
			g := gateway.NewForTest(st, nil, p)
			if tt.drafted {
				id, err := g.SendDraft(ctx, p, in, p.Parts(answer[:700])[0])
				if err != nil {
					t.Fatal(err)
				}
				if tt.gone {
					b.remove(t, id)
				}
			}
			if tt.killedAt >= 0 {
				sent := tt.killedAt // parts 1 to killedAt follow the draft
				if !tt.drafted || tt.gone {
					sent++ // and part 0 is sent too
				}
				b.holdSendsAfter(sent)
				done := make(chan error, 1)
				sending, ended := context.WithCancel(ctx)
				go func() {
					err := g.Reply(first, in)
					ended()
					done <- err
				}()
				if err := b.waitHeld(sending, 1); err != nil {
					t.Fatalf("the reply ended before part %d was on its way (%v); the chat shows %d messages", tt.killedAt+2, <-done, len(b.shown()))
				}
				die() // the process dies with part killedAt+1 on its way
				if err := <-done; err == nil {
					t.Fatal("the killed attempt reports success")
				}
				if err := b.waitHeld(ctx, 0); err != nil {
					t.Fatal(err)
				}
				b.release()
				if got := b.shown(); len(got) != tt.killedAt+1 || got[tt.killedAt] != parts[tt.killedAt] {
					t.Fatalf("before the retry the chat shows %d messages, want parts 1 to %d", len(got), tt.killedAt+1)
				}
			}
			// The retry (or the first attempt): another process, same store.
			again := gateway.NewForTest(st, nil, b.connect(t, ctx))
			for attempt := range 2 {
				if err := again.Reply(ctx, in); err != nil {
					t.Fatalf("attempt %d: %v", attempt+1, err)
				}
				got := b.shown()
				if len(got) != len(parts) {
					t.Fatalf("attempt %d: %d messages in the chat, want the %d parts", attempt+1, len(got), len(parts))
				}
				for i := range parts {
					if got[i] != parts[i] {
						t.Errorf("attempt %d: message %d is not part %d:\n%q\nwant\n%q", attempt+1, i+1, i+1, got[i], parts[i])
					}
				}
				if err := stepsInOrder(strings.Join(got, ""), lastStep(answer)); err != nil {
					t.Errorf("attempt %d: %v", attempt+1, err)
				}
			}
		})
	}
}

// TestLongAnswer: the test answer is as long as it says.
func TestLongAnswer(t *testing.T) {
	a := longAnswer(10000)
	if n := len([]rune(a)); n != 10000 {
		t.Fatalf("longAnswer(10000) is %d characters", n)
	}
	if err := stepsInOrder(a, lastStep(a)); err != nil || lastStep(a) < 50 {
		t.Fatalf("%d steps: %v", lastStep(a), err)
	}
}
