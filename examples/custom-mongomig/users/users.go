// Package users is the application's own code: the Go upgrade function its
// migrations name. The application imports it too, with pkg/version, to
// upgrade documents lazily.
package users

import (
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// SplitName turns {name: "Ada Lovelace"} into {name: {first: "Ada", last:
// "Lovelace"}}. A name that is already a document is left alone.
func SplitName(doc bson.D) (bson.D, error) {
	for i, e := range doc {
		if e.Key != "name" {
			continue
		}
		switch v := e.Value.(type) {
		case bson.D:
			return doc, nil
		case string:
			first, last, _ := strings.Cut(strings.TrimSpace(v), " ")
			doc[i].Value = bson.D{{Key: "first", Value: first}, {Key: "last", Value: last}}
			return doc, nil
		default:
			return nil, fmt.Errorf("name is a %T, not a string", v)
		}
	}
	return doc, nil
}
