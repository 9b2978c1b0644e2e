package docs

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// managerFlag is one flag of the manager, as cmd/main.go defines it: its name, the
// FlagSet method that defines it (StringVar, DurationVar, ...) and its default as the
// flag package prints it (flag.Flag.DefValue); "$NAME" for a default read from the
// environment variable NAME.
type managerFlag struct {
	name, method, def string
	// value is the default itself (nil for an environment variable's).
	value constant.Value
}

// TestFlagsTable: docs/install.md's table of the manager's flags has a row for every
// flag cmd/main.go defines, with the default the code gives it, and no row for a flag
// the code does not define.
func TestFlagsTable(t *testing.T) {
	root := repoRoot(t)
	flags := managerFlags(t, root)
	const page = "docs/install.md"
	rows := map[string]tableRow{}
	for _, row := range tableRows(readAll(t, root, page), "| `--") {
		name := strings.Trim(row.cells[0], "`")
		rows[strings.TrimPrefix(name, "--")] = row
		if _, ok := flags[strings.TrimPrefix(name, "--")]; !ok {
			t.Errorf("%s:%d names %s, which cmd/main.go does not define: remove the row", page, row.line, name)
		}
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no table of the manager's flags (rows starting with | `--)", page)
	}
	for name, f := range flags {
		row, ok := rows[name]
		switch {
		case !ok:
			t.Errorf("%s: the flags table has no row for --%s (cmd/main.go, default %q): add one", page, name, f.def)
		case len(row.cells) < 2:
			t.Errorf("%s:%d: the row of --%s has no default", page, row.line, name)
		case f.def == "" && row.cells[1] != "none":
			t.Errorf("%s:%d: --%s has no default in cmd/main.go; the row says %s: write none", page, row.line, name, row.cells[1])
		case f.def != "" && row.cells[1] != "`"+f.def+"`":
			t.Errorf("%s:%d: --%s defaults to `%s` in cmd/main.go; the row says %s: fix the row", page, row.line, name, f.def, row.cells[1])
		}
	}
}

// TestFlagDefaultsInProse: wherever the README or a page of docs/ gives a manager flag's
// default in prose ("`--orphan-grace` (default 5m: ..." or "`--orphan-grace` (5 minutes by
// default)"), it is the default cmd/main.go gives that flag.
func TestFlagDefaultsInProse(t *testing.T) {
	root := repoRoot(t)
	flags := managerFlags(t, root)
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	claims := 0
	for _, path := range append(pages, filepath.Join(root, "README.md")) {
		rel, _ := filepath.Rel(root, path)
		text := readAll(t, root, rel)
		for name, f := range flags {
			q := regexp.QuoteMeta("`--" + name + "`")
			for _, re := range []*regexp.Regexp{
				regexp.MustCompile(q + `\s+\(default\s+([^):;,]+)`),
				regexp.MustCompile(q + `\s+\(([^()]*?)\s+by\s+default\)`),
			} {
				for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
					claims++
					said := strings.Trim(text[m[2]:m[3]], "` ")
					line := strings.Count(text[:m[0]], "\n") + 1
					same, err := sameDefault(f, said)
					switch {
					case err != nil:
						t.Errorf("%s:%d: cannot read %q as the default of --%s (%v): write it as cmd/main.go prints it, %q",
							rel, line, said, name, err, f.def)
					case !same:
						t.Errorf("%s:%d: says --%s defaults to %q; cmd/main.go's default is %q: fix the doc", rel, line, name, said, f.def)
					}
				}
			}
		}
	}
	if claims < 5 {
		t.Fatalf("found %d defaults of manager flags in the docs' prose: the search is broken", claims)
	}
}

// sameDefault tells whether said, a default as the docs write it ("5m", "5 minutes",
// "200", "false", "off"), is f's default.
func sameDefault(f managerFlag, said string) (bool, error) {
	if f.value == nil {
		return said == f.def, nil
	}
	switch f.method {
	case "DurationVar":
		d, err := parseDuration(said)
		if err != nil {
			return false, err
		}
		want, _ := constant.Int64Val(f.value)
		return int64(d) == want, nil
	case "BoolVar":
		b, ok := map[string]bool{"true": true, "on": true, "false": false, "off": false}[said]
		if !ok {
			return false, fmt.Errorf("not true, false, on or off")
		}
		return b == constant.BoolVal(f.value), nil
	case "IntVar", "Int64Var", "UintVar", "Uint64Var", "Float64Var":
		n, err := strconv.ParseFloat(strings.ReplaceAll(said, ",", ""), 64)
		if err != nil {
			return false, err
		}
		want, _ := constant.Float64Val(f.value)
		return n == want, nil
	}
	return said == f.def, nil
}

// parseDuration reads a duration as Go writes it (5m0s, 5m) or in words (5 minutes, 30 s).
func parseDuration(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	m := regexp.MustCompile(`^(\d+)\s*(s|seconds?|min|minutes?|h|hours?)$`).FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("not a duration")
	}
	n, _ := strconv.Atoi(m[1])
	unit := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour}[m[2][0]]
	return time.Duration(n) * unit, nil
}

// managerFlags reads the flags cmd/main.go's commandLine.bind defines on its FlagSet
// (fs.StringVar(&..., "name", default, usage) and kin), with their defaults evaluated
// from the source: literals, constants of this module's packages, time's units and
// arithmetic on them, os.Getenv("NAME"). controller-runtime's zap flags (BindFlags) are
// not the manager's own.
func managerFlags(t *testing.T, root string) map[string]managerFlag {
	t.Helper()
	ev := newConstEval(t, root)
	dir := filepath.Join(root, "cmd")
	file := ev.file(dir, "main.go")
	var bind *ast.FuncDecl
	for _, d := range file.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "bind" && fn.Recv != nil {
			bind = fn
		}
	}
	if bind == nil {
		t.Fatal("cmd/main.go has no method bind: where are the manager's flags defined now? Move this test with them")
	}
	flags := map[string]managerFlag{}
	ast.Inspect(bind.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel := flagDefinition(call)
		if sel == nil {
			return true
		}
		lit, ok := call.Args[1].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			t.Errorf("cmd/main.go: a flag whose name is not a string literal: %s", ev.pos(call))
			return true
		}
		name, _ := strconv.Unquote(lit.Value)
		f := managerFlag{name: name, method: sel.Sel.Name}
		if env := getenvArg(call.Args[2]); env != "" {
			f.def = "$" + env
		} else {
			v, err := ev.eval(dir, file, call.Args[2])
			if err != nil {
				t.Errorf("cmd/main.go: the default of --%s: %v", name, err)
				return true
			}
			f.value, f.def = v, defValue(t, sel.Sel.Name, v)
		}
		flags[name] = f
		return true
	})
	if len(flags) < 10 {
		t.Fatalf("read %d flags from cmd/main.go only: the parser missed them", len(flags))
	}
	return flags
}

// flagDefinition is call's fs.<Type>Var selector when call defines a flag on the flag
// set fs, else nil.
func flagDefinition(call *ast.CallExpr) *ast.SelectorExpr {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || !strings.HasSuffix(sel.Sel.Name, "Var") || len(call.Args) < 3 {
		return nil
	}
	if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "fs" {
		return nil
	}
	return sel
}

// getenvArg is NAME when x is os.Getenv("NAME"), else "".
func getenvArg(x ast.Expr) string {
	call, ok := x.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return ""
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Getenv" {
		return ""
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok {
		return ""
	}
	s, _ := strconv.Unquote(lit.Value)
	return s
}

// defValue is v as the flag package prints the default of a flag the FlagSet method
// defines (flag.Flag.DefValue).
func defValue(t *testing.T, method string, v constant.Value) string {
	t.Helper()
	switch method {
	case "StringVar":
		return constant.StringVal(v)
	case "BoolVar":
		return strconv.FormatBool(constant.BoolVal(v))
	case "DurationVar":
		n, _ := constant.Int64Val(v)
		return time.Duration(n).String()
	case "Float64Var":
		f, _ := constant.Float64Val(v)
		return strconv.FormatFloat(f, 'g', -1, 64)
	case "IntVar", "Int64Var", "UintVar", "Uint64Var":
		return v.ExactString()
	}
	t.Fatalf("cmd/main.go defines a flag with %s, which this test cannot print: teach defValue", method)
	return ""
}

// constEval evaluates constant expressions of this module's Go source, without
// compiling it (cmd is package main, which a test cannot import).
type constEval struct {
	t      *testing.T
	root   string
	module string
	fset   *token.FileSet
	parsed map[string][]*ast.File
}

func newConstEval(t *testing.T, root string) *constEval {
	mod := regexp.MustCompile(`(?m)^module (\S+)$`).FindStringSubmatch(readAll(t, root, "go.mod"))
	if mod == nil {
		t.Fatal("go.mod names no module")
	}
	return &constEval{t: t, root: root, module: mod[1], fset: token.NewFileSet(), parsed: map[string][]*ast.File{}}
}

// files are the Go files of dir, tests aside.
func (e *constEval) files(dir string) []*ast.File {
	if files, ok := e.parsed[dir]; ok {
		return files
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(paths) == 0 {
		e.t.Fatalf("no Go files in %s", dir)
	}
	var files []*ast.File
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(e.fset, path, nil, 0)
		if err != nil {
			e.t.Fatal(err)
		}
		files = append(files, f)
	}
	e.parsed[dir] = files
	return files
}

// file is the file of dir named name.
func (e *constEval) file(dir, name string) *ast.File {
	for _, f := range e.files(dir) {
		if filepath.Base(e.fset.Position(f.Package).Filename) == name {
			return f
		}
	}
	e.t.Fatalf("no %s in %s", name, dir)
	return nil
}

func (e *constEval) pos(n ast.Node) string {
	p := e.fset.Position(n.Pos())
	rel, _ := filepath.Rel(e.root, p.Filename)
	return fmt.Sprintf("%s:%d", rel, p.Line)
}

// timeUnits are package time's constants, in nanoseconds.
var timeUnits = map[string]time.Duration{"Nanosecond": time.Nanosecond, "Microsecond": time.Microsecond,
	"Millisecond": time.Millisecond, "Second": time.Second, "Minute": time.Minute, "Hour": time.Hour}

// eval is the value of x, an expression of file in package directory dir.
func (e *constEval) eval(dir string, file *ast.File, x ast.Expr) (constant.Value, error) {
	switch x := x.(type) {
	case *ast.BasicLit:
		return constant.MakeFromLiteral(x.Value, x.Kind, 0), nil
	case *ast.ParenExpr:
		return e.eval(dir, file, x.X)
	case *ast.UnaryExpr:
		v, err := e.eval(dir, file, x.X)
		if err != nil {
			return nil, err
		}
		return constant.UnaryOp(x.Op, v, 0), nil
	case *ast.BinaryExpr:
		l, err := e.eval(dir, file, x.X)
		if err != nil {
			return nil, err
		}
		r, err := e.eval(dir, file, x.Y)
		if err != nil {
			return nil, err
		}
		return constant.BinaryOp(l, x.Op, r), nil
	case *ast.Ident:
		switch x.Name {
		case "true", "false":
			return constant.MakeBool(x.Name == "true"), nil
		}
		return e.lookup(dir, x.Name)
	case *ast.SelectorExpr:
		pkg, ok := x.X.(*ast.Ident)
		if !ok {
			break
		}
		path := importPath(file, pkg.Name)
		switch {
		case path == "time":
			if d, ok := timeUnits[x.Sel.Name]; ok {
				return constant.MakeInt64(int64(d)), nil
			}
		case strings.HasPrefix(path, e.module+"/"):
			return e.lookup(filepath.Join(e.root, strings.TrimPrefix(path, e.module+"/")), x.Sel.Name)
		}
	}
	return nil, fmt.Errorf("%s: not a constant this test can evaluate", e.pos(x))
}

// lookup is the value of the constant name declared in package directory dir.
func (e *constEval) lookup(dir, name string) (constant.Value, error) {
	for _, f := range e.files(dir) {
		for _, d := range f.Decls {
			gen, ok := d.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if n.Name != name {
						continue
					}
					if i >= len(vs.Values) {
						return nil, fmt.Errorf("%s: constant %s has no value of its own (iota?)", e.pos(n), name)
					}
					return e.eval(dir, f, vs.Values[i])
				}
			}
		}
	}
	return nil, fmt.Errorf("no constant %s in %s", name, dir)
}

// importPath is the path file imports as name.
func importPath(file *ast.File, name string) string {
	for _, imp := range file.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		as := filepath.Base(path)
		if imp.Name != nil {
			as = imp.Name.Name
		}
		if as == name {
			return path
		}
	}
	return ""
}

// tableRow is a row of a Markdown table: its cells, trimmed, and its line (from 1).
type tableRow struct {
	cells []string
	line  int
}

// tableRows are the rows of text's tables whose line starts with prefix.
func tableRows(text, prefix string) []tableRow {
	var rows []tableRow
	for i, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(strings.TrimSpace(line), "|"), " | ") {
			cells = append(cells, strings.TrimSpace(c))
		}
		rows = append(rows, tableRow{cells: cells, line: i + 1})
	}
	return rows
}

// TestDeploymentArgsDocumented: the arguments docs/install.md says the Deployment passes
// the manager are config/manager's, every one of them a flag cmd/main.go defines.
func TestDeploymentArgsDocumented(t *testing.T) {
	root := repoRoot(t)
	flags := managerFlags(t, root)
	var args []string
	for _, doc := range strings.Split(readAll(t, root, "config/manager/manager.yaml"), "\n---\n") {
		var obj struct {
			Kind string
			Spec struct {
				Template struct {
					Spec struct {
						Containers []struct{ Args []string }
					}
				}
			}
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("config/manager/manager.yaml: %v", err)
		}
		if obj.Kind == "Deployment" && len(obj.Spec.Template.Spec.Containers) > 0 {
			args = obj.Spec.Template.Spec.Containers[0].Args
		}
	}
	if len(args) == 0 {
		t.Fatal("config/manager/manager.yaml: no Deployment with arguments")
	}
	const page = "docs/install.md"
	text := readAll(t, root, page)
	m := regexp.MustCompile("The Deployment passes `([^`]+)`").FindStringSubmatch(strings.ReplaceAll(text, "\n", " "))
	if m == nil {
		t.Fatalf("%s no longer says which arguments the Deployment passes (\"The Deployment passes `...`\")", page)
	}
	said := strings.Fields(m[1])
	if strings.Join(said, " ") != strings.Join(args, " ") {
		t.Errorf("%s says the Deployment passes %q; config/manager/manager.yaml passes %q: fix the doc", page, said, args)
	}
	for _, arg := range args {
		name, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		if _, ok := flags[name]; !ok {
			t.Errorf("config/manager/manager.yaml passes %s, which cmd/main.go does not define", arg)
		}
	}
}
