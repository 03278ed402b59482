package plugin

import (
	"encoding/json"
	"testing"
)

var testCodes = Codes{NoMessage: 1, InvalidJSON: 2, Missing: 3, Invalid: 4, Unauthorized: 5}

// TestKinds: each kind accepts what jansson's type (and Janus's flags) accept, and nothing else;
// null is of no kind.
func TestKinds(t *testing.T) {
	cases := []struct {
		kind Kind
		yes  []string
		no   []string
	}{
		{String, []string{`""`, `"x"`, `"\u00e9"`}, []string{`null`, `1`, `true`, `["x"]`, `{}`}},
		{NonEmptyString, []string{`"x"`}, []string{`""`, `null`, `1`}},
		{Bool, []string{`true`, `false`}, []string{`null`, `0`, `"true"`}},
		{Integer, []string{`0`, `-3`, `9223372036854775807`}, []string{`1.0`, `1e2`, `9223372036854775808`, `"1"`, `null`}},
		{Positive, []string{`0`, `7`}, []string{`-1`, `1.5`, `null`, `true`}},
		{Array, []string{`[]`, `[1,"a"]`}, []string{`{}`, `null`, `"[]"`}},
		{Object, []string{`{}`, `{"a":1}`}, []string{`[]`, `null`}},
	}
	for _, c := range cases {
		for _, v := range c.yes {
			if !c.kind.accepts(json.RawMessage(v)) {
				t.Errorf("%s refuses %s", c.kind.name(), v)
			}
		}
		for _, v := range c.no {
			if c.kind.accepts(json.RawMessage(v)) {
				t.Errorf("%s accepts %s", c.kind.name(), v)
			}
		}
	}
}

// TestValidateOrder: the first failing parameter in the table's order is reported, missing or
// invalid, whichever comes first.
func TestValidateOrder(t *testing.T) {
	b, err := ParseBody(json.RawMessage(` {"a":"x","b":1} `), &testCodes)
	if err != nil {
		t.Fatal(err)
	}
	got := b.Validate(Param{"a", Integer, false}, Param{"c", String, true})
	if got == nil || got.Code != 4 || got.Reason != "Invalid element type (a should be an integer)" {
		t.Errorf("got %v", got)
	}
	got = b.Validate(Param{"c", String, true}, Param{"a", Integer, false})
	if got == nil || got.Code != 3 || got.Reason != "Missing mandatory element (c)" {
		t.Errorf("got %v", got)
	}
	if got = b.Validate(Param{"a", String, true}, Param{"b", Positive, true}, Param{"z", Bool, false}); got != nil {
		t.Errorf("valid body refused: %v", got)
	}
	if b.Str("a") != "x" || b.Uint("b") != 1 || b.OptBool("z") != nil || *b.OptInt("b") != 1 {
		t.Error("getters disagree with the body")
	}
	for raw, code := range map[string]int{``: 1, ` null `: 1, `[]`: 2, `"s"`: 2, "{}\v": 2, `{"a":}`: 2} {
		if _, err := ParseBody(json.RawMessage(raw), &testCodes); err == nil || err.Code != code {
			t.Errorf("ParseBody(%q) = %v, want code %d", raw, err, code)
		}
	}
}

func TestStringsAndSecret(t *testing.T) {
	b, _ := ParseBody(json.RawMessage(`{"ok":["a","b"],"bad":["a",2],"not":"a"}`), &testCodes)
	if s, err := b.Strings("ok", "r"); err != nil || len(s) != 2 {
		t.Errorf("ok: %v %v", s, err)
	}
	if _, err := b.Strings("bad", "no strings here"); err == nil || err.Reason != "no strings here" || err.Code != 4 {
		t.Errorf("bad: %v", err)
	}
	if _, err := b.Strings("not", "r"); err == nil || err.Code != 4 {
		t.Errorf("not: %v", err)
	}
	if s, err := b.Strings("absent", "r"); s != nil || err != nil {
		t.Errorf("absent: %v %v", s, err)
	}
	s := "k"
	if testCodes.CheckSecret("secret", nil, "") != nil || testCodes.CheckSecret("secret", &s, "k") != nil {
		t.Error("a right or unneeded secret refused")
	}
	if err := testCodes.CheckSecret("secret", &s, "K"); err == nil || err.Code != 5 {
		t.Errorf("wrong secret: %v", err)
	}
}

// TestItems: an array's objects become Bodies with the same codes; other items are empty, so a
// table on them reports its first mandatory element missing, as Janus does on a non-object item.
func TestItems(t *testing.T) {
	b, _ := ParseBody(json.RawMessage(`{"media":[{"mid":"a"},7,null,[1]],"one":{"mid":"a"}}`), &testCodes)
	items := b.Items("media")
	if len(items) != 4 || items[0].Str("mid") != "a" {
		t.Fatalf("items: %+v", items)
	}
	for _, it := range items[1:] {
		if err := it.Validate(Param{Name: "mid", Kind: String, Required: true}); err == nil || err.Code != 3 {
			t.Errorf("a non-object item: %v, want missing", err)
		}
	}
	if b.Items("one") != nil || b.Items("absent") != nil {
		t.Error("Items of an object or an absent element")
	}
}

// TestDecodeRequest: the request's name comes back in lower case (Janus's strcasecmp), the body
// keeps it as sent; no body, a body that is not an object, and a missing or non-string request
// get the plugin's codes.
func TestDecodeRequest(t *testing.T) {
	name, b, err := DecodeRequest([]byte(`{"request":"Watch","id":1}`), &testCodes)
	if err != nil || name != "watch" || b.Str("request") != "Watch" {
		t.Fatalf("DecodeRequest: %q %q %v", name, b.Str("request"), err)
	}
	for raw, code := range map[string]int{``: 1, `[1]`: 2, `{"id":1}`: 3, `{"request":7}`: 4} {
		if _, _, err := DecodeRequest([]byte(raw), &testCodes); err == nil || err.Code != code {
			t.Errorf("DecodeRequest(%s): %v, want code %d", raw, err, code)
		}
	}
}
