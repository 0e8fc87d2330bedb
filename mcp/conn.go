package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxMessage bounds one JSON-RPC message on a stdio stream (the SDK's own
// default line limit).
const MaxMessage = sdk.DefaultMaxLineLength

// MalformedError is a message that could not be read as JSON-RPC: the stream
// goes on, and the message is never forwarded. ID is the message's id when
// it had a readable one (the proxy then answers it with an error).
type MalformedError struct {
	ID  jsonrpc.ID
	Err error
}

func (e *MalformedError) Error() string { return "malformed JSON-RPC message: " + e.Err.Error() }
func (e *MalformedError) Unwrap() error { return e.Err }

// lineConn is a stdio MCP stream: newline-delimited JSON-RPC messages,
// decoded and encoded by the SDK's jsonrpc codec. Unlike the SDK's own
// stdio connection, a line that is not a JSON-RPC message is reported as a
// *MalformedError and the stream goes on, so that one bad message from
// either side costs that message only.
type lineConn struct {
	r   *bufio.Reader
	rc  io.Closer
	wmu sync.Mutex
	w   io.Writer
	wc  io.Closer
	max int

	closeOnce sync.Once
	closeErr  error
}

var _ sdk.Connection = (*lineConn)(nil)

// NewStreamConn is a Connection over r and w, one JSON-RPC message a line.
// Closing it closes r and w when they are io.Closers.
func NewStreamConn(r io.Reader, w io.Writer) sdk.Connection {
	c := &lineConn{r: bufio.NewReaderSize(r, 64<<10), w: w, max: MaxMessage}
	c.rc, _ = r.(io.Closer)
	c.wc, _ = w.(io.Closer)
	return c
}

// Read returns the next message. An empty line is skipped; a line that is
// not a JSON-RPC message is a *MalformedError; io.EOF ends the stream.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		line, err := c.line()
		if err != nil {
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		return decode(line)
	}
}

// decode reads one line as a JSON-RPC message.
func decode(line []byte) (jsonrpc.Message, error) {
	if line[0] == '[' {
		// Batches were removed from MCP in 2025-06-18; no client we serve
		// sends them, and a batch is not judged piecewise.
		return nil, &MalformedError{Err: errors.New("JSON-RPC batches are not supported")}
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		me := &MalformedError{Err: err}
		var probe struct {
			ID     any             `json:"id"`
			Method json.RawMessage `json:"method"`
		}
		if json.Unmarshal(line, &probe) == nil && probe.Method != nil {
			if id, err := jsonrpc.MakeID(probe.ID); err == nil {
				me.ID = id
			}
		}
		return nil, me
	}
	return msg, nil
}

// line reads one line, without its newline. A line longer than c.max is
// skipped to its end and reported as malformed.
func (c *lineConn) line() ([]byte, error) {
	var buf []byte
	tooLong := false
	for {
		chunk, err := c.r.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > c.max {
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case tooLong && err == nil:
			return nil, &MalformedError{Err: fmt.Errorf("a message longer than %d bytes", c.max)}
		case err == nil:
			return buf, nil
		case !tooLong && errors.Is(err, io.EOF) && len(bytes.TrimSpace(buf)) > 0:
			return buf, nil // a last line without its newline; the next read ends
		default:
			return nil, err
		}
	}
}

// Write writes msg as one line.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encode a JSON-RPC message: %w", err)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.w.Write(append(b, '\n'))
	return err
}

// Close closes the stream's reader and writer.
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		var errs []error
		if c.wc != nil {
			errs = append(errs, c.wc.Close())
		}
		if c.rc != nil {
			errs = append(errs, c.rc.Close())
		}
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
}

func (c *lineConn) SessionID() string { return "" }
