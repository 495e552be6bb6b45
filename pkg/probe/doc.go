// Package probe owns what mongomig knows about the server it talks to:
// its version and topology ([Server]), which capabilities it has
// ([Probe]: validators, whether create keeps its options, each
// $jsonSchema keyword and bsonType alias, $jsonSchema queries, pipeline
// updates, transactions, change streams, guarded writes), and how to read
// its answers (error codes, [ServerMessage], [Transient],
// [RefusesDocument]).
//
// Invariants: a capability is found by trying it, never by the server's
// name or version (guarded writes, which one write cannot show, are the
// exception and say so); [Probe] writes only to a scratch database of its
// own, mongomig_probe_<random>, which it drops before returning, so the
// target database is never read or written; a refusal by the server is a
// capability that is unavailable (or not permitted) with the server's
// answer, while a network failure, timeout or cancellation is an error.
// The package never prints or exits.
package probe
