package lint

import (
	"fmt"
	"strings"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/validator"
)

// compileValidator compiles the $jsonSchema of a collection's validator.
func compileValidator(c *migration.Collection) error {
	schema, ok := c.JSONSchema()
	if !ok {
		return fmt.Errorf("validator of %q has no $jsonSchema document", c.Name)
	}
	_, err := validator.Compile(schema)
	return err
}

func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
