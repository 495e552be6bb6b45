package suggest

import "testing"

func TestName(t *testing.T) {
	known := []string{"users", "orders", "customers", "logs", "Events"}
	for got, want := range map[string]string{
		"user":      "users",
		"userss":    "users",
		"costumers": "customers", // a swap and a substitution, in a long name
		"events":    "Events",
		"tags":      "", // two edits from logs: another name, not a typo
		"orderz1":   "",
		"users":     "", // itself is not a suggestion
	} {
		w, ok := Name(got, known)
		if w != want || ok != (want != "") {
			t.Errorf("Name(%q) = %q, %v; want %q", got, w, ok, want)
		}
	}
}
