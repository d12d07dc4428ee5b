package compare

import (
	"encoding/json"
	"io"
	"os"
)

// writeJSON writes the report as indented JSON to path, or to stdout when
// path is "-".
func writeJSON(path string, stdout io.Writer, rep *Report) error {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if path == "-" {
		_, err = stdout.Write(data)
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
