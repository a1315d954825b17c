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
