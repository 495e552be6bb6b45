package runner

import (
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/validator"
)

// compileValidator compiles the $jsonSchema of a collection's validator.
func compileValidator(c *migration.Collection) error {
	schema, ok := jsonSchemaOf(c.Validator)
	if !ok {
		return fmt.Errorf("validator of %q has no $jsonSchema document", c.Name)
	}
	_, err := validator.Compile(schema)
	return err
}

// jsonSchemaOf returns the $jsonSchema document of a validator.
func jsonSchemaOf(v bson.D) (bson.D, bool) {
	for _, e := range v {
		if e.Key == "$jsonSchema" {
			d, ok := e.Value.(bson.D)
			return d, ok
		}
	}
	return nil, false
}

func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
