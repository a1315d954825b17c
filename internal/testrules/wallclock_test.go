package testrules

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// allowMark starts the comment that lets one comparison of an elapsed time
// stand; a reason must follow it.
const allowMark = "wallclock:"

// wallClockBounds returns, as "file:line: expression", every ordering
// comparison (<, >, <=, >=) in file that has an elapsed time on one side:
// a call of time.Since, time.Until or a Sub method, anything chained on such
// a call (.Round, .Seconds...), or a variable the same function assigned
// one to. Functions taking a *testing.B (benchmarks and their helpers) are
// skipped, and so is a comparison with a `// wallclock: <reason>` comment on
// its line or the line above. Pure.
func wallClockBounds(fset *token.FileSet, file *ast.File) []string {
	allowed := allowedLines(fset, file)
	var found []string
	for _, decl := range file.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil || takesB(fn.Type) {
			continue
		}
		elapsed := elapsedNames(fn.Body)
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if lit, ok := n.(*ast.FuncLit); ok && takesB(lit.Type) {
				return false
			}
			be, ok := n.(*ast.BinaryExpr)
			if !ok || !ordering(be.Op) {
				return true
			}
			if !measures(be.X, elapsed) && !measures(be.Y, elapsed) {
				return true
			}
			pos := fset.Position(be.OpPos)
			if allowed[pos.Line] || allowed[pos.Line-1] {
				return true
			}
			found = append(found, fmt.Sprintf("%s:%d: %s", pos.Filename, pos.Line, render(fset, be)))
			return true
		})
	}
	return found
}

// allowedLines returns the lines of file that carry a `// wallclock:`
// comment with a reason.
func allowedLines(fset *token.FileSet, file *ast.File) map[int]bool {
	lines := map[int]bool{}
	for _, cg := range file.Comments {
		for _, c := range cg.List {
			text := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
			if reason, ok := strings.CutPrefix(text, allowMark); ok && strings.TrimSpace(reason) != "" {
				lines[fset.Position(c.Slash).Line] = true
			}
		}
	}
	return lines
}

// takesB reports whether a function has a *testing.B parameter.
func takesB(ft *ast.FuncType) bool {
	for _, p := range ft.Params.List {
		star, ok := p.Type.(*ast.StarExpr)
		if !ok {
			continue
		}
		if sel, ok := star.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "B" {
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "testing" {
				return true
			}
		}
	}
	return false
}

func ordering(op token.Token) bool {
	return op == token.LSS || op == token.GTR || op == token.LEQ || op == token.GEQ
}

// elapsedNames returns the names body assigns an elapsed time to (for an
// element of a slice or map, the slice's or map's name), and the names
// assigned from those (an element, a slice appended to), until no more are
// found.
func elapsedNames(body *ast.BlockStmt) map[string]bool {
	names := map[string]bool{}
	for grown := true; grown; {
		grown = false
		ast.Inspect(body, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok || len(as.Lhs) != len(as.Rhs) {
				return true
			}
			for i, rhs := range as.Rhs {
				if !measures(rhs, names) && !appendsElapsed(rhs, names) {
					continue
				}
				if id := rootIdent(as.Lhs[i]); id != nil && id.Name != "_" && !names[id.Name] {
					names[id.Name], grown = true, true
				}
			}
			return true
		})
	}
	return names
}

// appendsElapsed reports whether e is append(s, ...) with an elapsed time
// among the values appended.
func appendsElapsed(e ast.Expr, elapsed map[string]bool) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	if fn, ok := call.Fun.(*ast.Ident); !ok || fn.Name != "append" {
		return false
	}
	for _, arg := range call.Args[1:] {
		if measures(arg, elapsed) {
			return true
		}
	}
	return false
}

// measures reports whether e is an elapsed time: an elapsed call or a name
// in elapsed, possibly indexed, converted or chained on (.Seconds()).
func measures(e ast.Expr, elapsed map[string]bool) bool {
	switch x := e.(type) {
	case *ast.ParenExpr:
		return measures(x.X, elapsed)
	case *ast.BinaryExpr: // arithmetic on an elapsed time: span / n
		arith := x.Op == token.ADD || x.Op == token.SUB || x.Op == token.MUL || x.Op == token.QUO
		return arith && (measures(x.X, elapsed) || measures(x.Y, elapsed))
	case *ast.Ident:
		return elapsed[x.Name]
	case *ast.IndexExpr:
		return measures(x.X, elapsed)
	case *ast.CallExpr:
		if elapsedCall(x) {
			return true
		}
		if sel, ok := x.Fun.(*ast.SelectorExpr); ok {
			return measures(sel.X, elapsed)
		}
		if fn, ok := x.Fun.(*ast.Ident); ok && numericTypes[fn.Name] && len(x.Args) == 1 {
			return measures(x.Args[0], elapsed) // a conversion such as float64(d)
		}
	}
	return false
}

// numericTypes are the conversions an elapsed time goes through.
var numericTypes = map[string]bool{"int": true, "int64": true, "uint64": true, "float32": true, "float64": true}

// elapsedCall reports whether e is time.Since(..), time.Until(..), a one-
// argument Sub method call, or a method chained on one of them.
func elapsedCall(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "time" {
		return sel.Sel.Name == "Since" || sel.Sel.Name == "Until"
	}
	if sel.Sel.Name == "Sub" && len(call.Args) == 1 {
		return true
	}
	return elapsedCall(sel.X)
}

// rootIdent returns the variable an assignment target names: x for x,
// x[i] and x[i][j].
func rootIdent(e ast.Expr) *ast.Ident {
	for {
		switch x := e.(type) {
		case *ast.Ident:
			return x
		case *ast.IndexExpr:
			e = x.X
		default:
			return nil
		}
	}
}

func render(fset *token.FileSet, e ast.Expr) string {
	start, end := fset.Position(e.Pos()), fset.Position(e.End())
	if start.Line != end.Line {
		return "(a comparison over several lines)"
	}
	src, err := os.ReadFile(start.Filename)
	if err != nil || end.Offset > len(src) {
		return "(comparison)"
	}
	return string(src[start.Offset:end.Offset])
}

func TestWallClockBoundsFinds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want int
	}{
		{"since in an if", `start := time.Now(); if time.Since(start) > time.Second { t.Fatal() }`, 1},
		{"since in the if's init", `if d := time.Since(start); d > 2*time.Second { t.Fatal() }`, 1},
		{"assigned before", "elapsed := time.Since(start)\nif elapsed >= limit { t.Fatal() }", 1},
		{"sub of two times", `if gap := b.Sub(a); gap < 7*time.Second || gap > 30*time.Second { t.Fatal() }`, 2},
		{"until", `if time.Until(deadline) < time.Second { t.Fatal() }`, 1},
		{"chained", `if time.Since(start).Seconds() > 2 { t.Fatal() }`, 1},
		{"converted", `if float64(time.Since(start)) > 2e9 { t.Fatal() }`, 1},
		{"a mean", "span := b.Sub(a)\nif mean := span / 4; mean < time.Second { t.Fatal() }", 1},
		{"slice element", "lat[i] = time.Since(began)\nif lat[0] > time.Second { t.Fatal() }", 1},
		{"appended, then picked", "lat = append(lat, now.Sub(sent))\nworst := lat[len(lat)-1]\nif worst > time.Second { t.Fatal() }", 1},
		{"a count of elapsed times", "lat = append(lat, time.Since(s))\nif len(lat) < 3 { t.Fatal() }", 0},
		{"bound on the left", `if time.Second < time.Since(start) { t.Fatal() }`, 1},
		{"in a closure", `t.Run("x", func(t *testing.T) { if time.Since(s) > time.Second { t.Fatal() } })`, 1},
		{"logged only", `t.Logf("took %v", time.Since(start))`, 0},
		{"a give-up deadline", `for time.Now().Before(deadline) { time.Sleep(time.Millisecond) }`, 0},
		{"durations compared that are not elapsed", `if backoff(3) > 10*time.Second { t.Fatal() }`, 0},
		{"equality", `if r.At.Sub(base) != time.Hour { t.Fatal() }`, 0},
		{"allowed on the line", `if time.Since(s) < time.Second { // wallclock: a lower bound
			t.Fatal() }`, 0},
		{"allowed on the line above", "// wallclock: a lower bound\nif time.Since(s) < time.Second { t.Fatal() }", 0},
		{"a mark without a reason", "// wallclock:\nif time.Since(s) < time.Second { t.Fatal() }", 1},
		{"a benchmark's closure", `b.Run("x", func(b *testing.B) { if time.Since(s) > time.Second { b.Fatal() } })`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := findIn(t, "func TestX(t *testing.T) {\n"+tt.body+"\n}\n")
			if len(got) != tt.want {
				t.Errorf("found %d, want %d: %q", len(got), tt.want, got)
			}
		})
	}
}

func TestWallClockBoundsSkipsBenchmarks(t *testing.T) {
	t.Parallel()
	src := `func BenchmarkX(b *testing.B) {
	start := time.Now()
	if time.Since(start) > time.Second { b.Fatal() }
}
func measure(b *testing.B, start time.Time) bool { return time.Since(start) > time.Second }
`
	if got := findIn(t, src); len(got) != 0 {
		t.Errorf("found %q in benchmarks", got)
	}
}

// findIn runs wallClockBounds on a test file holding decls.
func findIn(t *testing.T, decls string) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x_test.go")
	src := "package x\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\n" + decls
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	return wallClockBounds(fset, file)
}

// TestNoTestAssertsAWallClockTime reads every _test.go file of the module.
func TestNoTestAssertsAWallClockTime(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	fset := token.NewFileSet()
	var found []string
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return fmt.Errorf("parse %s: %w", path, err)
		}
		files++
		for _, f := range wallClockBounds(fset, file) {
			rel, _ := filepath.Rel(root, f)
			found = append(found, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d test files under %s: not the module's tree", files, root)
	}
	if len(found) > 0 {
		t.Errorf("%d comparisons of an elapsed time against a bound in tests (a load makes them fail: measure in a benchmark, wait on a state, or say why with `// wallclock: <reason>`):\n%s",
			len(found), strings.Join(found, "\n"))
	}
}

// moduleRoot returns the directory of the module's go.mod, above this one.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
