package api

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMarkdownKeepsModelTextInert runs the page's Markdown renderer
// (web/markdown.js) in Node on hostile model text: the only elements in
// its output are the renderer's own, links go to http(s) only, and no
// attribute but a link's fixed ones appears.
func TestMarkdownKeepsModelTextInert(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node here; e2e TestWebPage checks the renderer in Chromium")
	}
	inputs := []string{
		"<script>alert(1)</script>", `<img src=x onerror="alert(1)">`, "[x](javascript:alert(1))",
		`[a"b](https://e.com/" onmouseover="alert(1))`, "[`c`](http://e.com)", "[x](http://a`b`)",
		"**<b>bold</b>**", "```\n<script>x</script>\n```", "# <h1 onclick=x>", "> <iframe>",
		"- [l](data:text/html,<script>x</script>)", "see https://x.com/a?b=1&c=2\"><script>", "\u0000\u00000\u0000",
		"__a__ *b* _c_ `d` [e](https://f.org)",
	}
	data, _ := json.Marshal(inputs)
	script := `global.window = global; require(process.argv[1]);
const inputs = JSON.parse(process.argv[2]);
process.stdout.write(JSON.stringify(inputs.map(t => global.TalariaMarkdown.render(t))));`
	path, err := filepath.Abs("web/markdown.js")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "-e", script, path, string(data))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var rendered []string
	if err := json.Unmarshal(out, &rendered); err != nil {
		t.Fatalf("node printed %q: %v", out, err)
	}
	tag := regexp.MustCompile(`<(/?)([a-zA-Z0-9]+)([^>]*)>`)
	allowed := map[string]bool{"p": true, "br": true, "strong": true, "em": true, "code": true, "pre": true, "a": true,
		"ul": true, "ol": true, "li": true, "blockquote": true, "hr": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true}
	link := regexp.MustCompile(`^ href="https?://[^"<>\s]*" target="_blank" rel="noopener noreferrer"$`)
	for i, html := range rendered {
		if strings.ContainsRune(html, 0) {
			t.Errorf("%q rendered with a placeholder left: %q", inputs[i], html)
		}
		for _, m := range tag.FindAllStringSubmatch(html, -1) {
			name, attrs := strings.ToLower(m[2]), m[3]
			switch {
			case !allowed[name]:
				t.Errorf("%q rendered a <%s>: %s", inputs[i], name, html)
			case name == "a" && m[1] == "" && !link.MatchString(attrs):
				t.Errorf("%q rendered a link %q: %s", inputs[i], attrs, html)
			case name != "a" && strings.TrimSpace(attrs) != "" && !(name == "code" && strings.HasPrefix(attrs, ` class="language-`)):
				t.Errorf("%q rendered <%s%s>: %s", inputs[i], name, attrs, html)
			}
		}
	}
}
