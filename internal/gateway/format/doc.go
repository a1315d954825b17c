// Package format turns the Markdown a model writes into the formatting
// dialects of chat platforms, and splits long replies into messages that
// each stay within the platform's size limit and each parse on their own.
//
// # Pipeline
//
// Model text is hostile: it may hold any bytes, unbalanced markup, control
// characters or megabytes of text. It goes through three stages:
//
//  1. Sanitising: invalid UTF-8 becomes U+FFFD, CR and CRLF become LF, and
//     every other C0/C1 control character except TAB and LF is dropped.
//  2. Parsing with goldmark (CommonMark plus the GFM extensions: tables,
//     strikethrough, task lists and bare-URL linkify) into goldmark's AST,
//     which is lowered into a flat list of styled runs: text with a set of
//     attributes (bold, italic, strike, code, link URL, block quote) or a
//     preformatted block with a language. Headings become bold lines, list
//     items become "• " or "1. " lines, tables become an aligned
//     preformatted block, images become links, raw HTML becomes text, and
//     links survive only for http(s) (and, for Telegram, tg://) URLs.
//     Newlines always stand in runs of their own that carry no inline style,
//     so no inline entity ever spans a line.
//  3. Serialising the runs for one flavour. Inline attributes are layered
//     in a fixed order (quote, link, bold, italic, strike, code) and opened
//     and closed with a stack, so the output is always properly nested, and
//     all text is escaped for the context it lands in.
//
// # Splitting
//
// Split works on the runs, before serialisation, never on rendered text.
// Each part is a slice of the runs, serialised on its own, so every
// entity open in a part is closed at its end and reopened at the start of
// the next one (a code block keeps its language, a link keeps its URL): a
// part is exactly as valid as a whole rendering. The part is chosen
// greedily: the longest run slice whose serialisation fits the limit is
// found by binary search over rune boundaries, then the break is moved back
// to the last paragraph break, else line break, else space (not inside a
// code block), provided that keeps at least a third of the part; failing
// that the part is hard-split at a rune boundary that does not separate a
// combining mark, variation selector or zero-width joiner from its base.
// Whitespace at a break is dropped; nothing else is lost. If not even one
// rune fits with its markup (a link with a URL longer than the limit), that
// stretch is written without markup rather than cut.
//
// Lengths are measured on the serialised string in UTF-16 code units. For
// Telegram, whose limit counts the text after entity parsing, this is
// conservative: markup and escapes are counted although Telegram would not
// count them. For Slack UTF-16 units are never fewer than characters.
//
// # Limits
//
// TelegramLimit is 4096, the Bot API's limit for a message text.
// SlackLimit is 3000, the limit of a section block's mrkdwn text: a plain
// chat.postMessage text may hold 40000 characters, but Slack truncates
// long messages in the client and blocks are the form in which mrkdwn
// renders reliably, so parts are sized for one section block each.
// Limits below MinLimit are raised to MinLimit so that any single rune
// with its escape always fits.
//
// # Slack
//
// Slack mrkdwn has no escape for its markers, only &amp; &lt; &gt;. All of
// &, < and > in model text are escaped, so no <!channel>, <@U123> or link
// can be forged. A run of backticks in text or inside a code block gets a
// zero-width space between each pair so no ``` can open or close a block,
// and a backtick inside inline code is replaced by U+02CB (ˋ). Slack only
// honours *, _ and ~ at word boundaries, so emphasis inside a word may show
// its markers. Messages should be sent without link_names or parse=full.
//
// # Discord
//
// Discord reads Markdown: bold is **, italic *, strikethrough ~~, code `
// and fenced blocks, links [text](url) (the URL's parentheses, spaces,
// angle brackets and @ percent-encoded). Every Markdown marker in model text, and
// < and @, which start mentions (<@id>, <#channel>, @everyone), is escaped
// with a backslash; a backtick inside inline code becomes U+02CB (ˋ), and
// backticks inside a code block are kept apart by zero-width spaces so no
// fence can close it. Spaces at the edges of a styled stretch go outside
// its markers, which Discord only reads when they touch text. DiscordLimit
// is 2000, the limit of a message's content. Messages should still be sent
// with no mentions allowed: the escapes keep markup out, the setting keeps
// pings out.
package format
