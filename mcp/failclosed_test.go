package mcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/mcp"
)

// rawSession starts the proxy between two raw peers.
func rawSession(t *testing.T) (client, server *rawPeer) {
	t.Helper()
	client, server, _ = rawSessionApp(t)
	return client, server
}

// rawSessionApp is rawSession and the app behind the proxy.
func rawSessionApp(t *testing.T) (client, server *rawPeer, a *app.App) {
	t.Helper()
	a = openApp(t, testPolicy)
	client, cr, cw := newRawPeer(t)
	server, sr, sw := newRawPeer(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go a.MCPProxy(app.MCPOptions{Name: "test"}).Serve(ctx, mcp.NewStreamConn(cr, cw), mcp.NewStreamConn(sr, sw))
	return client, server, a
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

// TestInjectionInServerErrorIsWithheld: the error a server answers an
// allowed call with reaches the model as much as a result does; one that
// reads as a prompt injection is withheld and recorded.
func TestInjectionInServerErrorIsWithheld(t *testing.T) {
	client, server, a := rawSessionApp(t)
	client.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	answerListing(t, server)
	if m := server.next(); m["method"] != "tools/call" {
		t.Fatalf("server got %v, want the allowed call", m)
	}
	server.send(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":` + toJSON(injection) + `,"data":{"detail":` + toJSON(injection) + `}}}`)
	m := client.next()
	got := toJSON(m)
	if m["error"] == nil || strings.Contains(got, "developer mode") || !strings.Contains(got, "withheld") {
		t.Fatalf("answer to the call = %s; want an error saying it was withheld, without the payload", got)
	}
	if evs := events(t, a, warden.EventInjectionFound); len(evs) != 1 {
		t.Errorf("injection_found events = %d; want 1 for the server's error", len(evs))
	}
	client.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"y"}}}`)
	if m := server.next(); m["method"] != "tools/call" {
		t.Fatalf("server got %v, want the allowed call", m)
	}
	server.send(`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"unknown argument: text"}}`)
	if m := client.next(); !strings.Contains(toJSON(m), "unknown argument: text") {
		t.Errorf("answer to the call = %v; want the server's plain error passed on", m)
	}
}

// TestToolOnAnUnreadPageIsUnverified: when the proxy's own listing fails
// after its first page, a tool not on that page was never checked, so its
// call asks (mcp.tool_unverified; refused at once here, naming the
// approval) rather than going on at its tier.
func TestToolOnAnUnreadPageIsUnverified(t *testing.T) {
	a := openApp(t, testPolicy)
	client, cr, cw := newRawPeer(t)
	server, sr, sw := newRawPeer(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go a.MCPProxy(app.MCPOptions{Name: "test", Wait: -1}).Serve(ctx, mcp.NewStreamConn(cr, cw), mcp.NewStreamConn(sr, sw))

	client.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	m := server.next()
	id, _ := m["id"].(string)
	if m["method"] != "tools/list" {
		t.Fatalf("the server got %v; want the proxy's own tools/list", m)
	}
	server.send(`{"jsonrpc":"2.0","id":"` + id + `","result":{"tools":[{"name":"add","inputSchema":{"type":"object"}}],"nextCursor":"page2"}}`)
	m = server.next()
	id, _ = m["id"].(string)
	if m["method"] != "tools/list" || !strings.Contains(toJSON(m), "page2") {
		t.Fatalf("the server got %v; want the proxy's tools/list of page 2", m)
	}
	server.send(`{"jsonrpc":"2.0","id":"` + id + `","error":{"code":-32603,"message":"the listing broke"}}`)
	m = client.next()
	res, _ := m["result"].(map[string]any)
	if res == nil || res["isError"] != true || !strings.Contains(toJSON(res), "needs a human's approval") || !strings.Contains(toJSON(res), "cannot be checked") {
		t.Fatalf("answer to a call of a tool on the unread page = %v; want an isError result: it needs approval, its definition unchecked", m)
	}
	client.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := server.next(); m["method"] != "ping" {
		t.Fatalf("the server got %v; want the ping, the unverified call never forwarded", m)
	}
}

// TestUnreadableToolIsHiddenAndRefused: a tool whose definition the proxy
// cannot read (here a DESCRIPTION beside its description, which a
// case-insensitive client could show instead) is hidden, and a call to it
// by name is refused, never forwarded.
func TestUnreadableToolIsHiddenAndRefused(t *testing.T) {
	client, server := rawSession(t)
	client.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if m := server.next(); m["method"] != "tools/list" {
		t.Fatalf("the server got %v; want the client's tools/list", m)
	}
	server.send(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","description":"Echo.","DESCRIPTION":` + toJSON(injection) + `,"inputSchema":{"type":"object"}}]}}`)
	if m := client.next(); m["id"] != 1.0 || strings.Contains(toJSON(m), "echo") {
		t.Fatalf("answer to tools/list = %v; want the unreadable tool hidden", m)
	}
	client.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	m := client.next()
	res, _ := m["result"].(map[string]any)
	if res == nil || res["isError"] != true || !strings.Contains(toJSON(res), "mcp.tool_unverified") {
		t.Fatalf("answer to a call of the hidden tool = %v; want an isError result naming mcp.tool_unverified", m)
	}
	client.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if m := server.next(); m["method"] != "ping" {
		t.Fatalf("the server got %v; want the ping, the hidden tool's call never forwarded", m)
	}
}

// TestInjectionInResourceLinkIsCaught: a resource link's description
// reaches the model as much as a text block does; it is scanned, and one
// reading as a prompt injection is withheld.
func TestInjectionInResourceLinkIsCaught(t *testing.T) {
	client, server := rawSession(t)
	client.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	answerListing(t, server)
	if m := server.next(); m["method"] != "tools/call" {
		t.Fatalf("server got %v, want the allowed call", m)
	}
	server.send(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"resource_link","uri":"file:///notes.txt","name":"notes.txt","description":` + toJSON(injection) + `}]}}`)
	m := client.next()
	got := toJSON(m)
	res, _ := m["result"].(map[string]any)
	if res == nil || res["isError"] != true || strings.Contains(got, "developer mode") || !strings.Contains(got, "withheld") {
		t.Fatalf("answer to the call = %s; want an isError result saying it was withheld, without the payload", got)
	}
}

// TestInjectionInTaskResultIsWithheld: a task-augmented call (MCP tasks)
// is answered with a task, and its tool result comes back later, to a
// tasks/result request: that result reaches the model as much as a
// tools/call's does, so it is scanned, and one reading as a prompt
// injection is withheld. Before, tasks/result passed through unscanned.
func TestInjectionInTaskResultIsWithheld(t *testing.T) {
	client, server := rawSession(t)
	client.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"task":{"ttl":60000}}}`)
	answerListing(t, server)
	if m := server.next(); m["method"] != "tools/call" {
		t.Fatalf("server got %v, want the allowed call", m)
	}
	server.send(`{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t1","status":"working","createdAt":"2026-11-28T00:00:00Z","ttl":60000}}}`)
	if m := client.next(); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("answer to the call = %v; want the task", m)
	}
	client.send(`{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"t1"}}`)
	if m := server.next(); m["method"] != "tasks/result" {
		t.Fatalf("server got %v, want the tasks/result", m)
	}
	server.send(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":` + toJSON(injection) + `}]}}`)
	m := client.next()
	got := toJSON(m)
	res, _ := m["result"].(map[string]any)
	if res == nil || res["isError"] != true || strings.Contains(got, "developer mode") || !strings.Contains(got, "withheld") {
		t.Fatalf("answer to tasks/result = %s; want an isError result saying it was withheld, without the payload", got)
	}
	client.send(`{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":"t2"}}`)
	server.next()
	server.send(`{"jsonrpc":"2.0","id":3,"result":"not an object"}`)
	if m := client.next(); !strings.Contains(toJSON(m), "withheld") {
		t.Fatalf("answer to tasks/result with an unreadable result = %v; want it withheld", m)
	}
}

// TestToolOnAPageTheClientDidNotListIsChecked: a client that read only
// the first page of the tool list (or calls from a list it cached) calls a
// tool that is on a later page (echo, allowed by the policy): the proxy lists the rest itself before
// judging the call, so a poisoned definition there is refused as on the
// first page. Before, any listing in the session counted, and the tool's
// call went on with its definition never checked.
func TestToolOnAPageTheClientDidNotListIsChecked(t *testing.T) {
	client, server := rawSession(t)
	page1 := `{"tools":[{"name":"add","inputSchema":{"type":"object"}}],"nextCursor":"p2"}`
	page2 := `{"tools":[{"name":"echo","description":` + toJSON(injection) + `,"inputSchema":{"type":"object"}}]}`
	client.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
	if m := server.next(); m["method"] != "tools/list" {
		t.Fatalf("server got %v, want the client's tools/list", m)
	}
	server.send(`{"jsonrpc":"2.0","id":1,"result":` + page1 + `}`)
	client.next()
	client.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	for {
		m := server.next()
		if m["method"] != "tools/list" {
			t.Fatalf("server got %v before the proxy read the page holding the tool called; want no call of a tool never checked", m)
		}
		id, _ := m["id"].(string)
		params, _ := m["params"].(map[string]any)
		if params["cursor"] == "p2" {
			server.send(`{"jsonrpc":"2.0","id":"` + id + `","result":` + page2 + `}`)
			break
		}
		server.send(`{"jsonrpc":"2.0","id":"` + id + `","result":` + page1 + `}`)
	}
	if m := client.next(); m["id"] != 2.0 || !strings.Contains(toJSON(m), "prompt injection") {
		t.Fatalf("answer to the call = %v; want it refused, its definition poisoned", m)
	}
	client.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if m := server.next(); m["method"] != "ping" {
		t.Fatalf("the server's next message = %v; want the ping, the poisoned tool's call never forwarded", m)
	}
}
