// Package lazyapp is the application side of mongomig, small enough to copy
// into a service: the migrations embedded in the binary, one registry built at
// start-up, and a store of users that upgrades each document it reads,
// writes the upgrade back with a guarded delta, and stamps and validates each
// document it writes.
//
// It imports only pkg/version, the MongoDB Go driver v2 and the standard
// library, so an application that copies it links neither the mongomig
// command line nor its test server. docs/lazy-upgrades.md quotes this package;
// its test runs the guide's flow against the embedded sandbox.
package lazyapp
