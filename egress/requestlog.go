package egress

import (
	"encoding/json"
	"strconv"
	"time"
)

// meta is the request log's metadata: the JSON object json.Marshal makes of
// a map of these keys (sorted, as it sorts them), written directly. Building
// the map and marshalling it cost more than the rest of the event
// (docs/benchmarks.md, issue 26); TestRequestLogMetaIsMarshalled holds the
// two byte for byte equal.
func (e *entry) meta(p *Proxy, host string, port uint16, up, down int64) json.RawMessage {
	b := make([]byte, 0, 320+len(host)+len(e.note)+len(p.Identity.Agent)+len(p.Identity.Session))
	b = append(b, '{')
	if e.v.pinned.IsValid() {
		b = appendKey(b, "address")
		b = appendJSONString(b, e.v.pinned.String())
		b = append(b, ',')
	}
	b = appendKey(b, "agent")
	b = appendJSONString(b, p.Identity.Agent)
	b = append(b, `,"bytes_down":`...)
	b = strconv.AppendInt(b, down, 10)
	b = append(b, `,"bytes_up":`...)
	b = strconv.AppendInt(b, up, 10)
	b = append(b, ',')
	b = appendKey(b, "host")
	b = appendJSONString(b, host)
	b = append(b, ',')
	b = appendKey(b, "method")
	b = appendJSONString(b, e.method)
	b = append(b, `,"ms":`...)
	b = strconv.AppendInt(b, time.Since(e.start).Milliseconds(), 10)
	if e.note != "" {
		b = append(b, ',')
		b = appendKey(b, "note")
		b = appendJSONString(b, e.note)
	}
	b = append(b, ',')
	b = appendKey(b, "path_hash")
	b = appendJSONString(b, p.pathHash(e.target.Path))
	b = append(b, `,"port":`...)
	b = strconv.AppendUint(b, uint64(port), 10)
	b = append(b, ',')
	b = appendKey(b, "rule")
	b = appendJSONString(b, e.v.Rule)
	b = append(b, ',')
	b = appendKey(b, "session")
	b = appendJSONString(b, p.Identity.Session)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(e.status), 10)
	b = append(b, ',')
	b = appendKey(b, "trace_id")
	b = appendJSONString(b, e.v.TraceID)
	b = append(b, ',')
	b = appendKey(b, "verdict")
	b = appendJSONString(b, e.v.Verdict.String())
	return append(b, '}')
}

// summary is the request log's one line: "GET example.com:80 allow, status
// 200, 0 bytes up, 16 down".
func (e *entry) summary(host string, port uint16, up, down int64) string {
	b := make([]byte, 0, 64+len(e.method)+len(host))
	b = append(b, e.method...)
	b = append(b, ' ')
	b = append(b, host...)
	b = append(b, ':')
	b = strconv.AppendUint(b, uint64(port), 10)
	b = append(b, ' ')
	b = append(b, e.v.Verdict.String()...)
	b = append(b, ", status "...)
	b = strconv.AppendInt(b, int64(e.status), 10)
	b = append(b, ", "...)
	b = strconv.AppendInt(b, up, 10)
	b = append(b, " bytes up, "...)
	b = strconv.AppendInt(b, down, 10)
	b = append(b, " down"...)
	return string(b)
}

func appendKey(b []byte, k string) []byte {
	b = append(b, '"')
	b = append(b, k...)
	return append(b, '"', ':')
}

// appendJSONString appends s as encoding/json writes a string: as is when
// no byte of it needs escaping (the common case: a host, a rule, a trace
// id), else through json.Marshal itself.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
