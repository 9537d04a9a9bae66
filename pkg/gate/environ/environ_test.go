package environ_test

import (
	"slices"
	"testing"

	"github.com/hilrun/hilrun/pkg/gate/environ"
)

func TestEnv(t *testing.T) {
	e := environ.Of([]string{"A=1", "B=2", "junk", "A=3"})
	if v, ok := e.Lookup("A"); !ok || v != "3" {
		t.Errorf("A = %q, %v; the last entry wins", v, ok)
	}
	if _, ok := e.Lookup("junk"); ok {
		t.Error("an entry without = was kept")
	}
	if got := e.Pick("B", "Z", "B").List(); !slices.Equal(got, []string{"B=2"}) {
		t.Errorf("Pick = %q", got)
	}
	if got := e.With("B=9").Get("B"); got != "9" {
		t.Errorf("With: B = %q", got)
	}
	var zero environ.Env
	if l := zero.List(); l == nil || len(l) != 0 {
		t.Errorf("the zero Env lists %#v, want an empty, non-nil list", l)
	}
	t.Setenv("HILRUN_ENV_TEST", "x")
	if environ.Host().Get("HILRUN_ENV_TEST") != "x" || zero.Get("HILRUN_ENV_TEST") != "" {
		t.Error("Host reads the process's environment, and only Host does")
	}
}
