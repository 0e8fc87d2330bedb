package mcp_test

import (
	"context"
	"testing"

	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/mcp"
)

// rawSession starts the proxy between two raw peers.
func rawSession(t *testing.T) (client, server *rawPeer) {
	t.Helper()
	a := openApp(t, testPolicy)
	client, cr, cw := newRawPeer(t)
	server, sr, sw := newRawPeer(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go a.MCPProxy(app.MCPOptions{Name: "test"}).Serve(ctx, mcp.NewStreamConn(cr, cw), mcp.NewStreamConn(sr, sw))
	return client, server
}

// TestCallWithCaseVariantKeysIsRefused: encoding/json reads "Name" into
// the name field (the last of the case variants wins) while a
// case-sensitive server reads "name": such a call would be judged as one
// tool and run as another, so it is refused and never reaches the server.
func TestCallWithCaseVariantKeysIsRefused(t *testing.T) {
	client, server := rawSession(t)
	client.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_repo","Name":"echo","arguments":{"Repo":"org/x"}}}`)
	if m := client.next(); m["id"] != 1.0 || m["error"] == nil {
		t.Fatalf("answer to the ambiguous call = %v; want an error", m)
	}
	client.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := server.next(); m["method"] != "ping" {
		t.Fatalf("the server's first message = %v; want the ping, the ambiguous call never forwarded", m)
	}
}

// TestSamplingWithCaseVariantKeysIsRefused: a sampling request whose
// "messages" (read by the client) differ from its "Messages" (the last
// variant, read by encoding/json) is refused to the server, never passed
// to the client unscanned.
func TestSamplingWithCaseVariantKeysIsRefused(t *testing.T) {
	client, server := rawSession(t)
	server.send(`{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"maxTokens":10,` +
		`"messages":[{"role":"user","content":{"type":"text","text":` + toJSON(injection) + `}}],` +
		`"Messages":[{"role":"user","content":{"type":"text","text":"Say hello."}}]}}`)
	if m := server.next(); m["id"] != 7.0 || m["error"] == nil {
		t.Fatalf("answer to the ambiguous sampling request = %v; want an error to the server", m)
	}
	server.send(`{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	if m := client.next(); m["method"] != "ping" {
		t.Fatalf("the client's first message = %v; want the server's ping, nothing of the sampling request", m)
	}
}
