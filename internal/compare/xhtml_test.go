package compare

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// element is a parsed XHTML element: enough of a DOM for the report tests.
type element struct {
	name  string
	attrs map[string]string
	kids  []*element
	text  strings.Builder // all text inside, descendants included
}

// parseXHTML parses data as strict XML (only the five predefined entities,
// every element closed) and returns the root element. The report is meant
// to be well-formed XML as well as HTML, so this is how a test checks that
// it parses.
func parseXHTML(t *testing.T, data []byte) *element {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	var (
		root  *element
		stack []*element
	)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("HTML report does not parse as XHTML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := &element{name: tok.Name.Local, attrs: map[string]string{}}
			for _, a := range tok.Attr {
				name := a.Name.Local
				if a.Name.Space != "" {
					name = a.Name.Space + ":" + name
				}
				e.attrs[name] = a.Value
			}
			if len(stack) > 0 {
				parent := stack[len(stack)-1]
				parent.kids = append(parent.kids, e)
			} else if root == nil {
				root = e
			} else {
				t.Fatalf("HTML report has a second root element <%s>", e.name)
			}
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			for _, e := range stack {
				e.text.Write(tok)
			}
		}
	}
	if root == nil || root.name != "html" {
		t.Fatalf("HTML report root = %v, want <html>", root)
	}
	return root
}

// find returns every element below e (e included) for which match is true,
// in document order.
func (e *element) find(match func(*element) bool) []*element {
	var out []*element
	if match(e) {
		out = append(out, e)
	}
	for _, k := range e.kids {
		out = append(out, k.find(match)...)
	}
	return out
}

func named(name string) func(*element) bool {
	return func(e *element) bool { return e.name == name }
}

// hasClass matches elements of tag name whose class list holds class.
func hasClass(name, class string) func(*element) bool {
	return func(e *element) bool {
		return e.name == name && strings.Contains(" "+e.attrs["class"]+" ", " "+class+" ")
	}
}

func (e *element) String() string { return "<" + e.name + ">" }

// writeParsed writes rep's HTML report to a temporary file, as -html does,
// and parses it back.
func writeParsed(t *testing.T, rep *Report) *element {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.html")
	if err := writeHTML(path, rep); err != nil {
		t.Fatalf("writeHTML() = %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return parseXHTML(t, data)
}
