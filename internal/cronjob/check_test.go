package cronjob

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/scheduler"
)

func TestCheckDeliver(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		target string
		ok     bool
	}{
		{"local", true},
		{"webhook:https://example.com/hook?x=1", true},
		{"webhook:http://127.0.0.1:8080/h", true},
		{"", false},
		{"Local", false},
		{"webhook:", false},
		{"webhook:httpfoo", false},
		{"webhook:ftp://example.com/", false},
		{"webhook:https://", false},
		{"webhook:https:///path", false},
		{"webhook:https://user:pw@example.com/", false},
		{"webhook:https://example.com/a b", false},
		{"webhook:https://example.com/\r\nX-Evil: 1", false},
		{"webhook:mailto:someone@example.com", false},
		{"webhook:https://example.com/" + strings.Repeat("a", 2048), false},
		{"telegram:123", true},
		{"telegram:-1001234567890", true},
		{"telegram:", false},
		{"telegram:-", false},
		{"telegram:12a", false},
		{"telegram:@channel", false},
		{"telegram:1 2", false},
		{"telegram:" + strings.Repeat("9", 21), false},
		{"email:ops@example.com", true},
		{"slack:C0123ABCD", true},
		{"discord:1234567890123456789", true},
		{"sms:+15551234567", true},
		{"whatsapp:15551234567", true},
		{"whatsapp:+15551234567", false},
		{"sms:5551234567", false},
		{"sms:+1555abc", false},
		{"discord:1234567890123456789:1234567890123456790", true},
		{"discord:#general", false},
		{"discord:123", false},
		{"discord:1234567890123456789:", false},
		{"discord:", false},
		{"home", true},
		{"home:x", false},
		{"slack:D42", true},
		{"slack:#general", false},
		{"slack:c0123", false},
		{"slack:", false},
		{"slack:C01<@U1>", false},
		{"email:", false},
		{"email:Ops <ops@example.com>", false},
		{"email:a@example.com,b@example.com", false},
		{"email:ops@example.com\r\nBcc: x@evil.com", false},
		{"email:not-an-address", false},
	} {
		err := CheckDeliver([]string{tt.target})
		if (err == nil) != tt.ok {
			t.Errorf("CheckDeliver(%q) = %v, want ok=%v", tt.target, err, tt.ok)
		}
		var fe *FieldError
		if err != nil && (!errors.As(err, &fe) || fe.Field != "deliver" || !strings.HasPrefix(fe.Flag(), "--deliver ")) {
			t.Errorf("CheckDeliver(%q) = %#v, want a deliver FieldError", tt.target, err)
		}
	}
}

func TestNewAndEdit(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	if _, _, err := New(Spec{Name: "n", Schedule: "@daily"}, now); !errors.Is(err, ErrIncomplete) {
		t.Errorf("no prompt: %v", err)
	}
	_, _, err := New(Spec{Name: "n", Schedule: "every fortnight", Prompt: "p"}, now)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "schedule" || !errors.Is(err, scheduler.ErrInvalidSchedule) {
		t.Errorf("bad schedule: %#v", err)
	}
	j, _, err := New(Spec{Name: "n", Schedule: "in 30m", Prompt: "p"}, now)
	if err != nil || j.Schedule != "2026-05-01T12:30:00Z" || len(j.ID) != 8 || !j.Enabled || len(j.Deliver) != 1 || j.Deliver[0] != "local" {
		t.Fatalf("New = %+v, %v", j, err)
	}

	job := models.CronJob{Schedule: "@daily", Prompt: "p", CreatedAt: now}
	bad := []string{"webhook:nope"}
	if err := (Edit{Deliver: &bad}).Apply(&job); !errors.As(err, &fe) || fe.Field != "deliver" {
		t.Errorf("edit deliver: %v", err)
	}
	blank := " "
	if err := (Edit{Prompt: &blank}).Apply(&job); !errors.As(err, &fe) || fe.Field != "prompt" {
		t.Errorf("edit prompt: %v", err)
	}
	sched := "@hourly"
	if err := (Edit{Schedule: &sched}).Apply(&job); err != nil || job.Schedule != "@hourly" {
		t.Errorf("edit schedule: %v, %+v", err, job)
	}
	if !(Edit{}).Empty() || (Edit{Schedule: &sched}).Empty() {
		t.Error("Empty")
	}
}

// TestCheckMCPTools: an MCP name must come from a configured server.
func TestCheckMCPTools(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		names, servers []string
		errHas         string
	}{
		{[]string{"read_file", "web"}, nil, ""},
		{[]string{"mcp:docs", "mcp_docs_search"}, []string{"docs"}, ""},
		{[]string{"mcp:git"}, []string{"docs", "any"}, `tools "mcp:git": no such MCP server in mcp_servers (configured: any, docs)`},
		{[]string{"mcp_git_log"}, nil, "none is configured"},
	} {
		err := CheckMCPTools(tt.names, tt.servers)
		if (tt.errHas == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.errHas) {
			t.Errorf("CheckMCPTools(%q, %q) = %v, want %q", tt.names, tt.servers, err, tt.errHas)
		}
	}
}
