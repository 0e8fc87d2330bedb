package inject

import "testing"

func TestSanitize(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"ascii unchanged", "hello, world\n", "hello, world\n"},
		{"zero-width space", "ig\u200bnore", "ignore"},
		{"word joiner and BOM", "\ufeffa\u2060b", "ab"},
		{"bidi override and isolate", "\u202eabc\u202c \u2066x\u2069", "abc x"},
		{"tag smuggling", "hi \U000e0049\U000e0067\U000e006e", "hi "},
		{"flag kept", "Go \U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f!", "Go \U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f!"},
		{"family emoji ZWJ kept", "\U0001f468\u200d\U0001f469\u200d\U0001f467", "\U0001f468\u200d\U0001f469\u200d\U0001f467"},
		{"Persian ZWNJ kept", "می\u200cخواهم", "می\u200cخواهم"},
		{"Devanagari ZWJ kept", "क्\u200dष", "क्\u200dष"},
		{"ZWJ between Latin removed", "a\u200db", "ab"},
		{"one VS16 kept", "\u2764\ufe0f", "\u2764\ufe0f"},
		{"VS run cut to one", "\u2764\ufe0f\ufe0f\ufe0e\U000e0100", "\u2764\ufe0f"},
		{"IVS kept", "葛\U000e0100城", "葛\U000e0100城"},
		{"RLM kept", "\u05d4\u200f100$", "\u05d4\u200f100$"},
		{"soft hyphen removed", "Stra\u00adße", "Straße"},
		{"ANSI escape loses ESC", "\x1b[31mred", "[31mred"},
		{"line separator", "a\u2028b", "a\nb"},
		{"Hangul filler", "a\u3164b", "ab"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Sanitize(c.in); got != c.want {
				t.Errorf("Sanitize(%+q) = %+q, want %+q", c.in, got, c.want)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"case and spaces", "Ignore   ALL\t\tprevious", "ignore all previous"},
		{"newline run", "a \n\n b", "a\nb"},
		{"fullwidth", "Ｉｇｎｏｒｅ\u3000ａｌｌ", "ignore all"},
		{"mathematical bold", "𝐢𝐠𝐧𝐨𝐫𝐞", "ignore"},
		{"cyrillic in a latin word", "Ignоrе", "ignore"},
		{"russian word kept", "Игнорируй", "игнорируй"},
		{"zero width split", "I\u200bg\u200bn", "ign"},
		{"tags decoded", "ok \U000e0048\U000e0069", "ok hi"},
		{"flag dropped", "Go \U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f!", "go !"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Normalize(c.in); got != c.want {
				t.Errorf("Normalize(%+q) = %+q, want %+q", c.in, got, c.want)
			}
		})
	}
}
