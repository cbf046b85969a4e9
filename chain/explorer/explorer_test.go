package explorer

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandlerServesAssetsAndDeepLinks(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	for _, c := range []struct {
		path, ctype, contains string
	}{
		{"/explorer/", "text/html", `<script src="app.js"`},
		{"/explorer/jobs/0xabc", "text/html", `<script src="app.js"`}, // deep link falls back to the page
		{"/explorer/app.js", "javascript", "EventSource"},
		{"/explorer/style.css", "text/css", "body"},
	} {
		resp, err := http.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d", c.path, resp.StatusCode)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, c.ctype) {
			t.Errorf("%s: content type %q, want %s", c.path, ct, c.ctype)
		}
		if !strings.Contains(string(b), c.contains) {
			t.Errorf("%s: body lacks %q", c.path, c.contains)
		}
	}
}
