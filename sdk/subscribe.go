package sdk

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
)

type stopError struct{ err error }

func (e *stopError) Error() string { return e.err.Error() }

func (c *Client) streamOnce(ctx context.Context, next *uint64, fn func(apitypes.Block) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v1/stream?from="+strconv.FormatUint(*next, 10), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	// The stream is long-lived: no overall client timeout.
	resp, err := (&http.Client{Transport: c.http.Transport}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("stream: HTTP %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	var event, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if event == "block" && data != "" {
				var b apitypes.Block
				if err := json.Unmarshal([]byte(data), &b); err != nil {
					return fmt.Errorf("stream: decode block: %w", err)
				}
				if b.Header.Height >= *next {
					if err := fn(b); err != nil {
						return &stopError{err}
					}
					*next = b.Header.Height + 1
				}
			}
			event, data = "", ""
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			data += strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return errors.New("stream closed by node")
}
