package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/cronjob"
)

// cronHelp runs "talaria cron ARGS --help" and returns what it prints.
func cronHelp(t *testing.T, args ...string) string {
	t.Helper()
	cmd := newCronCommand()
	registerGlobalFlags(cmd)
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append(args, "--help"))
	if err := cmd.ExecuteContext(t.Context()); err != nil {
		t.Fatalf("cron %v --help: %v", args, err)
	}
	return out.String()
}

// TestCronHelpListsTheTargetsThatShip: `cron --help` and `cron add
// --help` name every delivery target the job checks accept, and each
// target they name, filled in, is accepted.
func TestCronHelpListsTheTargetsThatShip(t *testing.T) {
	examples := map[string]string{
		"local": "local", "webhook:<url>": "webhook:https://example.com/hook", "telegram:<chat id>": "telegram:-100123",
		"slack:<channel id>": "slack:C0123ABCD", "discord:<channel id>": "discord:1234567890123456789", "sms:<phone number>": "sms:+15551234567", "whatsapp:<WhatsApp id>": "whatsapp:15551234567", "home": "home", "origin": "origin", "email:<address>": "email:ops@example.com",
	}
	for name, example := range examples {
		if err := cronjob.CheckDeliver([]string{example}); err != nil {
			t.Errorf("%s (%s) is refused: %v", name, example, err)
		}
	}
	// The refusal of an unknown target names every kind there is.
	err := cronjob.CheckDeliver([]string{"carrier-pigeon:42"})
	if err == nil {
		t.Fatal("an unknown target was accepted")
	}
	for _, kind := range []string{"local", "home", "origin", "webhook:", "telegram:", "slack:", "discord:", "sms:", "whatsapp:", "email:"} {
		if !strings.Contains(err.Error(), kind) {
			t.Errorf("the refusal %q does not name %s: the help's list is out of date", err, kind)
		}
	}
	for _, args := range [][]string{nil, {"add"}} {
		help := cronHelp(t, args...)
		for name := range examples {
			if !strings.Contains(help, "\n  "+name+" ") {
				t.Errorf("cron %v --help does not list %s:\n%s", args, name, help)
			}
		}
	}
	if add := cronHelp(t, "add"); !strings.Contains(add, "telegram:<chat id>, slack:<channel id>, discord:<channel id>, sms:<phone number>, whatsapp:<WhatsApp id>, home or email:<address>") {
		t.Errorf("the --deliver flag's help is out of date:\n%s", add)
	}
}

// TestCronHelpSaysWhichCatchUpApplies: the help names the default catch-up
// policy and what each policy does.
func TestCronHelpSaysWhichCatchUpApplies(t *testing.T) {
	help := cronHelp(t)
	for _, want := range []string{"ticks when it starts", "last (the default)", "all runs every one", "none runs only a slot of the current minute"} {
		if !strings.Contains(strings.Join(strings.Fields(help), " "), want) {
			t.Errorf("cron --help lacks %q:\n%s", want, help)
		}
	}
}
