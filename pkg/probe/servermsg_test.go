package probe

import "testing"

// TestTrimServerInternals uses the messages FerretDB v1.24 actually sends:
// Go stack frames and pointer dumps go, the meaning stays.
func TestTrimServerInternals(t *testing.T) {
	for in, want := range map[string]string{
		`(NotImplemented) create: support for field "validator" with value &{map[$jsonSchema:1] [{0x2c3889471740 $jsonSchema}] false 0} is not implemented yet`:                                                                                                                                              `(NotImplemented) create: support for field "validator" is not implemented yet`,
		`(NotImplemented) create: support for field "collation" with value &{map[locale:1] [{fr locale}] false 0} is not implemented yet`:                                                                                                                                                                    `(NotImplemented) create: support for field "collation" is not implemented yet`,
		`(InternalError) [msg_update.go:133 handler.(*Handler).updateDocument] [update.go:114 common.UpdateDocument] [collection.go:191 sqlite.(*collection).UpdateAll] [collection.go:177 sqlite.(*collection).UpdateAll.func1] constraint failed: UNIQUE constraint failed: index 'x_fd0c5087_a_1' (2067)`: `(InternalError) constraint failed: UNIQUE constraint failed: index 'x_fd0c5087_a_1' (2067)`,
		"(NotImplemented) `collMod` command is not implemented yet":                  "(NotImplemented) `collMod` command is not implemented yet",
		`write exception: write errors: [Cannot create field 'b' in element {a: 1}]`: `write exception: write errors: [Cannot create field 'b' in element {a: 1}]`,
		`truncated &{map[a:1] [{0xc0001`:                                             `truncated`,
		"value &{x} here\n  next line [a.go:1 f] kept":                               "value here\n  next line kept",
		"pointer 0xc000123456 gone":                                                  "pointer gone",
	} {
		if got := TrimServerInternals(in); got != want {
			t.Errorf("TrimServerInternals(%s)\n got %s\nwant %s", in, got, want)
		}
	}
}
