"""The asyncio client against the same node: transfers, actors, errors and
the SSE stream, with several operations in flight on one event loop."""

from __future__ import annotations

import asyncio
import os

import pytest

from cowboy import AsyncClient, PrivateKey, encode_args
from cowboy import errors
from cowboy._core import created_address

from conftest import CBY, REPO

COUNTER = open(os.path.join(REPO, "examples", "counter", "counter.py"), "rb").read()


def test_async_flow(node: str) -> None:
    async def main() -> None:
        async with AsyncClient(node) as c:
            alice, bob = PrivateKey.generate(), PrivateKey.generate()
            # Two faucet requests and their receipts concurrently.
            hs = await asyncio.gather(c.faucet(alice.address, 100 * CBY), c.faucet(bob.address, 100 * CBY))
            await asyncio.gather(*(c.wait(h) for h in hs))
            assert await c.balance(alice.address) == 100 * CBY
            t = await c.transfer(alice, bob.address, 2 * CBY)
            r = await c.wait(t)
            assert r["receipt"]["status"] == "success"
            assert await c.balance(bob.address) == 102 * CBY
            acc = await c.verified_account(bob.address)
            assert acc.balance == 102 * CBY
            actor = created_address(await c.wait(await c.deploy(alice, COUNTER, salt="async-counter")))
            await c.wait(await c.call(alice, actor, "increment", encode_args(3)))
            assert await c.query(actor, "get") == 3
            with pytest.raises(errors.NotFoundError):
                await c.actor(PrivateKey.generate().address)
            with pytest.raises(errors.BadRequestError):
                await c.get("/v1/blocks/nope")
            big = await c.block("latest", receipts=True)  # a chunked or long body
            assert "header" in big
            # The stream: consecutive blocks from a past height, while other
            # requests run on the same loop.
            start = (await c.status())["height"]
            heights = []

            async def follow() -> None:
                async for b in c.subscribe(from_height=start - 1):
                    heights.append(b["header"]["height"])
                    if len(heights) == 3:
                        return

            await asyncio.wait_for(asyncio.gather(follow(), c.status(), c.fees()), 30)
            assert heights == [start - 1, start, start + 1]

    asyncio.run(main())


def test_async_transport_error() -> None:
    async def main() -> None:
        c = AsyncClient("http://127.0.0.1:1")
        with pytest.raises(errors.TransportError):
            await c.status()

    asyncio.run(main())
