package partnerapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"go.yaml.in/yaml/v3"

	"github.com/partner-v3/conformance-kit/simulator/httpjson"
)

// Paths of the OpenAPI document, outside the base path like /healthz: the
// document's own paths are relative to the base address, and a partner's
// tools fetch it before they have credentials.
const (
	OpenAPIYAMLPath = "/openapi.yaml"
	OpenAPIJSONPath = "/openapi.json"
)

// Document is the OpenAPI document of the partner API, in YAML as written
// and in JSON for the tools that read only JSON.
type Document struct {
	YAML []byte
	JSON []byte
}

// NewDocument converts an OpenAPI document written in YAML to JSON once,
// keeping the order of its keys, so that serving it costs a write. It
// fails on YAML that is no JSON value (a mapping key that is not a string,
// for example).
func NewDocument(src []byte) (*Document, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("openapi document: not a YAML mapping")
	}
	var buf bytes.Buffer
	if err := writeJSONNode(&buf, root.Content[0]); err != nil {
		return nil, fmt.Errorf("openapi document as JSON: %w", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, buf.Bytes(), "", "  "); err != nil {
		return nil, fmt.Errorf("openapi document as JSON: %w", err)
	}
	out.WriteByte('\n')
	return &Document{YAML: src, JSON: out.Bytes()}, nil
}

// writeJSONNode writes n as JSON, mappings in the order written.
func writeJSONNode(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.AliasNode:
		return writeJSONNode(buf, n.Alias)
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
				return fmt.Errorf("line %d: key %q is not a string", k.Line, k.Value)
			}
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSONValue(buf, k.Value); err != nil {
				return err
			}
			buf.WriteByte(':')
			if err := writeJSONNode(buf, n.Content[i+1]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSONNode(buf, c); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		if n.ShortTag() == "!!timestamp" {
			// JSON has no time type: a date stays the text it was written as.
			return writeJSONValue(buf, n.Value)
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		return writeJSONValue(buf, v)
	default:
		return fmt.Errorf("line %d: unexpected YAML node", n.Line)
	}
	return nil
}

// writeJSONValue writes v as JSON with <, > and & as they are: the
// document's descriptions quote bodies like {"error": "<message>"}.
func writeJSONValue(buf *bytes.Buffer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return nil
}

// serveDocument answers GET and HEAD of /openapi.yaml and /openapi.json
// with no authentication and outside the rate limit (spec §8 counts the
// three operations, which this is none of). It reports whether path was
// one of them.
func (s *API) serveDocument(w http.ResponseWriter, r *http.Request) bool {
	if s.OpenAPI == nil {
		return false
	}
	var body []byte
	var contentType string
	switch r.URL.Path {
	case OpenAPIYAMLPath:
		// RFC 9512 registers application/yaml.
		body, contentType = s.OpenAPI.YAML, "application/yaml"
	case OpenAPIJSONPath:
		body, contentType = s.OpenAPI.JSON, "application/json"
	default:
		return false
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		httpjson.Write(w, http.StatusMethodNotAllowed, &httpjson.ErrorResponse{Error: fmt.Sprintf("Method %s is not allowed: %s takes GET", r.Method, r.URL.Path)})
		return true
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
	return true
}
