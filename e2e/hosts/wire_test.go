package hosts

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// anthropicWire is Claude Code's model protocol: POST /v1/messages, answered
// with server-sent events; tool results come back as user tool_result
// blocks.
type anthropicWire struct{}

func (anthropicWire) parse(body []byte) (turn, error) {
	var req struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return turn{}, err
	}
	var tr turn
	for _, t := range req.Tools {
		tr.Tools = append(tr.Tools, t.Name)
	}
	names := map[string]string{}
	for _, m := range req.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue // a plain string
		}
		for _, b := range blocks {
			switch b.Type {
			case "tool_use":
				names[b.ID] = b.Name
			case "tool_result":
				tr.Results = append(tr.Results, toolResult{Tool: names[b.ToolUseID], Text: flatten(b.Content), Error: b.IsError})
			}
		}
	}
	return tr, nil
}

func (anthropicWire) reply(w http.ResponseWriter, r *http.Request, step int, c *call, text string) {
	msgID := fmt.Sprintf("msg_e2e_%d", step)
	usage := map[string]int{"input_tokens": 10, "output_tokens": 5}
	var block map[string]any
	var delta map[string]any
	stop := "end_turn"
	if c != nil {
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_e2e_%d", step), "name": c.Tool, "input": map[string]any{}}
		delta = map[string]any{"type": "input_json_delta", "partial_json": mustMarshal(c.Args)}
		stop = "tool_use"
	} else {
		block = map[string]any{"type": "text", "text": ""}
		delta = map[string]any{"type": "text_delta", "text": text}
	}
	startSSE(w)
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": "claude-e2e", "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": block})
	sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": delta})
	sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": usage})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}

// responsesWire is Codex's model protocol with wire_api = "responses": POST
// /v1/responses, answered with server-sent events; tool results come back as
// function_call_output input items.
type responsesWire struct{}

func (responsesWire) parse(body []byte) (turn, error) {
	var req struct {
		Tools []struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"tools"`
		Input []struct {
			Type   string          `json:"type"`
			CallID string          `json:"call_id"`
			Name   string          `json:"name"`
			Output json.RawMessage `json:"output"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return turn{}, err
	}
	var tr turn
	for _, t := range req.Tools {
		name := t.Name
		if name == "" {
			name = t.Type
		}
		tr.Tools = append(tr.Tools, name)
	}
	names := map[string]string{}
	for _, in := range req.Input {
		switch in.Type {
		case "function_call", "custom_tool_call":
			names[in.CallID] = in.Name
		case "function_call_output", "custom_tool_call_output":
			tr.Results = append(tr.Results, toolResult{Tool: names[in.CallID], Text: flatten(in.Output)})
		}
	}
	return tr, nil
}

func (responsesWire) reply(w http.ResponseWriter, r *http.Request, step int, c *call, text string) {
	respID := fmt.Sprintf("resp_e2e_%d", step)
	var item map[string]any
	if c != nil {
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_e2e_%d", step), "call_id": fmt.Sprintf("call_e2e_%d", step),
			"name": c.Tool, "arguments": mustMarshal(c.Args)}
		if ns, name, ok := strings.Cut(c.Tool, "/"); ok {
			// A tool in a namespace (Codex offers an MCP server's tools as
			// the namespace mcp__SERVER).
			item["namespace"], item["name"] = ns, name
		}
	} else {
		item = map[string]any{"type": "message", "role": "assistant", "id": fmt.Sprintf("msg_e2e_%d", step),
			"content": []any{map[string]any{"type": "output_text", "text": text}}}
	}
	startSSE(w)
	sse(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": respID}})
	sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": respID,
		"usage": map[string]any{"input_tokens": 10, "input_tokens_details": nil, "output_tokens": 5, "output_tokens_details": nil, "total_tokens": 15}}})
}

// geminiWire is Gemini CLI's model protocol: POST
// /v1beta/models/<m>:streamGenerateContent?alt=sse, answered with
// server-sent events carrying GenerateContentResponse chunks (and
// :generateContent, answered with one JSON response); tool results come
// back as functionResponse parts.
type geminiWire struct{}

func (geminiWire) parse(body []byte) (turn, error) {
	var req struct {
		Tools []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				FunctionResponse *struct {
					Name     string          `json:"name"`
					Response json.RawMessage `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return turn{}, err
	}
	var tr turn
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			tr.Tools = append(tr.Tools, f.Name)
		}
	}
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if f := p.FunctionResponse; f != nil {
				var resp struct {
					Output json.RawMessage `json:"output"`
					Error  json.RawMessage `json:"error"`
				}
				_ = json.Unmarshal(f.Response, &resp)
				res := toolResult{Tool: f.Name, Text: string(f.Response)}
				switch {
				case len(resp.Error) > 0:
					res.Text, res.Error = flatten(resp.Error), true
				case len(resp.Output) > 0:
					res.Text = flatten(resp.Output)
				}
				tr.Results = append(tr.Results, res)
			}
		}
	}
	return tr, nil
}

func (geminiWire) reply(w http.ResponseWriter, r *http.Request, step int, c *call, text string) {
	var part map[string]any
	if c != nil {
		part = map[string]any{"functionCall": map[string]any{"name": c.Tool, "args": c.Args}}
	} else {
		part = map[string]any{"text": text}
	}
	resp := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
	}
	if !strings.Contains(r.URL.Path, "streamGenerateContent") {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
		return
	}
	startSSE(w)
	b, _ := json.Marshal(resp)
	fmt.Fprintf(w, "data: %s\r\n\r\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
