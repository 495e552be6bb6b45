package depcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writes are the driver's methods that change a database.
var writes = []string{"RunCommand", "RunCommandCursor", "CreateCollection", "CreateView", "Drop", "DropOne", "DropAll", "CreateOne", "CreateMany",
	"InsertOne", "InsertMany", "UpdateOne", "UpdateMany", "UpdateByID", "ReplaceOne", "DeleteOne", "DeleteMany", "BulkWrite",
	"FindOneAndUpdate", "FindOneAndReplace", "FindOneAndDelete"}

// TestRunnerHelpersSendNothing: the packages below pkg/runner that plan
// what it sends (docs/architecture.md, floor 6) call no driver method that
// writes, so pkg/runner stays the only sender of create, collMod,
// createIndexes and dropIndexes; internal/expiry sends deletes only.
func TestRunnerHelpersSendNothing(t *testing.T) {
	allowed := map[string][]string{
		"internal/lifecycleplan": nil, "internal/enforce": nil, "internal/declared": nil, "internal/windowplan": nil,
		"internal/statusread": nil, "internal/expiry": {"DeleteMany"},
	}
	for pkg, ok := range allowed {
		files, err := filepath.Glob(filepath.Join("..", "..", pkg, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", pkg, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				call, isCall := n.(*ast.CallExpr)
				if !isCall {
					return true
				}
				if sel, isSel := call.Fun.(*ast.SelectorExpr); isSel && slices.Contains(writes, sel.Sel.Name) && !slices.Contains(ok, sel.Sel.Name) {
					t.Errorf("%s calls %s: only pkg/runner sends (docs/architecture.md)", f, sel.Sel.Name)
				}
				return true
			})
		}
	}
}
