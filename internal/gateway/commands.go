package gateway

import "strings"

// Command is a chat command: "/name args".
type Command struct {
	Name string
	Args string
}

// CommandInfo describes a command for /help.
type CommandInfo struct {
	Name  string
	Usage string
	Help  string
}

// Commands are the chat commands the gateway knows, for /help and for
// telling a command from a message.
var Commands = []CommandInfo{
	{"new", "/new", "start a new session in this chat"},
	{"stop", "/stop", "interrupt the running turn"},
	{"steer", "/steer TEXT", "redirect the running turn without stopping it"},
	{"queue", "/queue TEXT", "run TEXT after the running turn"},
	{"status", "/status", "what the running turn is doing"},
	{"approve", "/approve [session|always]", "run the command waiting for approval"},
	{"deny", "/deny", "refuse the command waiting for approval"},
	{"retry", "/retry", "send the last message again"},
	{"undo", "/undo", "forget the last exchange"},
	{"usage", "/usage", "tokens used in this session"},
	{"model", "/model [NAME]", "show or set this chat's model"},
	{"compress", "/compress", "compact the conversation now"},
	{"background", "/background TEXT", "run TEXT in a session of its own; the answer comes here"},
	{"goal", "/goal GOAL", "work toward GOAL over many turns; the outcome comes here"},
	{"sessions", "/sessions", "recent sessions of this chat"},
	{"resume", "/resume ID", "go on with an earlier session"},
	{"cron", "/cron list | add SCHEDULE | PROMPT | rm NAME", "scheduled jobs; a job added here delivers to this chat"},
	{"sethome", "/sethome", "deliveries with no target come to this chat"},
	{"help", "/help", "this list"},
	{"pair", "/pair CODE", "(from someone not allowed yet, in a DM) be let in with a code from 'talaria gateway pair'"},
}

// ParseCommand reads a chat command: "/name", "/name args", or in a group
// "/name@botname args" (a command for another bot is no command here).
// ok is false for a plain message or an unknown command. Pure.
func ParseCommand(text, bot string) (Command, bool) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "/") {
		return Command{}, false
	}
	head, args, _ := strings.Cut(text[1:], " ")
	if i := strings.IndexAny(head, "\n\t"); i >= 0 {
		args = head[i+1:] + " " + args
		head = head[:i]
	}
	name, addressed, hasBot := strings.Cut(head, "@")
	if hasBot && !strings.EqualFold(addressed, bot) {
		return Command{}, false
	}
	name = strings.ToLower(name)
	for _, c := range Commands {
		if c.Name == name {
			return Command{Name: name, Args: strings.TrimSpace(args)}, true
		}
	}
	return Command{}, false
}

// HelpText lists the commands, one a line. Pure.
func HelpText() string {
	lines := make([]string, 0, len(Commands))
	for _, c := range Commands {
		lines = append(lines, c.Usage+" — "+c.Help)
	}
	return strings.Join(lines, "\n")
}
