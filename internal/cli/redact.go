package cli

import (
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/mongomig/mongomig/pkg/probe"
)

// Credentials a MongoDB connection string can carry (the driver's
// x/mongo/driver/connstring package and its auth mechanisms):
//
//   - the password of the user info (user:PASSWORD@host);
//   - the user name itself under MONGODB-AWS, where it is the access key id;
//   - authMechanismProperties values: AWS_SESSION_TOKEN, and any property
//     not known to be harmless (SERVICE_NAME, SERVICE_REALM, SERVICE_HOST,
//     CANONICALIZE_HOST_NAME, ENVIRONMENT, TOKEN_RESOURCE, ALLOWED_HOSTS);
//   - tlsCertificateKeyFilePassword and its old name
//     sslClientCertificateKeyPassword;
//   - proxyPassword (the connection string specification's; this driver
//     keeps it as an unknown option);
//   - any other option whose name looks like a credential (password,
//     secret, token, ...): the driver keeps unknown options, and a URI
//     copied from another tool may carry them;
//   - any option whose value has a credential's shape, whatever its name
//     (see credentialShaped).
//
// The redaction works on the text, without the driver's parser, so a URI
// the driver refuses is redacted too.

// harmlessMechanismProperties are authMechanismProperties keys whose values
// are names, not secrets.
var harmlessMechanismProperties = map[string]bool{
	"SERVICE_NAME": true, "SERVICE_REALM": true, "SERVICE_HOST": true, "CANONICALIZE_HOST_NAME": true,
	"ENVIRONMENT": true, "TOKEN_RESOURCE": true, "ALLOWED_HOSTS": true,
}

// secretOption reports whether a URI option (lower case) holds a credential.
func secretOption(key string) bool {
	switch key {
	case "tlscertificatekeyfilepassword", "sslclientcertificatekeypassword":
		return true
	case "tlscertificatekeyfile", "sslclientcertificatekeyfile", "tlsprivatekeyfile":
		return false // file names
	}
	for _, w := range []string{"pass", "pwd", "secret", "token", "credential", "apikey", "api_key", "accesskey", "access_key", "privatekey", "private_key", "signature"} {
		if strings.Contains(key, w) {
			return true
		}
	}
	return false
}

// minSecretLen: shorter secrets are redacted from the URI but not searched
// for in free text, where replacing every "a" would garble the message.
const minSecretLen = 4

// parsedURI is a connection string cut into its parts for display.
type parsedURI struct {
	scheme, user, password, rest, query string
	hasUser, hasPassword, hasQuery      bool
	// sep is what separates user and password as typed: ":", or "%3A"
	// when the user info was escaped as one piece (user%3APASSWORD@).
	sep     string
	awsUser bool
	// secrets are the credential values as found (escaped) in the URI.
	secrets []string
	// options is the query with secret values replaced by ***.
	options []string
}

func parseForRedaction(uri string) parsedURI {
	var p parsedURI
	rest := uri
	if i := strings.Index(uri, "://"); i >= 0 {
		p.scheme, rest = uri[:i+3], uri[i+3:]
	}
	if at := userInfoEnd(rest); at >= 0 {
		p.hasUser = true
		p.user, p.sep, p.password, p.hasPassword = cutUserInfo(rest[:at])
		rest = rest[at+1:]
	}
	p.rest, p.query, p.hasQuery = strings.Cut(rest, "?")
	if p.hasPassword {
		p.secrets = append(p.secrets, p.password)
	}
	for _, pair := range strings.FieldsFunc(p.query, func(r rune) bool { return r == '&' || r == ';' }) {
		p.options = append(p.options, p.redactOption(pair))
	}
	if p.awsUser && p.user != "" {
		p.secrets = append(p.secrets, p.user)
	}
	return p
}

// userInfoEnd finds the @ that ends the user info: the last one before
// the path, so a password with an unescaped @, / or ? is found whole; -1
// when there is none (an @ inside a query option does not count).
func userInfoEnd(rest string) int {
	first := strings.Index(rest, "@")
	if first < 0 {
		return -1
	}
	if q := strings.Index(rest, "?"); q >= 0 && q < first && strings.Contains(rest[q:first], "=") {
		return -1
	}
	end := len(rest)
	if slash := strings.Index(rest[first:], "/"); slash >= 0 {
		end = first + slash
	}
	if q := strings.Index(rest[first:], "?"); q >= 0 && first+q < end {
		end = first + q
	}
	return strings.LastIndex(rest[:end], "@")
}

// cutUserInfo splits the user info at its first ":", or, when it has
// none, at its first escaped one ("%3A", any case): user%3APASSWORD@ is a
// user info escaped as one piece, whose part after the colon is as secret
// as a password (the driver unescapes the user name to "user:PASSWORD").
func cutUserInfo(info string) (user, sep, password string, ok bool) {
	if user, password, ok = strings.Cut(info, ":"); ok {
		return user, ":", password, true
	}
	if i := strings.Index(strings.ToUpper(info), "%3A"); i >= 0 {
		return info[:i], info[i : i+3], info[i+3:], true
	}
	return info, "", "", false
}

// redactOption returns the option as it may be shown, recording its
// secrets.
func (p *parsedURI) redactOption(pair string) string {
	rawKey, rawValue, ok := strings.Cut(pair, "=")
	key := strings.ToLower(unescape(rawKey))
	value := unescape(rawValue)
	switch {
	case !ok:
		return pair
	case key == "authmechanism":
		p.awsUser = strings.EqualFold(value, "MONGODB-AWS")
		return pair
	case key == "authmechanismproperties":
		props := strings.Split(value, ",")
		shown := make([]string, len(props))
		found := false
		for i, prop := range props {
			k, v, has := strings.Cut(prop, ":")
			shown[i] = prop
			if has && v != "" && !harmlessMechanismProperties[strings.ToUpper(k)] {
				p.secrets = append(p.secrets, v)
				shown[i], found = k+":***", true
			}
		}
		if found { // also as typed (escaped), whole and per property
			p.secrets = append(p.secrets, rawValue)
			for _, prop := range strings.Split(rawValue, ",") {
				if _, v, has := strings.Cut(prop, ":"); has && v != "" {
					p.secrets = append(p.secrets, v)
				}
			}
		}
		return rawKey + "=" + strings.Join(shown, ",")
	case rawValue != "" && (secretOption(key) || credentialShaped(value)):
		p.secrets = append(p.secrets, rawValue)
		return rawKey + "=***"
	}
	return pair
}

// credentialShapes are the forms of well-known credentials: a JSON Web
// Token, an AWS access key id, GitHub and Slack tokens.
var credentialShapes = regexp.MustCompile(`^(eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*|(AKIA|ASIA)[A-Z0-9]{16}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,})$`)

// credentialShaped reports whether an option value looks like a
// credential whatever the option's name: a well-known token form, or 32
// characters or more of base64-like text mixing upper case, lower case and
// digits (no option MongoDB defines takes such a value; file names and
// hosts have a '/' or '.').
func credentialShaped(v string) bool {
	if credentialShapes.MatchString(v) {
		return true
	}
	if len(v) < 32 || strings.ContainsAny(v, "./") {
		return false
	}
	var upper, lower, digit bool
	for _, r := range v {
		switch {
		case r >= 'A' && r <= 'Z':
			upper = true
		case r >= 'a' && r <= 'z':
			lower = true
		case r >= '0' && r <= '9':
			digit = true
		case r == '+' || r == '=' || r == '_' || r == '-':
		default:
			return false
		}
	}
	return upper && lower && digit
}

func unescape(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

// redactURI returns uri for display: the password, the credentials in its
// options and, under MONGODB-AWS, the user name (the access key id) become
// ***.
func redactURI(uri string) string {
	p := parseForRedaction(uri)
	var b strings.Builder
	b.WriteString(p.scheme)
	if p.hasUser {
		switch {
		case p.awsUser && p.user != "":
			b.WriteString("***")
		default:
			b.WriteString(p.user)
		}
		if p.hasPassword {
			b.WriteString(p.sep + "***")
		}
		b.WriteString("@")
	}
	b.WriteString(p.rest)
	if p.hasQuery {
		b.WriteString("?" + strings.Join(p.options, "&"))
	}
	return b.String()
}

// redactErr removes every credential of uri from a message, in each form a
// library may quote it (as typed, unescaped, escaped), in case it did.
func redactErr(msg, uri string) string {
	if uri == "" {
		return msg
	}
	var forms []string
	for _, s := range parseForRedaction(uri).secrets {
		for _, f := range []string{s, unescape(s), pathUnescape(s), url.QueryEscape(s), url.PathEscape(s), url.QueryEscape(unescape(s)), url.PathEscape(unescape(s)), url.QueryEscape(pathUnescape(s)), url.PathEscape(pathUnescape(s))} {
			if len(f) >= minSecretLen {
				forms = append(forms, f)
			}
		}
	}
	// Longest first, so a secret containing another is removed whole.
	sort.Slice(forms, func(i, j int) bool { return len(forms[i]) > len(forms[j]) })
	for _, f := range forms {
		msg = strings.ReplaceAll(msg, f, "***")
	}
	return msg
}

func pathUnescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// cleanMessage is a message as it may be shown: without the credentials of
// uri and without what the server leaks of its implementation (FerretDB's
// Go stack frames and value dumps).
func cleanMessage(msg, uri string) string {
	return escapeControls(probe.TrimServerInternals(redactErr(msg, uri)))
}

// escapeControls writes the control characters of msg other than newline
// and tab as \xNN, so no escape sequence from a file name, a server or a
// library reaches the terminal.
func escapeControls(msg string) string {
	if !strings.ContainsFunc(msg, isControl) {
		return msg
	}
	var b strings.Builder
	for _, r := range msg {
		if isControl(r) {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isControl(r rune) bool {
	return r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f)
}
