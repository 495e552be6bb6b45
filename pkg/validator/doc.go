// Package validator implements MongoDB's $jsonSchema dialect: JSON Schema
// draft 4 plus bsonType, without $ref, $schema, default, definitions,
// format, id and type: integer.
//
// [Compile] checks a schema against exactly that dialect, so a schema
// MongoDB would refuse at deploy time is refused at review time (mongomig
// lint), with the JSON pointer of every offending keyword.
//
// [Schema.Validate] decides as MongoDB does: enum and uniqueItems compare
// values with MongoDB's unordered-fields comparator (documents equal
// whatever their field order, arrays in order, numbers exactly across
// types), minimum, maximum and multipleOf compare exactly, and a valid
// document costs no allocation. A bug inside Validate is reported as a
// [Failure] with rule [RuleInternal] naming the schema's JSON pointer, not
// a panic.
//
// The package imports nothing of mongomig's and neither the CLI, colour nor
// sandbox packages, so application code may link it.
package validator
