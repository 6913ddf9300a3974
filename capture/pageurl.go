package capture

import (
	"net/url"
	"os"
	"path/filepath"
)

// PageURL is the URL a browser opens for page, a Scenario's page as a
// person gives it: the path of a file on this machine (index.html,
// ./dist/app.html) becomes its file: URL; a URL, or a path to no file, is
// returned as given (Check and the browser say what is wrong with it).
func PageURL(page string) string {
	if u, err := url.Parse(page); err == nil && u.Scheme != "" {
		return page
	}
	abs, err := filepath.Abs(page)
	if err != nil {
		return page
	}
	if st, err := os.Stat(abs); err != nil || st.IsDir() {
		return page
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
}
