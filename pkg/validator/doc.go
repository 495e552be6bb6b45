// Package validator implements MongoDB's $jsonSchema dialect: JSON Schema
// draft 4 plus bsonType, without $ref, $schema, default, definitions,
// format, id and type: integer.
//
// [Compile] checks a schema against exactly that dialect, so a schema
// MongoDB would refuse at deploy time is refused at review time (mongomig
// lint), with the JSON pointer of every offending keyword.
//
// The package imports nothing of mongomig's and neither the CLI, colour nor
// sandbox packages, so application code may link it.
package validator
