package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/talaria-agent/talaria/internal/cronjob"
	"github.com/talaria-agent/talaria/internal/textline"
	"github.com/talaria-agent/talaria/models"
)

// cronUsage is the answer to a /cron the gateway cannot read.
const cronUsage = "Usage: /cron list, /cron add SCHEDULE | PROMPT (e.g. /cron add 0 9 * * 1-5 | summarise the overnight alerts), /cron rm NAME"

// cmdCron lists the scheduled jobs, adds one made in this chat (it
// delivers here: its origin), or removes one of this chat's.
func (g *Gateway) cmdCron(ctx context.Context, p Platform, u Update, c Command) (string, error) {
	verb, rest, _ := strings.Cut(c.Args, " ")
	rest = strings.TrimSpace(rest)
	switch {
	case verb == "" || verb == "list" && rest == "":
		return g.cronList(ctx, origin(p, u))
	case verb == "add":
		return g.cronAdd(ctx, p, u, rest)
	case verb == "rm" && rest != "":
		return g.cronRemove(ctx, origin(p, u), rest)
	}
	return cronUsage, nil
}

// origin names the chat an update came from, as a delivery target.
func origin(p Platform, u Update) string { return p.Name() + ":" + u.Chat.ID }

func (g *Gateway) cronList(ctx context.Context, here string) (string, error) {
	jobs, err := g.rt.Store.CronJobs(ctx)
	if err != nil {
		return "", err
	}
	if len(jobs) == 0 {
		return "No scheduled jobs.", nil
	}
	lines := []string{"Scheduled jobs:"}
	for _, j := range jobs {
		runs, err := g.rt.Store.CronRuns(ctx, j.ID, 1)
		if err != nil {
			return "", err
		}
		lines = append(lines, jobLine(j, runs, here))
	}
	return strings.Join(lines, "\n"), nil
}

// jobLine is a job as /cron list shows it: name, schedule, state, whether
// it was made here, and how its last run went (its delivery failure
// first). Pure.
func jobLine(j models.CronJob, last []models.CronRun, here string) string {
	state := "paused"
	if j.Enabled {
		state = "active"
	}
	if j.Origin == here {
		state += ", made here"
	}
	line := fmt.Sprintf("• %s — %s (%s)", j.Name, j.Schedule, state)
	if len(last) == 0 {
		return line
	}
	r := last[0]
	line += fmt.Sprintf("; last run %s %s", r.ScheduledAt.UTC().Format("2006-01-02 15:04 UTC"), r.Status)
	if r.Error != "" {
		line += ": " + textline.Of(r.Error, 160)
	}
	return line
}

// cronAdd makes a job from "SCHEDULE | PROMPT", with this chat's model,
// delivering to this chat.
func (g *Gateway) cronAdd(ctx context.Context, p Platform, u Update, args string) (string, error) {
	schedule, prompt, ok := strings.Cut(args, "|")
	schedule, prompt = strings.TrimSpace(schedule), strings.TrimSpace(prompt)
	if !ok || schedule == "" || prompt == "" {
		return cronUsage, nil
	}
	chat, err := g.chatOf(ctx, u)
	if err != nil {
		return "", err
	}
	job, _, err := cronjob.New(cronjob.Spec{Name: jobName(prompt, randomSuffix()), Schedule: schedule, Prompt: prompt,
		Model: chat.Model, Origin: origin(p, u)}, time.Now())
	var field *cronjob.FieldError
	if errors.As(err, &field) {
		return "Not added: " + textline.Of(field.Error(), 300), nil
	}
	if err != nil {
		return "", err
	}
	job.Owner = chat.Key // its runs' sessions are the chat's
	created, err := g.rt.Store.CreateCronJob(ctx, job)
	if errors.Is(err, models.ErrInvalidArgument) {
		return "Not added: " + textline.Of(err.Error(), 300), nil
	}
	if err != nil {
		return "", err
	}
	next := cronjob.NextRun(*created, time.Now())
	when := "no run left"
	if !next.IsZero() {
		when = "next run " + next.Format("2006-01-02 15:04 UTC")
	}
	return fmt.Sprintf("Added %s (%s, %s); its results come to this chat. /cron rm %s removes it.",
		created.Name, created.Schedule, when, created.Name), nil
}

// cronRemove removes a job made in this chat: another chat's (or the
// CLI's) is not this chat's to remove.
func (g *Gateway) cronRemove(ctx context.Context, here, name string) (string, error) {
	j, err := g.rt.Store.CronJob(ctx, name)
	if errors.Is(err, models.ErrNotFound) || err == nil && j.Origin != here {
		return fmt.Sprintf("No job %q was made in this chat (/cron list shows them).", textline.Of(name, 60)), nil
	}
	if err != nil {
		return "", err
	}
	if err := g.rt.Store.DeleteCronJob(ctx, j.ID); err != nil {
		return "", err
	}
	return "Removed " + j.Name + ".", nil
}

// jobName names a job made in a chat after the first words of its
// prompt, with suffix to keep names apart: "summarise-the-overnight-3f2a".
// Pure.
func jobName(prompt, suffix string) string {
	var words []string
	for _, w := range strings.FieldsFunc(strings.ToLower(prompt), func(r rune) bool {
		return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)))
	}) {
		if len(words) == 3 {
			break
		}
		words = append(words, w[:min(len(w), 16)]) // ASCII: bytes are letters
	}
	if len(words) == 0 {
		words = []string{"chat-job"}
	}
	return strings.Join(words, "-") + "-" + suffix
}

func randomSuffix() string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
