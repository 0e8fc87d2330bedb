package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/inject"
)

// maxInjectInput bounds what sanitize, scan and wrap read from stdin.
const maxInjectInput = 64 << 20

// injectCmds are the prompt-injection commands: sanitize, scan and wrap.
func injectCmds(e *env) []*cobra.Command {
	return []*cobra.Command{sanitizeCmd(e), scanCmd(e), wrapCmd(e)}
}

// readInput reads stdin whole, refusing more than maxInjectInput.
func readInput(e *env, c *cobra.Command) (string, error) {
	b, err := io.ReadAll(io.LimitReader(e.stdin, maxInjectInput+1))
	if err != nil {
		return "", fmt.Errorf("read standard input: %w", err)
	}
	if len(b) > maxInjectInput {
		return "", warden.Errorf(warden.EInvalid, "the input is larger than %d MiB", maxInjectInput>>20).
			WithHint("split it and run `" + c.CommandPath() + "` on each part")
	}
	return string(b), nil
}

func sanitizeCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "sanitize",
		Short: "Print stdin with the invisible characters used to hide instructions removed",
		Long: "sanitize prints standard input as a model should see it: zero-width characters, bidi\n" +
			"overrides and isolates, Unicode tag characters and other hiding invisibles removed;\n" +
			"emoji sequences, flags, Persian ZWNJ and Indic joiners kept. See docs/inject.md.",
		Args: rangeArgs(0, 0, "no arguments (the text comes on standard input)"),
		RunE: func(c *cobra.Command, _ []string) error {
			in, err := readInput(e, c)
			if err != nil {
				return err
			}
			_, err = io.WriteString(e.stdout, inject.Sanitize(in))
			return err
		},
	}
}

func scanCmd(e *env) *cobra.Command {
	var rulesFile string
	var threshold float64
	c := &cobra.Command{
		Use:   "scan",
		Short: "Scan stdin for prompt injection; print a JSON verdict, exit 3 when flagged",
		Long: "scan reads standard input and prints one JSON object: injection (true/false), score\n" +
			"(0 to 1), categories, spans (byte ranges of the input) and matches (rule, category,\n" +
			"score, span, where it was found). It exits 0 when the text is clean and 3 when it is\n" +
			"flagged (score >= the threshold, 0.5 by default). --rules adds a payload database file\n" +
			"of your own (the format of inject/payloads.yaml). See docs/inject.md.",
		Args: rangeArgs(0, 0, "no arguments (the text comes on standard input)"),
		RunE: func(c *cobra.Command, _ []string) error {
			var extra []inject.Rule
			if rulesFile != "" {
				data, err := os.ReadFile(rulesFile)
				if err != nil {
					return warden.Errorf(warden.EInvalid, "read --rules: %v", err).
						WithHint("give a payload database file in the format of inject/payloads.yaml")
				}
				if extra, err = inject.ParseRules(data, rulesFile); err != nil {
					return warden.Errorf(warden.EInvalid, "%v", err).
						WithHint("fix the rule file; every rule needs id, category, score and pattern (see docs/inject.md)")
				}
			}
			if threshold < 0 || threshold > 1 {
				return usageError(c, fmt.Sprintf("--threshold %v is out of range; use a number in (0, 1]", threshold))
			}
			s, err := inject.NewScanner(inject.Options{Extra: extra, Threshold: threshold})
			if err != nil {
				return warden.Errorf(warden.EInvalid, "%v", err).WithHint("give your extra rules ids of their own")
			}
			in, err := readInput(e, c)
			if err != nil {
				return err
			}
			res := s.Scan(in)
			enc := json.NewEncoder(e.stdout)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(res); err != nil {
				return err
			}
			if res.Injection {
				e.status = exitInjection
			}
			return nil
		},
	}
	c.Flags().StringVar(&rulesFile, "rules", "", "a payload database file that extends the shipped one")
	c.Flags().Float64Var(&threshold, "threshold", 0, "the score at or above which the text is flagged (default 0.5)")
	return c
}

func wrapCmd(e *env) *cobra.Command {
	var source string
	var asJSON bool
	c := &cobra.Command{
		Use:   "wrap",
		Short: "Print stdin sanitised and fenced between random delimiters, marked as not to be followed",
		Long: "wrap prints standard input sanitised and between an opening and a closing fence that\n" +
			"carry a fresh 128-bit random nonce, after a line telling the model that nothing inside\n" +
			"is to be followed. Fence look-alikes inside the text are neutralised. --json prints\n" +
			"{\"text\": …, \"nonce\": …}. See docs/inject.md.",
		Args: rangeArgs(0, 0, "no arguments (the text comes on standard input)"),
		RunE: func(c *cobra.Command, _ []string) error {
			in, err := readInput(e, c)
			if err != nil {
				return err
			}
			w, err := inject.Wrap(in, source)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(e.stdout).Encode(struct {
					Text  string `json:"text"`
					Nonce string `json:"nonce"`
				}{w.Text, w.Nonce})
			}
			_, err = fmt.Fprintln(e.stdout, w.Text)
			return err
		},
	}
	c.Flags().StringVar(&source, "source", "", "where the text came from (a URL, a tool, a file), shown in the fence")
	c.Flags().BoolVar(&asJSON, "json", false, "print the wrapped text and its nonce as JSON")
	return c
}
