// Package cli is mongomig's command line: one file per command, each
// parsing flags into an options struct, calling the library (pkg/...) and
// rendering the result as text or JSON. Errors become exit codes in one
// place ([Main]); nothing else here exits.
package cli
