package injection

import (
	"regexp"
	"sort"
	"strings"
)

// re compiles a case-insensitive pattern.
func re(pattern string) *regexp.Regexp { return regexp.MustCompile(`(?i)` + pattern) }

// overrideRules recognise attempts to replace the agent's instructions.
// Each needs the words that make it an override ("previous instructions",
// not just "ignore"), so ordinary prose does not match.
var overrideRules = []rule{
	{name: "ignore-instructions", kind: Override, re: re(`\bignore\s+(?:all\s+|any\s+|every\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+|these\s+|those\s+)?` +
		`(?:previous|prior|above|earlier|preceding|foregoing|original|initial|system|developer|safety|existing)\s+(?:\w+\s+)?` +
		`(?:instructions?|directions?|prompts?|rules|guidelines|directives|messages|context|commands)\b`)},
	{name: "ignore-all-instructions", kind: Override, re: re(`\bignore\s+(?:all|any|your|every)\s+(?:(?:other|the)\s+)?(?:instructions|directions|prompts|guidelines|directives)\b`)},
	{name: "ignore-everything-above", kind: Override, re: re(`\b(?:ignore|forget|disregard)\s+(?:everything|all|anything)\s+` +
		`(?:you\s+(?:were|have\s+been)\s+told|(?:written\s+|said\s+)?(?:above|before|previously|so\s+far))\b`)},
	{name: "disregard-instructions", kind: Override, re: re(`\bdisregard\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+|these\s+)?(?:\w+\s+)?` +
		`(?:instructions?|directions?|prompts?|rules|guidelines|directives)\b`)},
	{name: "forget-instructions", kind: Override, re: re(`\bforget\s+(?:all\s+|any\s+|everything\s+)?(?:of\s+)?(?:your|the|previous|prior|above|earlier)\s+(?:\w+\s+)?` +
		`(?:instructions|rules|guidelines|training|prompts?|directives)\b`)},
	{name: "system-prompt-override", kind: Override, re: re(`\bsystem\s+prompt\s+override\b|\boverride\s+(?:the\s+|your\s+|all\s+|any\s+)?` +
		`(?:system\s+prompt|(?:previous\s+|prior\s+)?instructions|safety\s+(?:rules|guidelines|checks|settings)|guardrails)\b`)},
	{name: "role-hijack", kind: Override, re: re(`\byou\s+are\s+now\s+(?:no\s+longer\b|in\s+(?:developer|god|admin|jailbreak|jailbroken|dan|unrestricted|sudo|root)\s+mode\b|` +
		`(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken|evil|malicious|rogue)\b|(?:an?\s+)?(?:different|new)\s+(?:ai|assistant|agent|model|persona)\b|dan\b|free\s+(?:of|from)\b)`)},
	{name: "no-restrictions", kind: Override, re: re(`\b(?:(?:act|behave|respond|answer)\s+as\s+(?:if|though)|pretend\s+(?:that\s+)?)\s*you\s+(?:have|had|are\s+under)\s+no\s+` +
		`(?:restrictions|rules|limits|limitations|guidelines|filters)\b`)},
	{name: "hide-from-user", kind: Override, reject: followedByTo, re: re(`\b(?:do\s+not|don't|dont|never)\s+(?:tell|inform|alert|notify)\s+(?:the\s+)?user\b|` +
		`\bwithout\s+(?:telling|informing|notifying|alerting)\s+(?:the\s+)?user\b|\b(?:keep|hide)\s+(?:this|it|these)\s+(?:secret\s+|hidden\s+)?from\s+(?:the\s+)?user\b`)},
	{name: "new-instructions", kind: Override, re: re(`\b(?:new|updated|real|actual|revised)\s+(?:system\s+)?(?:instructions|prompt)\s*:`)},
	{name: "reveal-system-prompt", kind: Override, re: re(`\b(?:reveal|print|output|repeat|leak|disclose)\s+(?:your|the)\s+(?:full\s+|entire\s+|hidden\s+)?` +
		`(?:system\s+prompt|initial\s+instructions|hidden\s+instructions)\b`)},
	{name: "bypass-safety", kind: Override, re: re(`\b(?:bypass|circumvent|evade)\s+(?:the\s+|any\s+|all\s+|your\s+)?` +
		`(?:approvals?|safety|guardrails?|content\s+(?:filters?|policy)|sandbox|restrictions)\b`)},
	{name: "chat-template-token", kind: Override, re: re(`<\|(?:im_start|im_end|system|user|assistant|endoftext|begin_of_text|start_header_id|end_header_id|eot_id)\|>|\[/?INST\]|<</?SYS>>`)},
}

// secretVar matches a shell variable whose name says it holds a secret:
// $API_KEY, ${GITHUB_TOKEN}, $DB_PASSWORD (not $KEYBOARD or $MONKEY).
const secretVar = `\$\{?(?:\w*_)?(?:API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|SECRET(?:_?KEY)?|TOKEN|PASSWORD|PASSWD|CREDENTIALS?|KEY)(?:_\w*)?(?:\}|\b)`

// networkCommand matches a command that sends data over the network.
const networkCommand = `\b(?:curl|wget|nc|ncat|netcat|socat|telnet|invoke-webrequest|invoke-restmethod)\b`

// exfiltrationRules recognise commands that would send secrets away.
var exfiltrationRules = []rule{
	{name: "secret-to-network", kind: Exfiltration, re: re(networkCommand + `[^\n]*` + secretVar)},
	{name: "environment-to-network", kind: Exfiltration, re: re(`\b(?:env|printenv)\s*\|[^\n]*` + networkCommand)},
	{name: "read-credentials", kind: Exfiltration, reject: publicKey,
		re: re(`\b(?:cat|less|more|head|tail|base64|xxd|od|strings|cp|scp|rsync|curl|wget|nc|gpg|tar|zip)\b[^\n]*?` +
			`(?:(?:~|\$HOME|\$\{HOME\}|/home/[\w.-]+|/root)/\.(?:ssh/(?:id_[\w-]+|[\w-]*_key)|aws/credentials|netrc|gnupg|docker/config\.json|kube/config|git-credentials|pgpass)|/etc/shadow)`)},
}

// publicKey rejects a credentials match that names a public key
// (~/.ssh/id_ed25519.pub), which is meant to be shared.
func publicKey(text string, loc []int) bool {
	return strings.HasPrefix(text[loc[1]:], ".pub")
}

// followedByTo rejects "do not tell the user to ...", which is advice on
// how to help the user, not a request to hide something from them.
func followedByTo(text string, loc []int) bool {
	rest := strings.TrimLeft(text[loc[1]:], " \t\n")
	return strings.HasPrefix(strings.ToLower(rest), "to ")
}

// toolDirective rejects a match that starts inside a hyphenated word such
// as prettier-ignore or eslint-disable, a directive to a tool.
func toolDirective(text string, loc []int) bool {
	return loc[0] > 0 && text[loc[0]-1] == '-'
}

// elementRules recognise HTML elements hidden from a rendered view.
var elementRules = []rule{
	{name: "hidden-element", kind: HiddenElement, re: re(`<\s*[a-z][a-z0-9]*\b[^>]*(?:\bstyle\s*=\s*["'][^"']*(?:display\s*:\s*none|visibility\s*:\s*hidden)|\shidden(?:\s|>|=|/))`)},
}

// commentRules recognise, inside an HTML comment, what only makes sense
// there as a hidden instruction: a request to ignore or bypass something,
// or an order addressed to an AI agent.
var commentRules = []rule{
	{name: "ignore-in-comment", kind: HiddenComment, reject: toolDirective, re: re(`(?s)\b(?:ignore|disregard|forget|override|bypass)\b.{0,80}?` +
		`\b(?:instructions?|rules|guidelines|prompts?|safety|restrictions|approvals?)\b`)},
	{name: "order-to-agent", kind: HiddenComment, re: re(`(?s)\b(?:ai|assistant|agent|llm|chatbot|language\s+model|claude|gpt|copilot)s?\b.{0,60}?` +
		`\b(?:must|should|shall|always|never|needs?\s+to|have\s+to|is\s+to|are\s+to)\b`)},
}

// instructionRules recognise, in text that instructs the agent in every
// session or task (SOUL.md, skills), orders to run a download or to read
// secrets: legitimate in a project's install notes, not in standing
// instructions.
var instructionRules = []rule{
	{name: "download-and-run", kind: Exfiltration, re: re(`\b(?:curl|wget|fetch|iwr|invoke-webrequest)\b[^\n|]*\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b|` +
		`\b(?:ba|z)?sh\s+(?:-c\s+)?["']?\s*(?:<\(|\$\()\s*(?:curl|wget)\b|\b(?:curl|wget)\b[^\n]*\|\s*(?:python3?|perl|ruby|node)\b`)},
	{name: "run-first", kind: Override, re: re(`\b(?:before\s+(?:anything|everything|doing\s+anything|you\s+do\s+anything)(?:\s+else)?|first\s+of\s+all|` +
		`always\s+start\s+by|at\s+the\s+start\s+of\s+every\s+(?:task|session|conversation))\b[^\n]{0,80}?\b(?:run|execute|curl|wget|download|install|send|upload)\b`)},
	{name: "read-secrets", kind: Exfiltration, re: re(`\b(?:read|print|cat|show|send|upload|post|copy|include|paste|exfiltrate)\b[^\n]{0,60}?` +
		`(?:\.env\b|\bid_(?:rsa|ed25519|ecdsa)\b|private\s+keys?|api[\s_-]?keys?|\bcredentials\b|\bpasswords?\b|\bsecrets?\b|config\.yaml|talaria\.pem|/etc/shadow)`)},
}

// ScanInstructions is Scan for standing instructions (SOUL.md, a skill):
// it also reports orders to run downloads, to run something before
// anything else, and to read or send secrets.
func ScanInstructions(text string) []Finding {
	out := Scan(text)
	_, masked := scanComments(text)
	out = append(out, matchRules(text, masked, instructionRules)...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].offset < out[j].offset })
	return out
}
