"""Fee estimation as the Go SDK does it (chain/fees Intrinsic and
Schedule.Suggest, spec 002 §17.10; docs/API.md ``/v1/fees``): limits are the
intrinsic cost plus the expected execution, plus 20%, capped at the
per-transaction maxima (a plain transfer uses exactly its intrinsic cost);
``max_fee = 2 × basefee + tip``; tips default to 1 base unit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

from .instructions import Call, Deploy, Instruction, PublishLibrary, RemoveLibrary

__all__ = ["FeeEstimate", "intrinsic", "suggest", "TRANSFER_CYCLES"]

TRANSFER_CYCLES = 10_000
CALL_CYCLES = 10_000
DEPLOY_CYCLES = 50_000
DEPLOY_BASE_CELLS = 100
PUBLISH_LIB_CYCLES = 100_000
PUBLISH_LIB_PER_BYTE = 50
REMOVE_LIB_CYCLES = 10_000


@dataclass(frozen=True)
class FeeEstimate:
    cycles_limit: int
    cells_limit: int
    max_fee_per_cycle: int
    max_fee_per_cell: int
    tip_per_cycle: int
    tip_per_cell: int

    @property
    def max_fee(self) -> int:
        """limits × max fees: what the sender must be able to pay at most."""
        return self.cycles_limit * self.max_fee_per_cycle + self.cells_limit * self.max_fee_per_cell


def intrinsic(instruction: Optional[Instruction], payload_len: int) -> Tuple[int, int]:
    """Cycles and cells a transaction pays before execution (fees.Intrinsic)."""
    if instruction is None:
        return TRANSFER_CYCLES, payload_len
    if isinstance(instruction, Call):
        return CALL_CYCLES, payload_len
    if isinstance(instruction, Deploy):
        return DEPLOY_CYCLES, DEPLOY_BASE_CELLS + payload_len
    if isinstance(instruction, PublishLibrary):
        return PUBLISH_LIB_CYCLES + len(instruction.code) * PUBLISH_LIB_PER_BYTE, payload_len
    if isinstance(instruction, RemoveLibrary):
        return REMOVE_LIB_CYCLES, payload_len
    return CALL_CYCLES, payload_len


def suggest(basefee_cycle: int, basefee_cell: int, max_tx_cycles: int, max_tx_cells: int,
            expect_cycles: int, expect_cells: int, tip_cycle: int = 0, tip_cell: int = 0) -> FeeEstimate:
    """fees.Schedule.Suggest."""
    def margin(v: int, cap: int) -> int:
        return min(v + v // 5, cap)
    tip_cycle = tip_cycle or 1
    tip_cell = tip_cell or 1
    return FeeEstimate(
        cycles_limit=margin(expect_cycles, max_tx_cycles),
        cells_limit=margin(expect_cells, max_tx_cells),
        max_fee_per_cycle=2 * basefee_cycle + tip_cycle,
        max_fee_per_cell=2 * basefee_cell + tip_cell,
        tip_per_cycle=tip_cycle,
        tip_per_cell=tip_cell,
    )
