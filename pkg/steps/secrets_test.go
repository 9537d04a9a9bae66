package steps

import (
	"strings"
	"testing"
)

func TestSecretsOnlySent(t *testing.T) {
	head := "secrets: [wifi_psk]\nsteps:\n"
	for _, tc := range []struct {
		name, steps, want string
	}{
		{"send", "  - send: join ${wifi_psk}\n", ""},
		{"exec", "  - exec: [curl, -H, \"token: ${wifi_psk}\"]\n", ""},
		{"assert", "  - assert: wifi_psk == \"hunter22\"\n", `t.yaml:3:13: secret wifi_psk can only be sent`},
		{"expect", "  - expect: ${wifi_psk}\n", `t.yaml:3:13: secret wifi_psk can only be sent`},
		{"log", "  - log: ${wifi_psk}\n", `secret wifi_psk can only be sent`},
		{"set", "  - set: {x: \"${wifi_psk}\"}\n", `secret wifi_psk can only be sent`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(head+tc.steps), LoadOptions{})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Parse: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Parse: %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSecretsDecoding(t *testing.T) {
	for _, tc := range []struct {
		name, file, want string
	}{
		{"not a list", "secrets: wifi_psk\nsteps: [{delay: 0}]\n", "t.yaml:1:10: secrets must be a list of names"},
		{"twice", "secrets: [a_b, a_b]\nsteps: [{delay: 0}]\n", "t.yaml:1:16: secret a_b is listed twice"},
		{"var clash", "secrets: [psk]\nvars: {psk: 1}\nsteps: [{delay: 0}]\n", "t.yaml:2:8: variable psk has the name of a secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tc.file), LoadOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse: %v, want %q", err, tc.want)
			}
		})
	}
	seq, err := Parse("t.yaml", []byte("secrets: [wifi_psk, api_token]\nsteps: [{send: '${api_token}'}]\n"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(SecretNames(seq), ","); got != "wifi_psk,api_token" {
		t.Errorf("SecretNames = %s", got)
	}
}

func TestParseSecretSource(t *testing.T) {
	for in, want := range map[string]string{"env:WIFI_PSK": "env:WIFI_PSK", "file:psk.txt": "file:psk.txt", "env:": "must be env:VARIABLE or file:PATH", "vault:x": "must be env:VARIABLE", "env:A-B": "not an environment variable"} {
		src, err := ParseSecretSource(in)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = src.String()
		}
		if !strings.Contains(got, want) {
			t.Errorf("ParseSecretSource(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSecretsNotInBuilds(t *testing.T) {
	_, err := Parse("t.yaml", []byte("secrets: [wifi_psk]\nsteps:\n  - build: {command: [make, 'PSK=${wifi_psk}']}\n"), LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "secret wifi_psk can only be sent") {
		t.Fatalf("Parse: %v", err)
	}
}
