package pvm

import (
	"log/slog"
	"time"
)

// Config configures an Engine. The zero value works: withDefaults fills in
// every unset field.
type Config struct {
	// Python is the CPython 3.11.x interpreter. Default: python3 from PATH,
	// resolved to the real executable.
	Python string
	// PoolSize is the number of warm zygote processes. Default 2.
	PoolSize int
	// Limits are the per-call resource limits (spec §13).
	Limits Limits
	// Costs is the cost table. If it is the zero value, DefaultCosts() is used.
	Costs CostTable
	// Logger receives worker diagnostics. Default: discard.
	Logger *slog.Logger
	// NoSandbox disables namespaces, chroot and uid switching (for hosts
	// that cannot provide them, e.g. when not running as root). Python-level
	// isolation and metering still apply.
	NoSandbox bool
	// WorkDir is where the Python sources and scratch directories live.
	// Default: a private directory under os.TempDir().
	WorkDir string
}

// Limits are per-call limits. Zero fields take the defaults below.
type Limits struct {
	MemoryBytes     uint64 // deterministic memory meter, default 10 MiB
	TmpBytes        uint64 // /tmp scratch quota, default 256 KiB (counts toward cells)
	RecursionDepth  int    // actor call depth, default 32
	MaxLiteralBytes int    // largest str/bytes literal in source, default 64 KiB
	MaxSourceBytes  int    // largest actor/library source, default 128 KiB (max_tx_size)
	MaxIntBits      int    // widest integer value, default 8192 bits
	MaxFormatWidth  int    // widest format width/precision, default 10000
	MaxReturnBytes  int    // largest encoded return value, default 1 MiB
	// Safety nets (not deterministic; exceeding them is an infrastructure error
	// or, for AddressSpaceBytes, a MemoryLimit failure).
	AddressSpaceBytes uint64        // RLIMIT_AS of a call child, default 1 GiB
	CPUSeconds        uint64        // RLIMIT_CPU of a call child, default 20
	WallClock         time.Duration // Go kills a call child after this, default 30s
}

// CostTable is the single cost table. Python operation costs are sent to
// the worker with every call; host-call costs (§17.3) and cells (§17.4)
// are charged by Go.
type CostTable struct {
	// Python operations (cycles).
	Statement  uint64 // per executed statement
	Arith      uint64 // arithmetic / unary / boolean operator
	Compare    uint64 // per comparison operator
	Call       uint64 // function or method call, function entry
	Subscript  uint64 // dict get/set, subscript
	Attribute  uint64 // attribute access
	ListAppend uint64 // per element of a list/tuple/dict display
	LoopIter   uint64 // per loop or comprehension iteration
	PerItem    uint64 // per element processed by a builtin (sum, sorted, ...)
	PerChar    uint64 // per character/byte produced or scanned by string ops
	BigIntWord uint64 // per 64-bit word of big-integer work
	RegexStep  uint64 // per estimated regex step
	JSONChar   uint64 // per character of json input/output
	MathCall   uint64 // per deterministic math function call
	HashBase   uint64 // per hash object
	HashByte   uint64 // per byte hashed

	// Host calls (cycles, §17.3).
	StorageRead    uint64
	StorageWrite   uint64
	StorageDelete  uint64
	SendMessage    uint64
	BlockInfo      uint64
	EmitEvent      uint64
	EmitEventByte  uint64
	TokenTransfer  uint64
	TokenBalanceOf uint64
	Randomness     uint64

	// Cells (§17.4).
	StateWriteCellsPerByte uint64 // per byte of key+value written
	StateReadBytesPerCell  uint64 // 0.01 cell/byte => 100 bytes per cell
	EventBytesPerCell      uint64 // 0.5 cell/byte => 2 bytes per cell
	ReturnCellsPerByte     uint64
	TmpCellsPerByte        uint64
	SendCellsPerByte       uint64 // per byte of message payload
	TransferCells          uint64
}

// DefaultCosts returns the reference cost table (spec §3.5, §17.3, §17.4).
func DefaultCosts() CostTable {
	return CostTable{
		Statement: 1, Arith: 1, Compare: 1, Call: 10, Subscript: 3, Attribute: 1,
		ListAppend: 2, LoopIter: 1, PerItem: 1, PerChar: 1, BigIntWord: 1,
		RegexStep: 1, JSONChar: 1, MathCall: 100, HashBase: 100, HashByte: 1,

		StorageRead: 10, StorageWrite: 200, StorageDelete: 200, SendMessage: 500,
		BlockInfo: 100, EmitEvent: 500, EmitEventByte: 5, TokenTransfer: 1000,
		TokenBalanceOf: 100, Randomness: 100,

		StateWriteCellsPerByte: 1, StateReadBytesPerCell: 100, EventBytesPerCell: 2,
		ReturnCellsPerByte: 1, TmpCellsPerByte: 1, SendCellsPerByte: 1, TransferCells: 64,
	}
}

// DefaultLimits returns the genesis limits (spec §3.2, §13, §12.1).
func DefaultLimits() Limits {
	return Limits{
		MemoryBytes: 10 << 20, TmpBytes: 256 << 10, RecursionDepth: 32,
		MaxLiteralBytes: 64 << 10, MaxSourceBytes: 128 << 10, MaxIntBits: 8192,
		MaxFormatWidth: 10000, MaxReturnBytes: 1 << 20,
		AddressSpaceBytes: 1 << 30, CPUSeconds: 20, WallClock: 30 * time.Second,
	}
}

// withDefaults returns c with every unset field filled in.
func (c Config) withDefaults() Config {
	if c.PoolSize <= 0 {
		c.PoolSize = 2
	}
	if c.Costs == (CostTable{}) {
		c.Costs = DefaultCosts()
	}
	d := DefaultLimits()
	l := &c.Limits
	if l.MemoryBytes == 0 {
		l.MemoryBytes = d.MemoryBytes
	}
	if l.TmpBytes == 0 {
		l.TmpBytes = d.TmpBytes
	}
	if l.RecursionDepth == 0 {
		l.RecursionDepth = d.RecursionDepth
	}
	if l.MaxLiteralBytes == 0 {
		l.MaxLiteralBytes = d.MaxLiteralBytes
	}
	if l.MaxSourceBytes == 0 {
		l.MaxSourceBytes = d.MaxSourceBytes
	}
	if l.MaxIntBits == 0 {
		l.MaxIntBits = d.MaxIntBits
	}
	if l.MaxFormatWidth == 0 {
		l.MaxFormatWidth = d.MaxFormatWidth
	}
	if l.MaxReturnBytes == 0 {
		l.MaxReturnBytes = d.MaxReturnBytes
	}
	if l.AddressSpaceBytes == 0 {
		l.AddressSpaceBytes = d.AddressSpaceBytes
	}
	if l.CPUSeconds == 0 {
		l.CPUSeconds = d.CPUSeconds
	}
	if l.WallClock == 0 {
		l.WallClock = d.WallClock
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// workerLimits is the limit map sent to the worker.
func (l Limits) workerLimits() map[string]int64 {
	return map[string]int64{
		"memory_bytes":      int64(l.MemoryBytes),
		"tmp_bytes":         int64(l.TmpBytes),
		"recursion_depth":   int64(l.RecursionDepth),
		"max_literal_bytes": int64(l.MaxLiteralBytes),
		"max_source_bytes":  int64(l.MaxSourceBytes),
		"max_int_bits":      int64(l.MaxIntBits),
		"max_format_width":  int64(l.MaxFormatWidth),
		"max_return_bytes":  int64(l.MaxReturnBytes),
		"c_recursion":       400,
	}
}

// workerCosts is the Python-operation part of the cost table, as sent to the worker.
func (c CostTable) workerCosts() map[string]uint64 {
	return map[string]uint64{
		"stmt": c.Statement, "arith": c.Arith, "compare": c.Compare, "call": c.Call,
		"subscript": c.Subscript, "attribute": c.Attribute, "list_append": c.ListAppend,
		"loop_iter": c.LoopIter, "per_item": c.PerItem, "per_char": c.PerChar,
		"big_word": c.BigIntWord, "regex_step": c.RegexStep, "json_char": c.JSONChar,
		"math_call": c.MathCall, "hash_base": c.HashBase, "hash_byte": c.HashByte,
	}
}
