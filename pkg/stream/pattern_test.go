package stream

import (
	"errors"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
)

func TestPatternFind(t *testing.T) {
	tests := []struct {
		name    string
		pat     Pattern
		input   string
		want    []int
		names   []string
		isRegex bool
	}{
		{name: "literal", pat: Literal("1.0"), input: "fw 1.0\n", want: []int{3, 6}, names: []string{""}},
		{name: "literal is not a regexp", pat: Literal("1.0"), input: "fw 1x0\n", want: nil, names: []string{""}},
		{name: "literal first occurrence", pat: Literal("ab"), input: "xxabab", want: []int{2, 4}, names: []string{""}},
		{name: "empty literal", pat: Literal(""), input: "abc", want: []int{0, 0}, names: []string{""}},
		{name: "literal binary", pat: Literal("\x00\xff"), input: "a\x00\xffb", want: []int{1, 3}, names: []string{""}},
		{
			name: "regexp groups", pat: MustRegexp(`v(\d+)\.(\d+)`), input: "fw v1.23 ok",
			want: []int{3, 8, 4, 5, 6, 8}, names: []string{"", "", ""}, isRegex: true,
		},
		{
			name: "regexp named group", pat: MustRegexp(`temp=(?P<temp>-?\d+)`), input: "temp=-4;",
			want: []int{0, 7, 5, 7}, names: []string{"", "temp"}, isRegex: true,
		},
		{
			name: "regexp optional group absent", pat: MustRegexp(`a(b)?c`), input: "ac",
			want: []int{0, 2, -1, -1}, names: []string{"", ""}, isRegex: true,
		},
		{name: "regexp no match", pat: MustRegexp(`^x`), input: "ax", want: nil, names: []string{""}, isRegex: true},
		{name: "zero pattern", pat: Pattern{}, input: "abc", want: nil, names: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.pat.Find([]byte(tt.input))
			if !slices.Equal(got, tt.want) {
				t.Errorf("Find(%q) = %v, want %v", tt.input, got, tt.want)
			}
			if got := tt.pat.SubexpNames(); !slices.Equal(got, tt.names) {
				t.Errorf("SubexpNames() = %q, want %q", got, tt.names)
			}
			if got := tt.pat.IsRegexp(); got != tt.isRegex {
				t.Errorf("IsRegexp() = %v, want %v", got, tt.isRegex)
			}
		})
	}
}

func TestPatternStringAndZero(t *testing.T) {
	tests := []struct {
		name     string
		pat      Pattern
		wantStr  string
		wantZero bool
	}{
		{name: "literal", pat: Literal(`a.b\n`), wantStr: `a.b\n`},
		{name: "empty literal is not zero", pat: Literal(""), wantStr: ""},
		{name: "regexp", pat: MustRegexp(`a+\d`), wantStr: `a+\d`},
		{name: "zero", pat: Pattern{}, wantStr: "", wantZero: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.pat.String(); got != tt.wantStr {
				t.Errorf("String() = %q, want %q", got, tt.wantStr)
			}
			if got := tt.pat.IsZero(); got != tt.wantZero {
				t.Errorf("IsZero() = %v, want %v", got, tt.wantZero)
			}
		})
	}
}

func TestRegexpError(t *testing.T) {
	tests := []struct {
		name string
		expr string
		want string
	}{
		{name: "unclosed group", expr: `(ab`, want: `invalid regexp "(ab": missing closing )`},
		{name: "bad repeat", expr: `a**`, want: `invalid regexp "a**": invalid nested repetition operator: "**"`},
		{name: "bad escape", expr: `ab\q`, want: `invalid regexp "ab\\q": invalid escape sequence: "\\q"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Regexp(tt.expr)
			if err == nil {
				t.Fatalf("Regexp(%q) succeeded", tt.expr)
			}
			if !p.IsZero() {
				t.Errorf("Regexp(%q) returned a non-zero Pattern with its error", tt.expr)
			}
			if err.Error() != tt.want {
				t.Errorf("error = %q, want %q", err, tt.want)
			}
			var se *syntax.Error
			if !errors.As(err, &se) {
				t.Errorf("error does not unwrap to *syntax.Error")
			}
		})
	}
}

func TestMustRegexpPanics(t *testing.T) {
	defer func() {
		r := recover()
		if r == nil {
			t.Fatal("MustRegexp did not panic")
		}
		if err, ok := r.(error); !ok || !strings.Contains(err.Error(), "invalid regexp") {
			t.Errorf("panic value = %v", r)
		}
	}()
	MustRegexp(`(`)
}

func TestRegexpNoNewline(t *testing.T) {
	tests := []struct {
		expr string
		want bool // the regexp cannot match '\n'
	}{
		{`abc`, true},
		{`a.c`, true},
		{`(?s)a.c`, false},
		{`a\sc`, false},
		{`a[^x]c`, false},
		{`a\nc`, false},
		{`\d+ ms`, true},
		{`(?m)^OK$`, true},
		{`a|\n`, false},
		{`[[:alpha:]]+`, true},
		{`\S+`, true},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			p := MustRegexp(tt.expr)
			if p.p.noNewline != tt.want {
				t.Errorf("noNewline = %v, want %v", p.p.noNewline, tt.want)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		name string
		pats []Pattern
		want string
	}{
		{name: "none", want: "nothing"},
		{name: "literal", pats: []Pattern{Literal("a\"b\r\n")}, want: `"a\"b\r\n"`},
		{name: "regexp", pats: []Pattern{MustRegexp(`v\d`)}, want: `/v\d/`},
		{name: "several", pats: []Pattern{Literal("ok"), MustRegexp(`e\d`)}, want: `any of "ok", /e\d/`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describeAll(tt.pats); got != tt.want {
				t.Errorf("describeAll = %s, want %s", got, tt.want)
			}
		})
	}
}
