package format

import (
	"fmt"
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// checkDiscord reads s as Discord reads Markdown (CommonMark with
// strikethrough): no raw HTML (a mention or a tag) may appear, every code
// fence is closed, and emphasis, links and code are only where the
// rendering put them. It returns the text a reader sees.
func checkDiscord(s string) (string, error) {
	if n := strings.Count("\n"+s, "\n```"); n%2 != 0 {
		return "", fmt.Errorf("unbalanced ``` (%d fences)", n)
	}
	if err := scanDiscord(s); err != nil {
		return "", err
	}
	src := []byte(s)
	doc := md.Parser().Parse(text.NewReader(src))
	var vis strings.Builder
	err := ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			if n.Type() == ast.TypeBlock {
				vis.WriteByte('\n')
			}
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.RawHTML:
			return ast.WalkStop, fmt.Errorf("raw HTML %q", n.Segments.Value(src))
		case *ast.HTMLBlock:
			return ast.WalkStop, fmt.Errorf("an HTML block %q", n.Lines().Value(src))
		case *ast.AutoLink:
			vis.Write(n.Label(src))
			return ast.WalkSkipChildren, nil
		case *ast.Text:
			vis.Write(n.Segment.Value(src))
			if n.SoftLineBreak() || n.HardLineBreak() {
				vis.WriteByte('\n')
			}
		case *ast.String:
			vis.Write(n.Value)
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			lines := n.Lines()
			for i := range lines.Len() {
				seg := lines.At(i)
				vis.Write(seg.Value(src))
			}
			return ast.WalkSkipChildren, nil
		case *east.Strikethrough, *ast.Emphasis, *ast.Link, *ast.CodeSpan:
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		return "", err
	}
	return strings.ReplaceAll(vis.String(), string(zwsp), ""), nil
}

// scanDiscord reads s as Discord's parser would see mentions and links:
// outside code blocks and code spans, every < and @ must be escaped (a
// mention is <@id>, <@&role>, <#channel>, </cmd:id>, @everyone, @here),
// every link's destination must be http(s), and no part may end in a lone
// backslash or an open code span.
func scanDiscord(s string) error {
	inFence := false
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for i := 0; i < len(line); i++ {
			switch c := line[i]; c {
			case '\\':
				if i+1 == len(line) {
					return fmt.Errorf("a lone backslash ends a line: %q", line)
				}
				i++
			case '`':
				run := 1
				for i+run < len(line) && line[i+run] == '`' {
					run++
				}
				end := strings.Index(line[i+run:], strings.Repeat("`", run))
				if end < 0 {
					return fmt.Errorf("an open code span: %q", line[i:])
				}
				i += run + end + run - 1
			case '<', '@':
				return fmt.Errorf("an unescaped %c: %q", c, line[i:])
			case ']':
				if strings.HasPrefix(line[i:], "](") {
					dest := line[i+2:]
					if !strings.HasPrefix(dest, "http://") && !strings.HasPrefix(dest, "https://") {
						return fmt.Errorf("a link to %.30q", dest)
					}
					end := strings.IndexByte(dest, ')')
					if end < 0 {
						return fmt.Errorf("an open link destination: %q", dest)
					}
					i += 2 + end
				}
			}
		}
	}
	return nil
}

// TestScanDiscord: the checker itself sees mentions and bad links.
func TestScanDiscord(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"<@123>", "hi @everyone", "<#9>", "</x:1>", "[a](javascript:alert(1))", "x\\", "`open"} {
		if scanDiscord(bad) == nil {
			t.Errorf("scanDiscord(%q) found nothing", bad)
		}
	}
	for _, good := range []string{"\\<\\@123\\>", "`<@1>`", "```\n<@1> @here\n```", "[a](https://x/@y)", "plain"} {
		if err := scanDiscord(good); err != nil {
			t.Errorf("scanDiscord(%q) = %v", good, err)
		}
	}
}

// TestDiscordMarkdown: what a model writes reaches Discord as Markdown
// Discord reads back to the same text: markup where the model meant it,
// and none where its text only holds marker characters or mentions.
func TestDiscordMarkdown(t *testing.T) {
	t.Parallel()
	tests := []struct{ md, want string }{
		{"Some **bold _it_** and `code`", "Some **bold** ***it*** and `code`"},
		{"a*b*c _d_ ~e~ <@123> @everyone <#9> <t:1:R>", `a*b*c *d* ~~e~~ \<\@123\> \@everyone \<\#9\> \<t:1:R\>`},
		{"[link](http://x.y/a_(b))", "[link](http://x.y/a_%28b%29)"},
		{"`co`de`", "`co`de\\`"},
		{"1. first\n2. second", "1\\. first\n2\\. second"},
		{"a \\*star\\* and 2 * 3", `a \*star\* and 2 \* 3`},
		{"```go\nx := \"```\"\n```", "```go\nx := \"`\u200b`\u200b`\"\n```"},
	}
	for _, tt := range tests {
		got := Render(tt.md, FlavourDiscord)
		if got != tt.want {
			t.Errorf("Render(%q) =\n%s\nwant\n%s", tt.md, got, tt.want)
		}
		if _, err := checkDiscord(got); err != nil {
			t.Errorf("Render(%q) does not read back: %v", tt.md, err)
		}
	}
	for _, s := range fuzzSeeds {
		assertSplit(t, s, 0, FlavourDiscord)
		assertSplit(t, s, 64, FlavourDiscord)
		assertSplit(t, s, 17, FlavourDiscord)
	}
}

func FuzzDiscordSplit(f *testing.F) { fuzzSplit(f, FlavourDiscord) }
