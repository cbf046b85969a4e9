package executor

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// VolumeFile is one file of a job's input volume (absolute path in the
// volume) or one file a job writes to its output volume.
type VolumeFile struct {
	Path    string
	Content []byte
}

// VolumeRefOpen and VolumeRefClose delimit an input file reference in a
// text template: "{{volume:/data/a.txt}}" stands for the content of that
// input file.
const (
	VolumeRefOpen  = "{{volume:"
	VolumeRefClose = "}}"
)

// ExpandVolumes replaces every "{{volume:/path}}" in s with the content of
// the input file at /path. A reference to a file that is not among inputs,
// an unterminated reference or a referenced file that is not UTF-8 text is
// the job's fault (ErrBadInput). Executors call it on the text they send
// (the LLM executor: system prompt, prompt and every message) only when the
// job has input volumes, so prompts of other jobs are never rewritten.
func ExpandVolumes(s string, inputs []VolumeFile) (string, error) {
	if !strings.Contains(s, VolumeRefOpen) {
		return s, nil
	}
	byPath := make(map[string][]byte, len(inputs))
	for _, f := range inputs {
		byPath[f.Path] = f.Content
	}
	var b strings.Builder
	for {
		i := strings.Index(s, VolumeRefOpen)
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		rest := s[i+len(VolumeRefOpen):]
		j := strings.Index(rest, VolumeRefClose)
		if j < 0 {
			return "", fmt.Errorf("%w: unterminated %s reference", ErrBadInput, VolumeRefOpen)
		}
		p := rest[:j]
		content, ok := byPath[p]
		if !ok {
			return "", fmt.Errorf("%w: %s%s%s: no such input file (inputs: %s)", ErrBadInput, VolumeRefOpen, p, VolumeRefClose, inputPaths(inputs))
		}
		if !utf8.Valid(content) {
			return "", fmt.Errorf("%w: input file %s: %w", ErrBadInput, p, ErrNotUTF8)
		}
		b.Write(content)
		s = rest[j+len(VolumeRefClose):]
	}
}

func inputPaths(inputs []VolumeFile) string {
	ps := make([]string, len(inputs))
	for i, f := range inputs {
		ps[i] = f.Path
	}
	sort.Strings(ps)
	return strings.Join(ps, ", ")
}
