package cli

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzRedactURI: a connection string built from a user, a password, a
// host and an option, with the user info written in each way a user may
// escape it (user:PASSWORD@ with the password escaped, the user info
// escaped as one piece, user%3APASSWORD@), under either scheme. The
// display must be the URI with the password replaced by ***, and a
// message quoting the password in any escaping must lose it (issue 25,
// item 6: the one-piece form was printed in full).
func FuzzRedactURI(f *testing.F) {
	f.Add("ada", "S3cret-Pa55", "db.example:27017", "rs0", uint8(0))
	f.Add("ada", "S3cret-Pa55", "db.example", "", uint8(1))
	f.Add("ada", "p@ss:w/rd?#%", "h1:1,h2:2", "tls", uint8(2))
	f.Add("", "only-a-password", "localhost", "a@b", uint8(3))
	f.Add("u s", "pa ss+wo%rd", "[::1]:27017", "admin", uint8(1))
	f.Fuzz(func(t *testing.T, user, password, host, option string, form uint8) {
		user = strings.ReplaceAll(user, ":", "") // a colon in the user name is the separator
		if password == "" || strings.ContainsAny(host, "@/?") || credentialShaped(option) {
			return // no password, another URI, or an option redacted too
		}
		scheme := "mongodb://"
		if form&4 != 0 {
			scheme = "mongodb+srv://"
		}
		var info, shown string
		switch form % 4 {
		case 0: // user:PASSWORD, each escaped
			info, shown = url.QueryEscape(user)+":"+url.QueryEscape(password), url.QueryEscape(user)+":***"
		case 1: // escaped as one piece
			info, shown = url.QueryEscape(user)+"%3A"+url.QueryEscape(password), url.QueryEscape(user)+"%3A***"
		case 2: // one piece, lower-case escape, path escaping
			info, shown = url.PathEscape(user)+"%3a"+url.PathEscape(password), url.PathEscape(user)+"%3a***"
		default: // the user name as a path escape, the password as a query escape
			info, shown = url.PathEscape(user)+":"+url.QueryEscape(password), url.PathEscape(user)+":***"
		}
		if form%4 >= 1 && form%4 <= 2 && strings.Contains(info, ":") || strings.ContainsAny(info, "/?@") {
			return // escaping left a separator or a delimiter in the user info: another URI
		}
		tail := host + "/app"
		if option != "" {
			tail += "?appName=" + url.QueryEscape(option)
		}
		uri := scheme + info + "@" + tail
		want := scheme + shown + "@" + tail
		if got := redactURI(uri); got != want {
			t.Fatalf("redactURI(%q)\n got %q\nwant %q", uri, got, want)
		}
		for _, form := range []string{password, url.QueryEscape(password), url.PathEscape(password)} {
			if len(form) < minSecretLen || strings.Contains(uri[:len(scheme)]+tail, form) || strings.Contains(user, form) {
				continue // too short to search for in free text, or not only the password's
			}
			msg := `connection() error: auth error for "` + user + ":" + form + `" on ` + uri
			if got := redactErr(msg, uri); strings.Contains(got, form) {
				t.Fatalf("redactErr(%q) left the password %q: %q", msg, form, got)
			}
		}
	})
}
