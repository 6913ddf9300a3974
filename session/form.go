package session

import "github.com/heapx/heapx/render"

// Form is the form a front end answers a registry query in.
type Form uint8

// The forms of a query's answer.
const (
	// FormJSON is what heapx NAME --json prints (render.JSONValue).
	FormJSON Form = iota
	// FormGeneric is the result's sections of tables and trees with
	// typed columns (render.NewDocument), for a client that draws any
	// query the same way.
	FormGeneric
)

// ParseForm reads the form a request names: "json" or "generic" (a
// front end gives "json" when the request names none). heapx serve's
// ?form= and the MCP query tool's form both take it, so both refuse the
// same mistakes with the same words.
func ParseForm(name string) (Form, error) {
	switch name {
	case "json":
		return FormJSON, nil
	case "generic":
		return FormGeneric, nil
	}
	return 0, invalid(`form must be "json" (as --json prints it) or "generic" (sections of tables and trees)`)
}

// QueryAnswer runs the registered query name with args (as Query does)
// and returns the answer a front end sends in form.
func (s *Session) QueryAnswer(name string, args map[string]string, form Form) (any, error) {
	res, err := s.Query(name, args)
	if err != nil {
		return nil, err
	}
	if form == FormGeneric {
		return render.NewDocument(res.Result, res.Inputs), nil
	}
	return render.JSONValue(res.Result, res.Inputs), nil
}
