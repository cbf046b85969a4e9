package job

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
)

// A JSON spec names volumes with 0x-hex volume ids and tokens.
func TestReadJobSpecVolumes(t *testing.T) {
	in := `{"job_type":2,"volumes":[{"access":1,"volume":"0x` + strings.Repeat("ab", 32) + `","path":"/data","token":"0xa1b2"}]}`
	s, err := readJobSpec(strings.NewReader(in), "-")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Volumes) != 1 || s.Volumes[0].Access != job.VolumeInput || s.Volumes[0].Path != "/data" ||
		!bytes.Equal(s.Volumes[0].Token, []byte{0xa1, 0xb2}) || s.Volumes[0].Volume[31] != 0xab {
		t.Fatalf("volumes %+v", s.Volumes)
	}
	if _, err := readJobSpec(strings.NewReader(`{"volumes":[{"access":1,"tokn":"0x01"}]}`), "-"); err == nil {
		t.Fatal("an unknown volume field was accepted")
	}
}
