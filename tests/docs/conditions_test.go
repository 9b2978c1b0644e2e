// Package docs checks that the documentation says what the code does.
package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
)

// TestConditionsDocumented: every condition type and reason the API declares
// (apis/keystone/v1beta1/conditions.go, lib-common's where it reuses them) is named, in
// backquotes, in docs/conditions.md, the contract.
func TestConditionsDocumented(t *testing.T) {
	root := repoRoot(t)
	libCommon := consts(t, moduleDir(t, root, "github.com/openstack-k8s-operators/lib-common/modules/common")+"/condition", nil)
	declared := consts(t, filepath.Join(root, "apis", "keystone", "v1beta1"), libCommon)
	if len(declared) < 40 {
		t.Fatalf("read %d condition types and reasons only: the parser missed them", len(declared))
	}
	data, err := os.ReadFile(filepath.Join(root, "docs", "conditions.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name, value := range declared {
		if !strings.Contains(string(data), "`"+value+"`") {
			t.Errorf("%s (`%s`) is not in docs/conditions.md, the contract's list of types and reasons", name, value)
		}
	}
}

// consts returns the string constants of type Type or Reason declared in dir's Go
// files (not tests), by name; a value naming a constant of lib-common's condition
// package (libCommon) is resolved. Without libCommon, every string constant.
func consts(t *testing.T, dir string, libCommon map[string]string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			if gen, ok := decl.(*ast.GenDecl); ok && gen.Tok == token.CONST {
				for _, spec := range gen.Specs {
					addConsts(out, spec.(*ast.ValueSpec), libCommon)
				}
			}
		}
	}
	return out
}

// addConsts adds to out the string values of vs (consts).
func addConsts(out map[string]string, vs *ast.ValueSpec, libCommon map[string]string) {
	if libCommon != nil && !typed(vs.Type) && !fromLibCommon(vs.Values) {
		return
	}
	for i, name := range vs.Names {
		if i >= len(vs.Values) {
			continue
		}
		switch v := vs.Values[i].(type) {
		case *ast.BasicLit:
			if s, err := strconv.Unquote(v.Value); err == nil && v.Kind == token.STRING {
				out[name.Name] = s
			}
		case *ast.SelectorExpr:
			if s, ok := libCommon[v.Sel.Name]; ok {
				out[name.Name] = s
			}
		}
	}
}

// typed tells whether a constant is declared with type Type or Reason (condition.Type,
// condition.Reason).
func typed(expr ast.Expr) bool {
	sel, ok := expr.(*ast.SelectorExpr)
	return ok && (sel.Sel.Name == "Type" || sel.Sel.Name == "Reason")
}

// fromLibCommon tells whether untyped constants take lib-common's condition types
// (condition.InputReadyCondition): condition types of the API too.
func fromLibCommon(values []ast.Expr) bool {
	for _, v := range values {
		sel, ok := v.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "condition" {
			return false
		}
	}
	return len(values) > 0
}

// moduleDir is where the module path is in the module cache, at the version the module
// in dir requires (controlplane.ModuleDir, which downloads it).
func moduleDir(t *testing.T, dir, path string) string {
	t.Helper()
	got, err := controlplane.ModuleDir(dir, path)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
