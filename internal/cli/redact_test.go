package cli

import (
	"strings"
	"testing"
)

// TestRedactURI covers every credential the driver's URI syntax can carry:
// each secret is gone from the display and from a message quoting it in
// any escaping, and what is not secret stays readable.
func TestRedactCredentials(t *testing.T) {
	for _, c := range []struct {
		uri, want string
		secrets   []string
	}{
		{"mongodb://ada:S3cret-Pa55@db.example:27017/app", "mongodb://ada:***@db.example:27017/app", []string{"S3cret-Pa55"}},
		{"mongodb://ada:p%40ss%2Fw0rd@h1:1,h2:2/app?replicaSet=rs0", "mongodb://ada:***@h1:1,h2:2/app?replicaSet=rs0", []string{"p%40ss%2Fw0rd", "p@ss/w0rd"}},
		{"mongodb://ada:pa@ss@host/app", "mongodb://ada:***@host/app", []string{"pa@ss"}},
		{"mongodb://ada:p?ssw0rd@host/app?appName=a@b", "mongodb://ada:***@host/app?appName=a@b", []string{"p?ssw0rd"}},
		{
			"mongodb://AKIAEXAMPLEKEY:wJalrXUtnFEMI@cluster.example/app?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:FwoGZXIvYXdzEJr%2F%2Bsession",
			"mongodb://***:***@cluster.example/app?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:***",
			[]string{"AKIAEXAMPLEKEY", "wJalrXUtnFEMI", "FwoGZXIvYXdzEJr/+session", "FwoGZXIvYXdzEJr%2F%2Bsession"},
		},
		{
			"mongodb://host/app?authMechanism=GSSAPI&authMechanismProperties=SERVICE_NAME:mongo,SECRET_THING:abcdefgh",
			"mongodb://host/app?authMechanism=GSSAPI&authMechanismProperties=SERVICE_NAME:mongo,SECRET_THING:***",
			[]string{"abcdefgh"},
		},
		{
			"mongodb://host/app?tls=true&tlsCertificateKeyFile=/etc/k.pem&tlsCertificateKeyFilePassword=KeyPassw0rd",
			"mongodb://host/app?tls=true&tlsCertificateKeyFile=/etc/k.pem&tlsCertificateKeyFilePassword=***",
			[]string{"KeyPassw0rd"},
		},
		{"mongodb://host/?ssl=true&sslClientCertificateKeyPassword=OldKeyPass", "mongodb://host/?ssl=true&sslClientCertificateKeyPassword=***", []string{"OldKeyPass"}},
		{
			"mongodb+srv://ada:pw12345@c.example/app?apiToken=tok-123456;clientSecret=sec-7890&password=pw-abcdef&appName=x",
			"mongodb+srv://ada:***@c.example/app?apiToken=***&clientSecret=***&password=***&appName=x",
			[]string{"pw12345", "tok-123456", "sec-7890", "pw-abcdef"},
		},
		{"mongodb://host:27017/app?serverSelectionTimeoutMS=200", "mongodb://host:27017/app?serverSelectionTimeoutMS=200", nil},
		{"mongodb://ada:what?ever@host/app", "mongodb://ada:***@host/app", []string{"what?ever"}},
		{"localhost:27017", "localhost:27017", nil},
		// The user info escaped as one piece (issue 25, item 6): printed whole before.
		{"mongodb://ada%3AS3cret-Pa55@db.example/app", "mongodb://ada%3A***@db.example/app", []string{"S3cret-Pa55", "ada:S3cret-Pa55"}},
		{"mongodb://ada%3ap%40ss%3Aw0rd@db.example/app", "mongodb://ada%3a***@db.example/app", []string{"p%40ss%3Aw0rd", "p@ss:w0rd"}},
	} {
		if got := redactURI(c.uri); got != c.want {
			t.Errorf("redactURI(%s)\n got %s\nwant %s", c.uri, got, c.want)
		}
		for _, s := range c.secrets {
			msg := "error parsing uri " + c.uri + `: invalid value "` + s + `"`
			if got := redactErr(msg, c.uri); strings.Contains(got, s) {
				t.Errorf("redactErr left %q in %q", s, got)
			}
		}
	}
	if got := redactErr("user ada: host db.example", "mongodb://ada:pw@db.example/app"); got != "user ada: host db.example" {
		t.Errorf("redactErr changed a message without secrets: %q", got)
	}
}
