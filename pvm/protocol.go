package pvm

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/big"

	"github.com/fxamacker/cbor/v2"
)

// maxFrame bounds a single protocol frame.
const maxFrame = 64 << 20

// callMsg is the first frame Go sends to a call child.
type callMsg struct {
	Op          string            `cbor:"op"`
	Code        []byte            `cbor:"code"`
	Libs        map[string][]byte `cbor:"libs,omitempty"`
	Handler     string            `cbor:"handler,omitempty"`
	Payload     []byte            `cbor:"payload,omitempty"`
	Actor       []byte            `cbor:"actor,omitempty"`
	Caller      []byte            `cbor:"caller,omitempty"`
	Origin      []byte            `cbor:"origin,omitempty"`
	Value       *big.Int          `cbor:"value,omitempty"`
	CyclesLimit uint64            `cbor:"cycles_limit"`
	Depth       int               `cbor:"depth"`
	ReadOnly    bool              `cbor:"read_only"`
	Init        bool              `cbor:"init"`
	Deploying   bool              `cbor:"deploying,omitempty"`
	Limits      map[string]int64  `cbor:"limits"`
	Costs       map[string]uint64 `cbor:"costs"`
}

// childMsg is any frame a call child sends.
type childMsg struct {
	T   string `cbor:"t"`
	Pid int    `cbor:"pid,omitempty"`
	HostRequest
	OK      bool     `cbor:"ok,omitempty"`
	Ret     []byte   `cbor:"ret,omitempty"`
	Kind    string   `cbor:"kind,omitempty"`
	Msg     string   `cbor:"msg,omitempty"`
	Cycles  uint64   `cbor:"cycles,omitempty"`
	Tmp     uint64   `cbor:"tmp,omitempty"`
	Mem     uint64   `cbor:"mem,omitempty"`
	Imports []string `cbor:"imports,omitempty"`
	Line    int      `cbor:"line,omitempty"`
	Col     int      `cbor:"col,omitempty"`
	Rule    string   `cbor:"rule,omitempty"`
}

// codec holds the canonical CBOR modes used on the wire.
type codec struct {
	enc cbor.EncMode
	dec cbor.DecMode
}

func newCodec() (*codec, error) {
	eo := cbor.CoreDetEncOptions()
	eo.BigIntConvert = cbor.BigIntConvertShortest
	enc, err := eo.EncMode()
	if err != nil {
		return nil, fmt.Errorf("pvm: cbor enc mode: %w", err)
	}
	dec, err := cbor.DecOptions{MaxArrayElements: 1 << 24, MaxMapPairs: 1 << 24, MaxNestedLevels: 128,
		DefaultByteStringType: nil}.DecMode()
	if err != nil {
		return nil, fmt.Errorf("pvm: cbor dec mode: %w", err)
	}
	return &codec{enc: enc, dec: dec}, nil
}

func (c *codec) writeFrame(w io.Writer, v any) error {
	b, err := c.enc.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode frame: %w", err)
	}
	if len(b) > maxFrame {
		return fmt.Errorf("frame of %d bytes exceeds limit: %w", len(b), ErrProtocol)
	}
	buf := make([]byte, 4+len(b))
	binary.BigEndian.PutUint32(buf, uint32(len(b)))
	copy(buf[4:], b)
	_, err = w.Write(buf)
	return err
}

func (c *codec) readFrame(r io.Reader, v any) error {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxFrame {
		return fmt.Errorf("frame of %d bytes exceeds limit: %w", n, ErrProtocol)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return err
	}
	if err := c.dec.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode frame: %v: %w", err, ErrProtocol)
	}
	return nil
}
