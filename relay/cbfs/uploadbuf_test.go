package cbfs

import (
	"bytes"
	"testing"
)

// TestUploadBufferFollowsFileSize: a small file's upload buffers only
// about what it holds. Before, the first Write allocated (and zeroed) a
// whole segment, 4 MiB by default, for every file: 8% of a small-file
// tar -x's CPU on the mount.
func TestUploadBufferFollowsFileSize(t *testing.T) {
	const seg = 4 << 20
	u := &Upload{segSz: seg}
	if _, err := u.Write(make([]byte, 1024)); err != nil {
		t.Fatal(err)
	}
	if c := cap(u.buf); c > minSegBuf {
		t.Fatalf("1 KiB written: buffer of %d bytes, want at most %d", c, minSegBuf)
	}
	// Growing keeps the content, doubles and stops at the segment size.
	want := bytes.Repeat([]byte{1, 2, 3}, (seg-1024-1)/3)
	for off := 0; off < len(want); off += 100_000 {
		if _, err := u.Write(want[off:min(off+100_000, len(want))]); err != nil {
			t.Fatal(err)
		}
	}
	if len(u.buf) != 1024+len(want) || !bytes.Equal(u.buf[1024:], want) || cap(u.buf) > seg {
		t.Fatalf("buffer of %d bytes (cap %d) after writing %d", len(u.buf), cap(u.buf), 1024+len(want))
	}
}
