package cronjob

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/mailer"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/scheduler"
)

// maxWebhookURL bounds a webhook target's URL.
const maxWebhookURL = 2048

// ErrIncomplete means a new job lacks its name, its schedule, or both a
// prompt and a pre-run script.
var ErrIncomplete = errors.New("a job needs a name, a schedule and a prompt (or a pre-run script)")

// FieldError is a field of a job that does not pass: Field names it
// ("deliver", "tools", "schedule"), Value is the offending value.
type FieldError struct {
	Field  string
	Value  string
	Reason string
	// Err is the cause, when another package refused the value (the
	// scheduler's ErrInvalidSchedule for a schedule).
	Err error
}

// Error is `field "value": reason`, or the cause's own message.
func (e *FieldError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("%s %q: %s", e.Field, e.Value, e.Reason)
}

// Flag is the message as the CLI words it: `--field "value": reason`.
func (e *FieldError) Flag() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return "--" + e.Error()
}

func (e *FieldError) Unwrap() error { return e.Err }

// CheckTools refuses a name that is neither a built-in tool nor a toolset
// nor shaped as an MCP tool (mcp_<server>_<tool>) or an MCP server's
// toolset (mcp:<server>), listing the known ones. Which MCP tools there
// are only the worker knows; CheckMCPTools checks their servers against a
// configuration.
func CheckTools(names []string) error {
	known := engine.ToolNames()
	for _, n := range names {
		if !slices.Contains(known, n) && !slices.Contains(tools.ToolsetNames(), n) && !tools.IsMCPName(n) {
			return &FieldError{Field: "tools", Value: n, Reason: "no such tool or toolset (tools: " + strings.Join(known, ", ") +
				"; toolsets: " + strings.Join(tools.ToolsetNames(), ", ") + ")"}
		}
	}
	return nil
}

// CheckMCPTools refuses an MCP tool or toolset name whose server is not
// one of servers (the configuration's mcp_servers).
func CheckMCPTools(names, servers []string) error {
	for _, n := range names {
		if tools.IsMCPName(n) && !slices.Contains(engine.ToolNames(), n) && tools.MCPServerOf(n, servers) == "" {
			have := "none is configured"
			if len(servers) > 0 {
				sorted := slices.Sorted(slices.Values(servers))
				have = "configured: " + strings.Join(sorted, ", ")
			}
			return &FieldError{Field: "tools", Value: n, Reason: "no such MCP server in mcp_servers (" + have + ")"}
		}
	}
	return nil
}

// checkJobDeliver checks a job's targets: CheckDeliver's, and "origin"
// only for a job made in a chat.
func checkJobDeliver(j models.CronJob) error {
	if err := CheckDeliver(j.Deliver); err != nil {
		return err
	}
	if j.Origin == "" && slices.Contains(j.Deliver, engine.OriginDelivery) {
		return &FieldError{Field: "deliver", Value: engine.OriginDelivery,
			Reason: "origin is the chat that made the job, and this one is not made in a chat: use home, telegram:<chat id>, slack:<channel id> or discord:<channel id>"}
	}
	return nil
}

// CheckDeliver refuses a delivery target that is none of "local", "home"
// (the chat /sethome chose), "origin" (the chat that made the job),
// "telegram:" and a chat id, "slack:" and a channel id, "discord:" and a
// channel id (a thread's as "<channel>:<thread>"), "sms:" and a phone
// number in E.164, "whatsapp:" and a WhatsApp id (the digits), "email:" and one bare address, and "webhook:" followed by an absolute
// http(s) URL with a host (no user name or password in it, no spaces or
// control characters, at most 2048 bytes). Targets come from whoever may add jobs: nothing else is sent to.
func CheckDeliver(targets []string) error {
	for _, d := range targets {
		if d == engine.DefaultDelivery || d == "home" || d == engine.OriginDelivery {
			continue
		}
		if addr, ok := strings.CutPrefix(d, "email:"); ok {
			if !mailer.CheckAddress(addr) {
				return &FieldError{Field: "deliver", Value: d, Reason: "use email:<address>, one bare address"}
			}
			continue
		}
		if ch, ok := strings.CutPrefix(d, "slack:"); ok {
			if !validSlackChannel(ch) {
				return &FieldError{Field: "deliver", Value: d, Reason: "use slack:<channel id>, e.g. slack:C0123ABCD (a DM's D... id works too)"}
			}
			continue
		}
		if number, ok := strings.CutPrefix(d, "sms:"); ok {
			if !validPhone(number) {
				return &FieldError{Field: "deliver", Value: d, Reason: "use sms:<phone number>, in E.164 (sms:+15551234567)"}
			}
			continue
		}
		if id, ok := strings.CutPrefix(d, "whatsapp:"); ok {
			if !validPhone("+" + id) {
				return &FieldError{Field: "deliver", Value: d, Reason: "use whatsapp:<WhatsApp id>, the number's digits without + (whatsapp:15551234567)"}
			}
			continue
		}
		if ch, ok := strings.CutPrefix(d, "discord:"); ok {
			if !validDiscordChannel(ch) {
				return &FieldError{Field: "deliver", Value: d, Reason: "use discord:<channel id>, the channel's number (Developer Mode: Copy Channel ID)"}
			}
			continue
		}
		if chat, ok := strings.CutPrefix(d, "telegram:"); ok {
			if !validTelegramChat(chat) {
				return &FieldError{Field: "deliver", Value: d, Reason: "use telegram:<chat id>, the chat's number (negative for a group)"}
			}
			continue
		}
		if raw, ok := strings.CutPrefix(d, "webhook:"); !ok || !validWebhook(raw) {
			return &FieldError{Field: "deliver", Value: d, Reason: "use local, home, origin, webhook:<http(s) url>, telegram:<chat id>, slack:<channel id>, discord:<channel id>, sms:<phone number>, whatsapp:<WhatsApp id> or email:<address>"}
		}
	}
	return nil
}

// validSlackChannel reports whether s is a Slack conversation id: C, G
// or D and upper-case letters and digits. Pure.
func validSlackChannel(s string) bool {
	return len(s) >= 3 && len(s) <= 32 && strings.IndexByte("CGD", s[0]) >= 0 &&
		strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == ""
}

// validPhone reports whether s is a phone number in E.164: "+" and 7 to
// 15 digits. Pure.
func validPhone(s string) bool {
	digits, ok := strings.CutPrefix(s, "+")
	return ok && len(digits) >= 7 && len(digits) <= 15 && strings.Trim(digits, "0123456789") == ""
}

// validDiscordChannel reports whether s is a Discord channel id (a
// snowflake), or a channel's and a thread's in it ("<channel>:<thread>").
// Pure.
func validDiscordChannel(s string) bool {
	channel, thread, hasThread := strings.Cut(s, ":")
	snowflake := func(id string) bool {
		return len(id) >= 15 && len(id) <= 20 && strings.Trim(id, "0123456789") == ""
	}
	return snowflake(channel) && (!hasThread || snowflake(thread))
}

// validTelegramChat reports whether s is a Telegram chat id: an integer,
// negative for groups. Pure.
func validTelegramChat(s string) bool {
	digits := strings.TrimPrefix(s, "-")
	return digits != "" && len(digits) <= 20 && strings.Trim(digits, "0123456789") == ""
}

// validWebhook reports whether raw is a URL a webhook may POST to. Pure.
func validWebhook(raw string) bool {
	if raw == "" || len(raw) > maxWebhookURL || strings.IndexFunc(raw, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}) >= 0 {
		return false
	}
	u, err := url.Parse(raw)
	if err != nil || u.User != nil || u.Hostname() == "" || u.Opaque != "" {
		return false
	}
	return u.Scheme == "http" || u.Scheme == "https"
}

// Spec is what a new job is made of (the flags of `cron add`, the body
// of POST /api/jobs).
type Spec struct {
	Name          string
	Schedule      string
	TimeZone      string
	Prompt        string
	Deliver       []string
	Model         string
	MaxIterations int
	Tools         []string
	PreRunScript  string
	Overlap       string
	CatchUp       string
	CatchUpWindow time.Duration
	// Origin is the chat the job is made in (see models.CronJob.Origin).
	Origin string
}

// New checks spec and makes the job it describes (enabled, with a new
// id, delivering locally when it names no target) and its schedule, as
// of now. A relative one-shot ("in 30m") is pinned to the time it means.
// The store checks the rest (policies, lengths, a name taken) when the
// job is created.
func New(spec Spec, now time.Time) (models.CronJob, scheduler.Schedule, error) {
	if spec.Name == "" || spec.Schedule == "" || (spec.Prompt == "" && spec.PreRunScript == "") {
		return models.CronJob{}, nil, ErrIncomplete
	}
	if err := CheckTools(spec.Tools); err != nil {
		return models.CronJob{}, nil, err
	}
	job := models.CronJob{Name: spec.Name, Prompt: spec.Prompt, Deliver: spec.Deliver, Model: spec.Model,
		MaxIterations: spec.MaxIterations, Toolsets: spec.Tools, PreRunScript: spec.PreRunScript, Origin: spec.Origin}
	job.Deliver = engine.DeliveryTargets(job)
	if err := checkJobDeliver(job); err != nil {
		return models.CronJob{}, nil, err
	}
	now = now.UTC()
	sched, err := scheduler.ParseSchedule(spec.Schedule, spec.TimeZone, now, now)
	if err != nil {
		return models.CronJob{}, nil, &FieldError{Field: "schedule", Value: spec.Schedule, Err: err}
	}
	schedule := spec.Schedule
	if strings.HasPrefix(strings.TrimSpace(schedule), "in ") {
		schedule = sched.String() // pin a relative one-shot to the time shown
	}
	job.ID, job.Schedule, job.TimeZone, job.Enabled = uuid.NewString()[:8], schedule, spec.TimeZone, true
	job.Overlap, job.CatchUp, job.CatchUpWindow = spec.Overlap, spec.CatchUp, spec.CatchUpWindow
	return job, sched, nil
}

// Edit is a change to a job (the flags of `cron edit`, the body of PATCH
// /api/jobs/{id}): nil fields stay as they are.
type Edit struct {
	Schedule      *string
	TimeZone      *string
	Prompt        *string
	Model         *string
	Deliver       *[]string
	Tools         *[]string
	MaxIterations *int
	Overlap       *string
	CatchUp       *string
}

// Empty reports whether e changes nothing.
func (e Edit) Empty() bool { return e == Edit{} }

// Apply changes j by e and checks the result: its tools, its delivery
// targets and its schedule. j is changed even when the result does not
// pass; the store checks the rest when the job is updated. A job without
// a pre-run script keeps a prompt that is not blank.
func (e Edit) Apply(j *models.CronJob) error {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&j.Schedule, e.Schedule)
	set(&j.TimeZone, e.TimeZone)
	set(&j.Prompt, e.Prompt)
	if e.Prompt != nil && strings.TrimSpace(j.Prompt) == "" && j.PreRunScript == "" {
		return &FieldError{Field: "prompt", Value: j.Prompt, Reason: "the prompt of a job without a pre-run script cannot be empty"}
	}
	set(&j.Model, e.Model)
	set(&j.Overlap, e.Overlap)
	set(&j.CatchUp, e.CatchUp)
	if e.Deliver != nil {
		j.Deliver = *e.Deliver
	}
	if e.Tools != nil {
		j.Toolsets = *e.Tools
		if err := CheckTools(j.Toolsets); err != nil {
			return err
		}
	}
	if e.MaxIterations != nil {
		j.MaxIterations = *e.MaxIterations
	}
	if e.Deliver != nil {
		if err := checkJobDeliver(*j); err != nil {
			return err
		}
	}
	if _, err := scheduler.ParseSchedule(j.Schedule, j.TimeZone, j.CreatedAt, j.CreatedAt); err != nil {
		return &FieldError{Field: "schedule", Value: j.Schedule, Err: err}
	}
	return nil
}
