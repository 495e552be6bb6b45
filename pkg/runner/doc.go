// Package runner applies migrations to a MongoDB database and combines the
// lower packages into the checks the command line offers.
//
// This first part holds [Lint], which checks a migration directory without
// a database (file format, numbering, $jsonSchema dialect), and [Probe],
// which reports a server's version, topology and the capabilities mongomig
// relies on. Results are plain data with JSON tags; the package never
// prints.
package runner
