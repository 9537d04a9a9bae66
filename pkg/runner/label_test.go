package runner_test

import (
	"context"
	"strings"
	"testing"
)

func TestLabelsShowValues(t *testing.T) {
	seq := load(t, `
vars: {who: world}
steps:
  - repeat: {count: 2, as: i}
    steps:
      - send: "echo adc=${i}00"
      - expect: "adc=${i}00"
  - name: greet ${who}
    send: echo hi
  - repeat: {count: 2, every: 1ms}
    steps:
      - send: version
  - group: g ${who}
    steps:
      - send: version`)
	res := run(t, context.Background(), seq, newDevice(shell), nil)
	var got []string
	for _, st := range res.Steps {
		got = append(got, st.Path+" "+st.Name)
	}
	want := "0#0.0 echo adc=000|0#0.1 adc=000|0#1.0 echo adc=100|0#1.1 adc=100|0 2 times|" +
		"1 greet world|2#0.0 version|2#1.0 version|2 2 times every 1ms|3.0 version|3 g ${who}"
	if g := strings.Join(got, "|"); g != want {
		t.Errorf("names:\n got %s\nwant %s", g, want)
	}
	if sent := res.Steps[2].Data["sent"]; sent != "echo adc=100\n" {
		t.Errorf("data.sent of the second send = %#v, want the text sent", sent)
	}
}

func TestSkippedStepKeepsItsWrittenName(t *testing.T) {
	seq := load(t, `
vars: {i: 7}
steps:
  - assert: i == 1
  - send: "echo ${i}"
  - repeat: 3
    steps:
      - send: "echo ${i}"`)
	res := run(t, context.Background(), seq, newDevice(shell), nil)
	var got []string
	for _, st := range res.Steps {
		got = append(got, st.Path+" "+st.Name)
	}
	if g, want := strings.Join(got, "|"), "0 i == 1|1 echo ${i}|2 3 times"; g != want {
		t.Errorf("names %s, want %s", g, want)
	}
}
