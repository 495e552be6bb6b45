package inspect

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/bsonx"
)

// What may leave the database in a baseline or a report: field names that
// are names (not data used as keys), string values that are labels (not
// secrets, personal data or free text), and _ids that identify without
// saying anything about a person.

// dataShapedKey reports whether a field name looks like data used as a
// key (an email, a session id, a date, a number) rather than a name a
// schema declares, or cannot be declared in a migration file (a name
// starting with "$" reads as Extended JSON; control characters).
func dataShapedKey(k string) bool {
	if k == "" || len(k) > 40 || strings.HasPrefix(k, "$") || !utf8.ValidString(k) {
		return true
	}
	digits := 0
	for i, r := range k {
		switch {
		case unicode.IsDigit(r):
			if i == 0 {
				return true
			}
			digits++
		case r == '_' || unicode.IsLetter(r):
		default:
			return true // '@', '.', '-', ':', spaces, control characters
		}
	}
	return digits >= 4 || looksSecret(k)
}

// displayKey is a field name as a printed path holds it: "<key>" for a
// data-shaped one, quoted when it is not printable.
func displayKey(k string) string {
	if dataShapedKey(k) {
		return "<key>"
	}
	return k
}

// mapLike reports whether the documents o describes are used as maps
// (keys are data): o became dynamic, a key is data-shaped, or more than
// half of more than 16 keys were each seen in one document only. Their
// schema is bsonType object without properties, and no path below them
// is printed.
func (o *objStats) mapLike() bool {
	if o.mapKind == 0 {
		o.mapKind = 2
		if o.isMap() {
			o.mapKind = 1
		}
	}
	return o.mapKind == 1
}

func (o *objStats) isMap() bool {
	if o.dynamic {
		return true
	}
	once := 0
	for _, k := range o.order {
		if dataShapedKey(k) {
			return true
		}
		if o.fields[k].present <= 1 {
			once++
		}
	}
	return len(o.order) > 16 && 2*once > len(o.order) && o.count > 1
}

// sensitiveWords are the words of field names whose values are secrets,
// personal data, free text or open sets: never an enum, whatever was seen
// (and neither are the fields under them).
var sensitiveWords = map[string]bool{
	"password": true, "passwd": true, "pwd": true, "pass": true, "passphrase": true, "secret": true, "secrets": true,
	"token": true, "key": true, "apikey": true, "pin": true, "otp": true, "salt": true, "hash": true, "nonce": true,
	"credential": true, "credentials": true, "auth": true, "session": true, "sessions": true, "cookie": true, "private": true,
	"signature": true, "cert": true, "ssn": true, "sin": true, "tax": true, "passport": true, "license": true, "licence": true,
	"email": true, "mail": true, "phone": true, "mobile": true, "tel": true, "telephone": true, "fax": true,
	"card": true, "cc": true, "cvv": true, "cvc": true, "pan": true, "iban": true, "bic": true, "swift": true,
	"address": true, "addr": true, "street": true, "city": true, "zip": true, "zipcode": true, "postal": true, "postcode": true,
	"birth": true, "birthday": true, "birthdate": true, "dob": true, "name": true, "firstname": true, "lastname": true,
	"surname": true, "username": true, "login": true, "ip": true, "geo": true, "location": true,
	"bio": true, "note": true, "notes": true, "comment": true, "comments": true, "description": true, "message": true,
	"text": true, "body": true, "title": true, "summary": true,
	"tag": true, "tags": true, "keyword": true, "keywords": true,
	"id": true, "uuid": true, "guid": true, "ref": true, "sku": true, "code": true, "number": true, "serial": true,
}

// sensitiveName reports whether a field's name says its values are
// secrets, personal data, free text, identifiers or an open set.
func sensitiveName(name string) bool {
	for _, w := range nameWords(name) {
		if sensitiveWords[w] || strings.HasSuffix(w, "key") || strings.HasSuffix(w, "token") || strings.HasSuffix(w, "uuid") ||
			strings.HasSuffix(w, "password") || strings.HasSuffix(w, "secret") {
			return true
		}
	}
	return false
}

// nameWords splits camelCase, snake_case and kebab-case into lowercase
// words ("apiKey" -> api, key; "user_ID" -> user, id).
func nameWords(name string) []string {
	var words []string
	var cur []rune
	prevLower := false
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for _, r := range name {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			flush()
		}
		cur = append(cur, r)
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	flush()
	return words
}

// secretPrefixes open API keys and tokens of common services.
var secretPrefixes = []string{"sk_", "pk_", "rk_", "whsec_", "ghp_", "gho_", "github_pat_", "xox", "akia", "aiza", "eyj"}

func looksSecret(s string) bool {
	l := strings.ToLower(s)
	for _, p := range secretPrefixes {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// maxLabelLength is the longest label: longer strings are free text.
const maxLabelLength = 32

// isLabel reports whether s looks like a label a schema may enumerate:
// one to three words of letters only (no digits: codes, PINs, phone and
// card numbers; no '@': emails), each lowercase, UPPERCASE or
// Capitalized (random strings mix case), joined by one of "_-. ".
func isLabel(s string) bool {
	if s == "" || len(s) > maxLabelLength || looksSecret(s) {
		return false
	}
	words := strings.FieldsFunc(s, func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == ' ' })
	if len(words) == 0 || len(words) > 3 || strings.Contains(s, "  ") || strings.Count(s, " ")+strings.Count(s, "_")+strings.Count(s, "-")+strings.Count(s, ".") != len(words)-1 {
		return false
	}
	for _, w := range words {
		if !labelWord(w) {
			return false
		}
	}
	return true
}

func labelWord(w string) bool {
	upper, lower := 0, 0
	for i, r := range w {
		switch {
		case !unicode.IsLetter(r):
			return false
		case unicode.IsUpper(r):
			if i > 0 && lower > 0 {
				return false // "aZkQ": case changes inside a word
			}
			upper++
		default:
			lower++
		}
	}
	return upper == 0 || lower == 0 || upper == 1 && unicode.IsUpper([]rune(w)[0])
}

// numericTypes are the BSON number types, in the order a schema lists them.
var numericTypes = []string{"int", "long", "double", "decimal"}

// numberFamily widens the number types among names (most frequent
// first) to the set a following write may store: drivers write a whole
// number as int (or long when it does not fit, or when the field is a
// 64-bit integer in the application), a computed one as double, so any of
// int, long and double is accepted where one was seen; decimal only where
// decimal was seen. The family takes the place of the most frequent
// number type.
func numberFamily(names []string) []string {
	var out []string
	added, decimal := false, false
	for _, n := range names {
		decimal = decimal || n == "decimal"
	}
	for _, n := range names {
		if !isNumeric(n) {
			out = append(out, n)
			continue
		}
		if !added {
			out = append(out, "int", "long", "double")
			if decimal {
				out = append(out, "decimal")
			}
			added = true
		}
	}
	return out
}

func isNumeric(t string) bool {
	for _, n := range numericTypes {
		if t == n {
			return true
		}
	}
	return false
}

// safeID is an _id as a report or a baseline may print it: ObjectIds,
// numbers, dates, UUIDs and short identifier strings as they are; a
// string that may be personal data or a secret (an email, a phone, card
// or social security number, a key, free text) and any other type hidden
// behind its kind and length.
func safeID(v bson.RawValue) ExtJSON {
	switch v.Type {
	case bson.TypeObjectID, bson.TypeInt32, bson.TypeInt64, bson.TypeDateTime, bson.TypeTimestamp:
		return bsonx.ExtJSONOf(v)
	case bson.TypeBinary:
		if st, b, ok := v.BinaryOK(); ok && (st == 3 || st == 4) && len(b) == 16 {
			return bsonx.ExtJSONOf(v)
		}
	case bson.TypeString:
		s := v.StringValue()
		if shownID(s) {
			return bsonx.ExtJSONOf(v)
		}
		return ExtJSON(strconv.Quote(fmt.Sprintf("(hidden: a string _id of %d characters)", utf8.RuneCountInString(s))))
	}
	return ExtJSON(strconv.Quote(fmt.Sprintf("(hidden: a %s _id)", bsonTypeName(v.Type))))
}

// shownID reports whether a string _id may be printed: at most 40
// letters, digits, '_' and '-', fewer than 7 digits, no known key prefix.
func shownID(s string) bool {
	if s == "" || len(s) > 40 || looksSecret(s) {
		return false
	}
	digits := 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '_' || r == '-' || r < utf8.RuneSelf && unicode.IsLetter(r):
		default:
			return false
		}
	}
	return digits < 7
}
