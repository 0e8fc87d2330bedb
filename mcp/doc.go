// Package mcp is warden's MCP proxy: it sits between an MCP client (an agent
// host) and an MCP server, speaking JSON-RPC to both through the transports
// of the official Go SDK (github.com/modelcontextprotocol/go-sdk), and puts
// every tool call through the same gate as every other action.
//
//   - tools/list is filtered: a tool the policy denies outright is hidden,
//     and so is a tool whose description or schema reads as a prompt
//     injection ("tool poisoning").
//   - tools/call becomes a warden.Request (capability tool, resource
//     mcp__SERVER__TOOL, params the arguments), decided and recorded by the
//     Gate. A deny is answered with an isError result the model can read; an
//     ask is put to the client as an elicitation when it declared that
//     capability, else waits for the approval warden opened.
//   - Results of allowed calls, resources and prompts are untrusted: their
//     text is sanitised, scanned with package inject and wrapped in
//     random delimiters; above the block score the result is withheld.
//   - A tool whose definition changed after it was first seen (a "rug pull")
//     is flagged and its calls ask again.
//
// The proxy works on messages, not on a server of its own: what it does not
// judge (notifications, server requests, other methods) passes unchanged,
// and malformed messages from either side are answered or dropped, never
// forwarded.
package mcp
