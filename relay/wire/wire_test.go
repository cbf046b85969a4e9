package wire

import (
	"bytes"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	req := &Request{Op: OpPut, Volume: [32]byte{1}, ID: [32]byte{2}, Size: 10, Time: 5, Token: []byte{1, 2}, Sig: []byte{3}}
	var buf bytes.Buffer
	if err := WriteFrame(&buf, req); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRequest(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !Equal(req, got) {
		t.Fatalf("round trip mismatch %+v", got)
	}
	h1 := req.SigningHash()
	req.Sig = []byte{4}
	if req.SigningHash() != h1 {
		t.Fatal("signing hash depends on Sig")
	}
	req.Offset = 1
	if req.SigningHash() == h1 {
		t.Fatal("signing hash ignores Offset")
	}
}

func FuzzReadRequest(f *testing.F) {
	var buf bytes.Buffer
	WriteFrame(&buf, &Request{Op: OpGet, Length: 7, Token: []byte("tok")})
	f.Add(buf.Bytes())
	f.Add([]byte{0, 0, 0, 1, 0xa0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := ReadRequest(bytes.NewReader(b))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := WriteFrame(&out, req); err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		again, err := ReadRequest(&out)
		if err != nil || !Equal(req, again) {
			t.Fatalf("unstable round trip: %v", err)
		}
		var resp Response
		_ = Unmarshal(b[min(len(b), 4):], &resp)
	})
}
